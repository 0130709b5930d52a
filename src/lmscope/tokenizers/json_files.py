"""Reading a tokenizer's JSON file (chars.json, tokenizer.json, vocab.json): one way to find
it in a folder and one TokenizerError line, naming the file, for what cannot be read."""

from __future__ import annotations

import json
from os import PathLike
from pathlib import Path

from lmscope.errors import TokenizerError


def file_in(path: str | PathLike[str], name: str) -> Path:
    """``path`` itself, or the file ``name`` inside it when ``path`` is a folder."""
    path = Path(path)
    return path / name if path.is_dir() else path


def read_json(path: Path, what: str) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise TokenizerError(f"cannot read {what} {path}: {err}") from None
