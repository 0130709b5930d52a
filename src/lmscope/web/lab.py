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
from typing import Literal

from pydantic import BaseModel

from lmscope.errors import InvalidInputError, LmscopeError
from lmscope.lab.results import RESULT_FILE, machine_line, package_json, plot_name, read_result
from lmscope.web.errors import NotFound

# The lesson's order. Each command reproduces the experiment; the first is the quickest.
EXPERIMENTS: dict[str, list[tuple[str, str, str]]] = {
    "serial-depth": [
        (
            "lmscope lab serial-depth --quick",
            "quick: about 35 s on 2 idle cores",
            "快速版：2 核空闲时约 35 秒",
        ),
        (
            "lmscope lab serial-depth --threads 1 --clock cpu --repeats 5",
            "as the shipped example was measured (minutes)",
            "与随附示例相同的测量方式（需几分钟）",
        ),
    ],
    "memory-wall": [
        (
            "lmscope lab memory-wall --threads 1 --clock cpu --budget 4GiB",
            "as the shipped example was measured (stops where 4 GiB runs out)",
            "与随附示例相同的测量方式（在 4 GiB 用完处停止）",
        ),
    ],
    "race": [
        ("lmscope race", "about 10 min on 2 cores", "2 核约 10 分钟"),
        (
            "lmscope race --threads 1 --clock cpu",
            "as the shipped example was measured: CPU time, steady on a busy machine",
            "与随附示例相同：按 CPU 时间计，机器繁忙时也稳定",
        ),
        ("lmscope race --device cuda --batch 64", "on an NVIDIA GPU", "在 NVIDIA GPU 上"),
    ],
    "gradient-flow": [
        (
            "lmscope lab gradients",
            "quick: gradient norms k steps back, at initialisation only",
            "快速版：只测刚初始化的模型，k 步之前的梯度范数",
        ),
        (
            "lmscope lab gradients --state both --train-iters 500 --threads 1",
            "as the shipped example was measured: also after 500 training steps per model",
            "与随附示例相同：每个模型再训练 500 步后也测一次",
        ),
    ],
    "recall": [
        (
            "lmscope lab recall --quick --threads 1",
            "quick: one size, a shorter task (under 2 minutes on 2 cores)",
            "快速版：一个规模、较短的任务（2 核不到 2 分钟）",
        ),
        (
            "lmscope lab recall --budget none --threads 1",
            "as the shipped example was measured: three sizes, every model trains every step "
            "(about 8 minutes on 2 cores)",
            "与随附示例相同：三个规模，每个模型都训练满全部步数（2 核约 8 分钟）",
        ),
    ],
}
SOURCES = ("shipped", "local")
_PLOT_NAME = re.compile(r"[A-Za-z0-9_.-]+\.(png|svg)")


class Command(BaseModel):
    command: str
    note: dict[str, str]


class SourceInfo(BaseModel):
    source: Literal["shipped", "local"]
    created: str | None
    machine: str  # the hardware line, as the plots' footnote names it
    # the languages its figures were drawn in: "zh" when every plot has its <stem>.zh.png and
    # .zh.svg (results made before lmscope drew Chinese figures have only "en")
    figures: list[Literal["en", "zh"]]


class LabEntry(BaseModel):
    name: str
    title: dict[str, str]
    sources: list[SourceInfo]
    commands: list[Command]


class ZhWords(BaseModel):
    """Chinese for the table headers and text cells result files keep in English only: the
    same file (lab/zh_words.json) ``lmscope lab show --lang zh`` reads."""

    headers: dict[str, str]
    same_headers: str  # a regular expression: headers that read the same in Chinese
    cells: list[tuple[str, str, Literal["whole", "all"]]]  # (pattern, Chinese with $1, how)


class LabIndex(BaseModel):
    results: list[LabEntry]
    local_dir: str  # where the server looks for the user's own results
    zh: ZhWords


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
            raise InvalidInputError(f"source must be shipped or local, got {source!r}")
        if name not in self.names():
            known = ", ".join(self.names())
            raise NotFound(f"no lab experiment named {name!r}; known: {known}")
        folder = self.roots[source] / name
        return folder if (folder / RESULT_FILE).is_file() else None

    def read(self, name: str, source: str) -> dict:
        folder = self.folder(name, source)
        if folder is None:
            hint = f"run it with: {EXPERIMENTS[name][0][0]}" if name in EXPERIMENTS else ""
            raise NotFound(f"no {source} result for {name!r} yet; {hint}".rstrip("; "))
        return read_result(folder)

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
            raise NotFound(f"{name} ({source}) has no plot named {file!r}")
        folder = self.folder(name, source)
        path = folder / file
        if not path.is_file():  # an older result: no Chinese figure, the English one instead
            path = folder / english[file]
        if not path.is_file():
            raise NotFound(f"{name} ({source}) has no plot named {file!r}")
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
                        machine=machine_line(hw) if hw else "unknown",
                        figures=self.figure_langs(doc, self.folder(name, source)),
                    )
                )
            if not sources and name not in EXPERIMENTS:
                continue
            commands = [
                Command(command=c, note={"en": en, "zh": zh})
                for c, en, zh in EXPERIMENTS.get(name, [])
            ]
            entries.append(
                LabEntry(
                    name=name,
                    title=title or {"en": name, "zh": name},
                    sources=sources,
                    commands=commands,
                )
            )
        return LabIndex(
            results=entries,
            local_dir=str(self.roots["local"].resolve()),
            zh=ZhWords(**package_json("zh_words.json")),
        )


def _plot_files(doc: dict) -> set[str]:
    """The plot files a result names (its English figures), each a plain file name."""
    return {
        f
        for s in doc.get("sections", [])
        if isinstance(s.get("plot"), dict)
        for f in s["plot"].values()
        if isinstance(f, str) and _PLOT_NAME.fullmatch(f)
    }
