"""Encode a corpus once, keep the ids on disk, and memory-map them on every later run.

A cache entry is a folder holding `train.bin`, `val.bin` (raw little-endian token ids) and
`meta.json`. Every file is written to a temporary name and moved into place with
`os.replace`, and `meta.json` goes last; an entry only loads when its meta is present and
every array file has exactly the size the meta promises. A run killed half way therefore
leaves, at worst, an entry that is ignored and rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from lmscope.data.corpora import Corpus, train_val_split
from lmscope.errors import InvalidInputError, TokenizerError

CACHE_ENV = "LMSCOPE_CACHE"
_FORMAT = 1  # bump when the on-disk layout changes, so old entries stop matching
_SPLITS = ("train", "val")


class Tokenizer(Protocol):
    """What encoding needs from a tokenizer (lmscope's tokenizers all provide it)."""

    name: str
    vocab_size: int

    def encode(self, text: str) -> list[int]: ...


@dataclass
class EncodedCorpus:
    """Token ids of a corpus's train and val parts, memory-mapped from the cache."""

    corpus_name: str
    tokenizer_name: str
    vocab_size: int
    train: np.ndarray = field(repr=False)
    val: np.ndarray = field(repr=False)
    path: Path
    key: str
    from_cache: bool


def default_cache_dir() -> Path:
    """`$LMSCOPE_CACHE/corpora` when that variable is set, else `~/.cache/lmscope/corpora`."""
    root = os.environ.get(CACHE_ENV)
    base = Path(root).expanduser() if root else Path.home() / ".cache" / "lmscope"
    return base / "corpora"


def dtype_for_vocab(vocab_size: int) -> np.dtype:
    """The smallest unsigned dtype that holds every id: uint16 up to 65,536 tokens.

    Little-endian explicitly, so a cache file means the same on every machine.
    """
    return np.dtype("<u2" if vocab_size <= 2**16 else "<u4")


def tokenizer_identity(tokenizer: object) -> str:
    """A string that changes whenever the tokenizer would encode differently.

    It combines name, vocab size and a hash of the files `tokenizer.save(dir)` writes.
    """
    vocab_size = getattr(tokenizer, "vocab_size", None)
    digest = hash_saved_files(tokenizer, hashlib.sha256())
    return f"{_name(tokenizer)}|{vocab_size}|{digest.hexdigest()}"


def hash_saved_files(tokenizer: object, digest):
    """``digest`` (a hashlib object) updated with the name and bytes of every file
    ``tokenizer.save(dir)`` writes, in name order; returned for ``.hexdigest()``."""
    save = getattr(tokenizer, "save", None)
    if not callable(save):
        raise InvalidInputError("error.corpus.tokenizer-no-save", name=repr(_name(tokenizer)))
    with tempfile.TemporaryDirectory(prefix="lmscope-tok-") as tmp:
        save(tmp)
        for path in sorted(Path(tmp).rglob("*")):
            if path.is_file():
                digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest


def _name(tokenizer: object) -> str:
    return getattr(tokenizer, "name", type(tokenizer).__name__)


def _cache_key(corpus: Corpus, tok_key: str, vocab_size: int, val_fraction: float) -> str:
    digest = hashlib.sha256()
    for part in (
        f"format={_FORMAT}",
        tok_key,
        f"vocab={vocab_size}",
        f"val={float(val_fraction)!r}",
    ):
        digest.update(part.encode() + b"\0")
    digest.update(corpus.text.encode("utf-8"))
    return digest.hexdigest()


def _slug(name: str) -> str:
    # Folder names readable by people, safe on every filesystem.
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:40] or "corpus"


def encode_corpus(
    corpus: Corpus,
    tokenizer: Tokenizer,
    cache_dir: str | os.PathLike[str] | None = None,
    *,
    val_fraction: float = 0.1,
    tokenizer_key: str | None = None,
) -> EncodedCorpus:
    """Token ids for `corpus`'s train/val split, encoded once and then read from the cache.

    The text is split first (first 90% train by default) and each part encoded on its own.
    The cache lives in `cache_dir`, else `default_cache_dir()`.
    """
    vocab_size = int(tokenizer.vocab_size)
    if vocab_size <= 0 or vocab_size > 2**32:
        raise InvalidInputError("error.corpus.vocab-size", size=str(vocab_size))
    tok_key = tokenizer_key if tokenizer_key is not None else tokenizer_identity(tokenizer)
    key = _cache_key(corpus, tok_key, vocab_size, val_fraction)
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    entry = root / f"{_slug(corpus.name)}-{key[:24]}"
    dtype = dtype_for_vocab(vocab_size)

    arrays = _load_entry(entry, key, dtype)
    from_cache = arrays is not None
    if arrays is None:
        arrays = _build_entry(entry, corpus, tokenizer, val_fraction, key, dtype)
    return EncodedCorpus(
        corpus_name=corpus.name,
        tokenizer_name=_name(tokenizer),
        vocab_size=vocab_size,
        train=arrays["train"],
        val=arrays["val"],
        path=entry,
        key=key,
        from_cache=from_cache,
    )


def _build_entry(
    entry: Path, corpus: Corpus, tokenizer: Tokenizer, val_fraction: float, key: str, dtype
) -> dict[str, np.ndarray]:
    """Encode the split, write it as a cache entry, and map it back from disk."""
    vocab_size = int(tokenizer.vocab_size)
    parts = train_val_split(corpus.text, val_fraction)
    ids = {
        split: _encode(tokenizer, text, vocab_size, dtype)
        for split, text in zip(_SPLITS, parts, strict=True)
    }
    meta = {
        "format": _FORMAT,
        "key": key,
        "corpus": corpus.name,
        "source": corpus.source,
        "tokenizer": _name(tokenizer),
        "vocab_size": vocab_size,
        "val_fraction": val_fraction,
        "dtype": dtype.name,
        "lengths": {split: int(a.size) for split, a in ids.items()},
    }
    try:
        _write_entry(entry, ids, meta)
    except OSError as err:
        raise InvalidInputError(
            "error.corpus.cache-write", path=repr(str(entry)), why=str(err.strerror), env=CACHE_ENV
        ) from None
    arrays = _load_entry(entry, key, dtype)
    if arrays is None:  # only if something else damaged the files as we wrote them
        raise InvalidInputError("error.corpus.cache-unusable", path=repr(str(entry)))
    return arrays


def _encode(tokenizer: Tokenizer, text: str, vocab_size: int, dtype: np.dtype) -> np.ndarray:
    ids = np.asarray(tokenizer.encode(text) if text else [], dtype=np.int64)
    if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
        bad = int(ids.min() if ids.min() < 0 else ids.max())
        raise TokenizerError("error.corpus.id-outside", id=str(bad), size=str(vocab_size))
    return ids.astype(dtype)


def _load_entry(entry: Path, key: str, dtype: np.dtype) -> dict[str, np.ndarray] | None:
    """The memory-mapped arrays of a complete entry, or None when it is absent or damaged."""
    try:
        meta = json.loads((entry / "meta.json").read_text(encoding="utf-8"))
        lengths = {s: int(meta["lengths"][s]) for s in _SPLITS}
        if meta.get("format") != _FORMAT or meta.get("key") != key or meta["dtype"] != dtype.name:
            return None
        for split, n in lengths.items():
            if (entry / f"{split}.bin").stat().st_size != n * dtype.itemsize:
                return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return {s: _map(entry / f"{s}.bin", dtype, n) for s, n in lengths.items()}


def _map(path: Path, dtype: np.dtype, length: int) -> np.ndarray:
    # numpy cannot memory-map an empty file; an empty split is just an empty array.
    if length == 0:
        return np.empty(0, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode="r", shape=(length,))


def _write_entry(entry: Path, arrays: dict[str, np.ndarray], meta: dict) -> None:
    entry.mkdir(parents=True, exist_ok=True)
    for split, ids in arrays.items():
        _atomic_write(entry / f"{split}.bin", ids.tobytes())
    # The meta is the commit point: written last, so a half-finished entry never looks whole.
    _atomic_write(entry / "meta.json", json.dumps(meta, indent=2).encode("utf-8"))


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
