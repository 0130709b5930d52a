"""Reading a tokenizer's JSON file (chars.json, tokenizer.json, vocab.json): one way to find
it in a folder and one TokenizerError line, naming the file, for what cannot be read."""

from __future__ import annotations

import json
from collections.abc import Iterator
from os import PathLike
from pathlib import Path

from lmscope.errors import TokenizerError


def file_in(path: str | PathLike[str], name: str) -> Path:
    """``path`` itself, or the file ``name`` inside it when ``path`` is a folder."""
    path = Path(path)
    return path / name if path.is_dir() else path


def read_json(path: Path, what: object) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise TokenizerError(
            "error.tokenizer.cannot-read", what=what, file=str(path), why=str(err)
        ) from None


def steps_of(spec: object, kind: str, key: str) -> Iterator[dict]:
    """The steps of a tokenizer.json normalizer / pre-tokenizer / decoder / post-processor
    (``kind``), with Sequences (their list under ``key``) opened up; none for null."""
    if spec is None:
        return
    if not isinstance(spec, dict):
        raise TokenizerError("error.tokenizer.step-not-object", kind=kind, got=repr(spec))
    if spec.get("type") == "Sequence":
        for inner in spec.get(key) or []:
            yield from steps_of(inner, kind, key)
    else:
        yield spec
