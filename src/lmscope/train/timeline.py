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

from lmscope.errors import CheckpointError

TIMELINE_JSON = "timeline.json"
TIMELINE_MD = "timeline.md"


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


# The words of timeline.md in each language; the layout is the same.
_WORDS = {
    "en": {
        "title": "# Samples over training",
        "intro": "{arch} on {corpus}: {length} tokens after the prime {prime!r}, seed {seed}, "
        "drawn the same way at every iteration listed, so only the weights differ.",
        "model": "model",
        "heading": "## Iteration {iteration:,}",
        "losses": " ({losses})",
        "join": ", ",
        "train": "train loss",
        "val": "val loss",
    },
    "zh": {
        "title": "# 训练过程中的采样",
        "intro": "{arch}，训练于 {corpus}：在开头 {prime!r} 之后生成 {length} 个 token，种子 "
        "{seed}；下面每次迭代都用同样的方式抽取，所以只有权重不同。",
        "model": "模型",
        "heading": "## 第 {iteration:,} 次迭代",
        "losses": "（{losses}）",
        "join": "，",
        "train": "训练损失",
        "val": "验证损失",
    },
}


def markdown(entries: list[dict], info: dict, lang: str = "en") -> str:
    """timeline.md: the run's samples, oldest first (``lang`` "en", as written to the run
    folder, or "zh")."""
    words = _WORDS[lang]
    intro = words["intro"].format(
        arch=info.get("arch", words["model"]),
        corpus=info.get("corpus", "?"),
        length=info.get("length"),
        prime=info.get("prime", ""),
        seed=info.get("seed"),
    )
    lines = [words["title"], "", intro]
    for e in entries:
        losses = [
            f"{words[name]} {e[key]:.3f}"
            for name, key in (("train", "train_loss"), ("val", "val_loss"))
            if e.get(key) is not None
        ]
        heading = words["heading"].format(iteration=e["iteration"])
        if losses:
            heading += words["losses"].format(losses=words["join"].join(losses))
        fence = "~~~~" if "```" in e["text"] else "```"
        lines += ["", heading, "", f"{fence}text", e["text"], fence]
    return "\n".join(lines) + "\n"


def folder_of(name_or_source: str) -> Path | None:
    """The model folder a name (a shipped model, or a folder) or a loaded model's ``source``
    ("shipped model warpeace-lstm", or the folder's path) stands for; None if neither."""
    from lmscope.engine.loading import ASSET_MODELS, shipped_models

    name = name_or_source.removeprefix("shipped model ")
    if name in shipped_models():
        return ASSET_MODELS / name
    path = Path(name_or_source).expanduser()
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
