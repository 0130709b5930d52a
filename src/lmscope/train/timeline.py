"""Samples over training: the same prime and seed at chosen iterations (``--sample-at``).

Karpathy showed a War and Peace LSTM's samples turning from noise into spaced "words", then
words, then sentences. A timeline keeps such samples with the run: one entry per iteration,
written into the checkpoint folder as ``timeline.json`` (for programs and pages) and
``timeline.md`` (to read). Every entry is drawn with the same seed, prime and length, so the
only thing that changes between them is the model.
"""

from __future__ import annotations

import json
from pathlib import Path

from lmscope import i18n
from lmscope.errors import CheckpointError

TIMELINE_JSON = "timeline.json"
TIMELINE_MD = "timeline.md"
LOSSES = ("train_loss", "val_loss")


def entry(iteration: int, text: str, train_loss: float | None, val_loss: float | None) -> dict:
    return {"iteration": iteration, "train_loss": train_loss, "val_loss": val_loss, "text": text}


def add(entries: list[dict], new: dict) -> list[dict]:
    """The entries with ``new`` in iteration order (replacing one at the same iteration, as a
    resumed run re-draws the sample it had not saved yet)."""
    kept = [e for e in entries if e["iteration"] != new["iteration"]]
    return sorted([*kept, new], key=lambda e: e["iteration"])


def files(entries: list[dict], info: dict) -> dict[str, bytes]:
    """timeline.json and timeline.md for ``entries``; ``info`` describes how they were drawn
    (arch, corpus, prime, seed, length)."""
    data = {"format": "lmscope-timeline", **info, "samples": entries}
    return {
        TIMELINE_JSON: json.dumps(data, indent=1, ensure_ascii=False).encode("utf-8"),
        TIMELINE_MD: markdown(entries, info).encode("utf-8"),
    }


def markdown(entries: list[dict], info: dict, lang: str = "en") -> str:
    """timeline.md: the run's samples, oldest first, in ``lang`` (English, as written to the
    run folder, or any language of the catalog)."""

    def say(message_id: str, **values) -> str:
        return i18n.text(message_id, lang, **values)

    intro = say(
        "report.timeline.intro",
        arch=info["arch"] if "arch" in info else say("report.timeline.model"),
        corpus=info.get("corpus", "?"),
        length=info.get("length"),
        prime=repr(info.get("prime", "")),
        seed=str(info.get("seed")),
    )
    lines = [f"# {say('report.timeline.title')}", "", intro]
    for e in entries:
        i = e["iteration"]
        train, val = (None if e.get(k) is None else f"{e[k]:.3f}" for k in LOSSES)
        if train is not None and val is not None:
            heading = say("report.timeline.iteration-losses", i=i, train=train, val=val)
        elif train is not None:
            heading = say("report.timeline.iteration-train", i=i, train=train)
        elif val is not None:
            heading = say("report.timeline.iteration-val", i=i, val=val)
        else:
            heading = say("report.timeline.iteration", i=i)
        fence = "~~~~" if "```" in e["text"] else "```"
        lines += ["", f"## {heading}", "", f"{fence}text", e["text"], fence]
    return "\n".join(lines) + "\n"


def folder_of(name: str) -> Path | None:
    """The model folder a name (a shipped model, or a folder) stands for; None if neither."""
    from lmscope.engine.loading import ASSET_MODELS, shipped_models

    if name in shipped_models():
        return ASSET_MODELS / name
    path = Path(name).expanduser()
    return path if path.is_dir() else None


def read(folder: Path) -> dict | None:
    """The timeline a model folder keeps (``timeline.json``), or None when it has none."""
    path = Path(folder) / TIMELINE_JSON
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CheckpointError("error.timeline.unreadable", path=str(path), why=str(err)) from None
    if not isinstance(data, dict) or data.get("format") != "lmscope-timeline":
        raise CheckpointError("error.timeline.not-timeline", path=str(path))
    return data
