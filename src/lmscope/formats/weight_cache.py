"""A cache of converted weights: float32 safetensors plus a small JSON, one folder per source.

    <root>/<kind>/<sha256 of the source file>/
      tensors.safetensors     the tensors, float32
      meta.json               config, tokenizer fields, ..., and the checksum of tensors.safetensors

``<root>`` is ``$LMSCOPE_CACHE`` if set, else ``$XDG_CACHE_HOME/lmscope``, else
``~/.cache/lmscope``. An entry is written whole or not at all (``lmscope.formats.atomic``: a
temporary sibling folder, flushed, then renamed into place), and read only after its checksum
matches, so a killed write or a damaged file is never trusted: the caller rebuilds the entry.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from lmscope.formats.atomic import readable, write_folder

CACHE_ENV = "LMSCOPE_CACHE"
TENSORS_FILE = "tensors.safetensors"
META_FILE = "meta.json"
_CHUNK = 8 << 20


def cache_root() -> Path:
    """The user's cache folder for lmscope (it may not exist yet)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "lmscope"


def sha256_file(path: str | os.PathLike) -> str:
    """Hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def read_entry(
    folder: str | os.PathLike, on_meta: Callable[[dict[str, Any]], object] | None = None
) -> tuple[dict[str, Any], dict[str, torch.Tensor]] | None:
    """(meta, tensors) from a cache entry, or None if it is absent, incomplete or damaged.
    ``on_meta(meta)`` is told the entry's meta before its tensors' checksum is computed (the
    slow part), so a caller can start work from it meanwhile."""
    try:
        folder = readable(folder)
        meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
        if not isinstance(meta, dict):
            return None
        tensors_file = folder / TENSORS_FILE
        if tensors_file.stat().st_size != meta.get("tensors_bytes"):
            return None
        if on_meta is not None:
            on_meta(meta)
        if sha256_file(tensors_file) != meta.get("tensors_sha256"):
            return None
        tensors = load_file(str(tensors_file))
    except Exception:  # anything wrong with an entry means: rebuild it
        return None
    if any(t.dtype != torch.float32 for t in tensors.values()):
        return None
    return meta, tensors


def write_entry(
    folder: str | os.PathLike, meta: dict[str, Any], tensors: dict[str, torch.Tensor]
) -> str | None:
    """Write a cache entry atomically. Returns None, or why it could not be written (then
    nothing of it is left behind); a cache that cannot be written never fails a load."""

    def fill(tmp: Path) -> None:
        target = tmp / TENSORS_FILE
        save_file({k: v.contiguous() for k, v in tensors.items()}, str(target))
        full = {
            **meta,
            "tensors_bytes": target.stat().st_size,
            "tensors_sha256": sha256_file(target),
        }
        (tmp / META_FILE).write_text(json.dumps(full), encoding="utf-8")

    try:
        write_folder(Path(folder), fill)
    except Exception as err:  # full disk, read-only folder, a concurrent writer, ...
        text = str(err).strip().splitlines()
        return (text[0] if text else type(err).__name__)[:200]
    return None
