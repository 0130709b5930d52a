"""What the "Why Transformers" page (``/why``, ``web.routers.lab``) shows: the lab's saved
results (serial depth, memory wall, the race, gradient flow, recall) as JSON, and their plots.

Two sources of results:

- ``shipped``: the examples that come with lmscope, measured when it was built (each file
  names its hardware);
- ``local``: results the user made on their own machine with the CLI, read from
  ``<results_dir>/<name>``; ``results_dir`` defaults to ``./lmscope-results`` of the folder
  the server started in, which is where every experiment writes by default.

Nothing is re-run by the server: the page shows the exact command that re-runs an
experiment on the user's machine (with its progress bar in the terminal), and the new result
appears here on reload. Only known experiment names, and only the plot files a result names
(or their Chinese siblings, ``<stem>.zh.png`` beside ``<stem>.png``: ``plot_name``), are served,
so no request can reach another file. A result written before lmscope drew Chinese figures has
no siblings: the page shows its English figures, and a request for a missing sibling gets the
English file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from lmscope.errors import InvalidInputError, LmscopeError
from lmscope.lab.results import (
    RESULT_FILE,
    column_label,
    machine_line,
    plot_name,
    read_result,
    say,
)
from lmscope.web.errors import NotFound

# The lesson's order. Each command reproduces the experiment; the first is the quickest. The
# note says what it takes (a catalog id).
EXPERIMENTS: dict[str, list[tuple[str, str]]] = {
    "serial-depth": [
        ("lmscope lab serial-depth --quick", "lab.rerun.serial-depth-quick"),
        (
            "lmscope lab serial-depth --threads 1 --clock cpu --repeats 5",
            "lab.rerun.serial-depth-shipped",
        ),
    ],
    "memory-wall": [
        (
            "lmscope lab memory-wall --threads 1 --clock cpu --budget 4GiB",
            "lab.rerun.memory-wall-shipped",
        ),
    ],
    "race": [
        ("lmscope race", "lab.rerun.race"),
        ("lmscope race --threads 1 --clock cpu", "lab.rerun.race-shipped"),
        ("lmscope race --device cuda --batch 64", "lab.rerun.race-gpu"),
    ],
    "gradient-flow": [
        ("lmscope lab gradients", "lab.rerun.gradients-quick"),
        (
            "lmscope lab gradients --state both --train-iters 500 --threads 1",
            "lab.rerun.gradients-shipped",
        ),
    ],
    "recall": [
        ("lmscope lab recall --quick --threads 1", "lab.rerun.recall-quick"),
        ("lmscope lab recall --budget none --threads 1", "lab.rerun.recall-shipped"),
    ],
}
SOURCES = ("shipped", "local")
_PLOT_NAME = re.compile(r"[A-Za-z0-9_.-]+\.(png|svg)")


# A text of a result file, as the page gets it: a catalog id and its values ({"id", "values"},
# values that are texts themselves), a list of such texts (sentences), a name, or, in a file
# written before the catalog, an {"en", "zh"} pair. The page says it in its language
# (why.js's said, lmscope.lab.results.shown in Python).
Said = Any


class Command(BaseModel):
    command: str
    note: Said


class SourceInfo(BaseModel):
    source: Literal["shipped", "local"]
    created: str | None
    machine: Said  # the hardware, as the plots' footnote names it
    # the languages its figures were drawn in: "zh" when every plot has its <stem>.zh.png and
    # .zh.svg (results made before lmscope drew Chinese figures have only "en")
    figures: list[Literal["en", "zh"]]


class LabEntry(BaseModel):
    name: str
    title: Said
    sources: list[SourceInfo]
    commands: list[Command]


class LabIndex(BaseModel):
    results: list[LabEntry]
    local_dir: str  # where the server looks for the user's own results


def shipped_root() -> Path:
    from importlib import resources

    return Path(str(resources.files("lmscope") / "assets" / "lab"))


class LabResults:
    """Finds and reads results by (name, source); never builds a path from other input."""

    def __init__(self, results_dir: str | Path | None = None, shipped: Path | None = None):
        self.roots = {
            "shipped": Path(shipped) if shipped is not None else shipped_root(),
            # fixed when the server starts, whatever the process's folder later becomes
            "local": Path(results_dir if results_dir is not None else "lmscope-results").absolute(),
        }

    def names(self) -> list[str]:
        """Known experiments first, in the lesson's order, then any other shipped result."""
        root = self.roots["shipped"]
        others = sorted(
            p.name
            for p in (root.iterdir() if root.is_dir() else ())
            if p.name not in EXPERIMENTS and (p / RESULT_FILE).is_file()
        )
        return [*EXPERIMENTS, *others]

    def folder(self, name: str, source: str) -> Path | None:
        if source not in SOURCES:
            raise InvalidInputError("error.lab.web.source", source=source)
        if name not in self.names():
            known = ", ".join(self.names())
            raise NotFound("error.lab.web.no-experiment", name=name, known=known)
        folder = self.roots[source] / name
        return folder if (folder / RESULT_FILE).is_file() else None

    def read(self, name: str, source: str) -> dict:
        folder = self.folder(name, source)
        if folder is None:
            if name in EXPERIMENTS:
                command = EXPERIMENTS[name][0][0]
                raise NotFound(
                    "error.lab.web.no-result-run", source=source, name=name, command=command
                )
            raise NotFound("error.lab.web.no-result", source=source, name=name)
        return with_headers(read_result(folder))

    @staticmethod
    def figure_langs(doc: dict, folder: Path) -> list[str]:
        """English, and Chinese where every plot the result names has its Chinese sibling."""
        named = _plot_files(doc)
        drawn = named and all((folder / plot_name(f, "zh")).is_file() for f in named)
        return ["en", "zh"] if drawn else ["en"]

    def plot(self, name: str, source: str, file: str) -> Path:
        """A plot file named by the result itself, or the Chinese sibling of one (so only its
        own figures are served); a sibling that was never drawn is answered with the English
        file."""
        named = _plot_files(self.read(name, source))
        english = {plot_name(f, "zh"): f for f in named} | {f: f for f in named}
        if file not in english:
            raise NotFound("error.lab.web.no-plot", name=name, source=source, file=file)
        folder = self.folder(name, source)
        path = folder / file
        if not path.is_file():  # an older result: no Chinese figure, the English one instead
            path = folder / english[file]
        if not path.is_file():
            raise NotFound("error.lab.web.no-plot", name=name, source=source, file=file)
        return path

    def index(self) -> LabIndex:
        entries = []
        for name in self.names():
            sources, title = [], None
            for source in SOURCES:
                if self.folder(name, source) is None:
                    continue
                try:
                    doc = self.read(name, source)
                except LmscopeError:
                    continue  # a damaged local file: leave it out rather than break the page
                title = title or doc.get("title")
                hw = doc.get("hardware")
                sources.append(
                    SourceInfo(
                        source=source,
                        created=doc.get("created"),
                        machine=machine_line(hw) if hw else say("lab.unknown-machine"),
                        figures=self.figure_langs(doc, self.folder(name, source)),
                    )
                )
            if not sources and name not in EXPERIMENTS:
                continue
            commands = [Command(command=c, note=say(note)) for c, note in EXPERIMENTS.get(name, [])]
            entries.append(
                LabEntry(
                    name=name,
                    title=title or name,
                    sources=sources,
                    commands=commands,
                )
            )
        return LabIndex(results=entries, local_dir=str(self.roots["local"].resolve()))


def with_headers(doc: dict) -> dict:
    """The result with every column header a text the page can say: a file written before the
    catalog named its headers in English, said now by its table's catalog id."""
    for section in doc.get("sections") or []:
        if isinstance(section, dict):
            for column in section.get("columns") or []:
                if isinstance(column, dict):
                    column["label"] = column_label(section.get("key"), column)
    return doc


def _plot_files(doc: dict) -> set[str]:
    """The plot files a result names (its English figures), each a plain file name."""
    return {
        f
        for s in doc.get("sections", [])
        if isinstance(s.get("plot"), dict)
        for f in s["plot"].values()
        if isinstance(f, str) and _PLOT_NAME.fullmatch(f)
    }
