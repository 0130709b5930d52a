"""A cache of converted weights: float32 safetensors plus a small JSON, one folder per source.

    <root>/<kind>/<sha256 of the source file>/
      tensors.safetensors     the tensors, float32
      meta.json               config, tokenizer fields, ..., and the checksum of tensors.safetensors
      verified.json           the stamp of tensors.safetensors when its checksum last matched
    <root>/sources/<hash of a source's path>.json
                              the source's sha256, with the stamp of the file it was read from

``<root>`` is ``$LMSCOPE_CACHE`` if set, else ``$XDG_CACHE_HOME/lmscope``, else
``~/.cache/lmscope``. An entry is written whole or not at all (``lmscope.formats.atomic``: a
temporary sibling folder, flushed, then renamed into place), and read only after its checksum
matches, so a killed write or a damaged file is never trusted: the caller rebuilds the entry.

Reading every byte of a file for its sha256 took most of a cached start (4 s of 5 for Gemma 3
270M: its 240 MB GGUF and the 1 GB of float32 tensors). So a file's checksum is computed once
and kept with its *stamp*: device, inode, size, modification and change times (nanoseconds),
and the sha256 of its first and last MiB and 64 blocks spread between. While the stamp is the
same, the checksum is the kept one. Any write to a file moves its change time (on Linux and
macOS; Windows reports the creation time there), which no program can set back (touch, cp -p
and rsync restore the modification time only), and a file replaced by another has another
inode or size; a file edited within the same clock tick as the check (on a file system with
coarse times) still changes the sampled blocks unless the edit misses all of them.
``$LMSCOPE_VERIFY_CACHE=1`` (or ``verify=True``) reads every byte again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from lmscope.formats.atomic import readable, write_folder

CACHE_ENV = "LMSCOPE_CACHE"
VERIFY_ENV = "LMSCOPE_VERIFY_CACHE"  # set to 1: every checksum read in full, every time
TENSORS_FILE = "tensors.safetensors"
META_FILE = "meta.json"
STAMP_FILE = "verified.json"
SOURCES = "sources"
_CHUNK = 8 << 20
_SAMPLES, _SAMPLE_BYTES, _END_BYTES = 64, 64 << 10, 1 << 20


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


def verify_all() -> bool:
    """Whether ``$LMSCOPE_VERIFY_CACHE`` asks for every checksum to be read in full."""
    return os.environ.get(VERIFY_ENV, "").strip() not in ("", "0")


def file_stamp(path: str | os.PathLike) -> list:
    """What says a file is still the one a checksum was computed from: device, inode, size,
    modification and change times, and the sha256 of sampled blocks (the module's docstring)."""
    return [*_stat_stamp(path), _sampled(path)]


def _stat_stamp(path: str | os.PathLike) -> list[int]:
    st = os.stat(path)
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _sampled(path: str | os.PathLike) -> str:
    """sha256 of the size, the first and last MiB, and 64 blocks of 64 KiB evenly between."""
    size = os.stat(path).st_size
    spots = [(0, _END_BYTES), (max(0, size - _END_BYTES), _END_BYTES)]
    spots += [(size * i // (_SAMPLES + 1), _SAMPLE_BYTES) for i in range(1, _SAMPLES + 1)]
    with open(path, "rb") as f:
        # one read per block, then one hash of them all: each read or hash of a large buffer
        # lets go of the interpreter's lock, and a load runs a tokenizer's thread beside this
        blocks = [str(size).encode()]
        for offset, length in spots:
            f.seek(offset)
            blocks.append(f.read(length))
    return hashlib.sha256(b"".join(blocks)).hexdigest()


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _write_json(path: Path, data: dict) -> None:
    """Write ``path`` whole (a temporary sibling renamed over it); a cache that cannot be
    written is only slower next time, so any failure is ignored."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


def _checksum(path: Path, kept: Path, verify: bool) -> str:
    """sha256 of the file ``path``: the one kept in ``kept`` while the file's stamp is the
    same, else read in full and kept there with the stamp taken before the reading (a file
    that changes while it is read gets a stamp that no longer matches)."""
    stamp = file_stamp(path)
    if not verify and not verify_all():
        known = _read_json(kept)
        if isinstance(known, dict) and known.get("stamp") == stamp:
            digest = known.get("sha256")
            if isinstance(digest, str) and len(digest) == 64:
                return digest
    digest = sha256_file(path)
    _write_json(kept, {"file": str(path), "stamp": stamp, "sha256": digest})
    return digest


def source_sha256(
    path: str | os.PathLike, root: str | os.PathLike | None = None, *, verify: bool = False
) -> str:
    """The sha256 of the source file ``path`` (the name of its cache entries), read in full
    only when the file's stamp differs from the one kept under ``root/sources`` (or with
    ``verify``)."""
    path = Path(path).absolute()
    root = Path(root) if root is not None else cache_root()
    name = hashlib.sha256(os.fsencode(path)).hexdigest()[:40]
    return _checksum(path, root / SOURCES / f"{name}.json", verify)


def read_entry(
    folder: str | os.PathLike,
    on_meta: Callable[[dict[str, Any]], object] | None = None,
    *,
    verify: bool = False,
) -> tuple[dict[str, Any], dict[str, torch.Tensor]] | None:
    """(meta, tensors) from a cache entry, or None if it is absent, incomplete or damaged.
    ``on_meta(meta)`` is told the entry's meta before its tensors are checked and read, so a
    caller can start work from it meanwhile. The tensors' checksum is read in full when their
    file's stamp is not the one kept when it last matched (or with ``verify``)."""
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
        if _checksum(tensors_file, folder / STAMP_FILE, verify) != meta.get("tensors_sha256"):
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
        written = write_folder(Path(folder), fill)
    except Exception as err:  # full disk, read-only folder, a concurrent writer, ...
        text = str(err).strip().splitlines()
        return (text[0] if text else type(err).__name__)[:200]
    # its checksum was just computed from the file as written: keep it with the file's stamp
    with contextlib.suppress(OSError, ValueError):
        full = json.loads((written / META_FILE).read_text(encoding="utf-8"))
        tensors_file = written / TENSORS_FILE
        stamp = {"file": str(tensors_file), "stamp": file_stamp(tensors_file)}
        _write_json(written / STAMP_FILE, {**stamp, "sha256": full["tensors_sha256"]})
    return None
