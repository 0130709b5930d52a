"""Corpora: the bundled texts, Python's own standard library, or any text file or folder.

Every corpus is read the same way: UTF-8, a leading byte-order mark dropped, and Windows
line ends (CRLF) turned into plain LF, so a model never learns the line-end convention of
whoever saved the file.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TypeVar

from lmscope.errors import InvalidInputError
from lmscope.i18n import Message

# Bundled corpora: canonical name -> (asset folder, human description).
_BUNDLED = {
    "shakespeare": ("tinyshakespeare", "Tiny Shakespeare (karpathy/char-rnn), bundled"),
    "warpeace": ("warpeace", "Tolstoy, War and Peace (Project Gutenberg text), bundled"),
}
_ALIASES = {"tinyshakespeare": "shakespeare", "war-and-peace": "warpeace"}
# Variants: a bundled corpus cut where text that does not belong to it begins.
# name -> (bundled corpus, first line of the part to drop, description)
_VARIANTS = {
    "warpeace-novel": (
        "warpeace",
        "My alarm rang too early again",
        "War and Peace without the kaomoji diary appended to the course copy (see its CARD.md)",
    ),
}
STDLIB_NAME = "python-stdlib"

# Default cap for the stdlib corpus: big enough to train on, small enough to encode quickly.
DEFAULT_STDLIB_MAX_CHARS = 5_000_000

# Folders inside the stdlib that are not "the library itself".
_STDLIB_SKIP_DIRS = {"site-packages", "dist-packages", "test", "tests", "idle_test", "__pycache__"}

_Seq = TypeVar("_Seq", bound=Sequence)


@dataclass(frozen=True)
class Corpus:
    """A named body of text ready for a tokenizer."""

    name: str
    text: str = field(repr=False)
    source: str

    def __len__(self) -> int:
        return len(self.text)

    def split(self, val_fraction: float = 0.1) -> tuple[str, str]:
        """The (train, val) texts: the first part trains, the last `val_fraction` validates."""
        return train_val_split(self.text, val_fraction)


def corpus_names() -> list[str]:
    """The corpora to offer by name (no aliases): the one list help texts and errors show."""
    return [*_BUNDLED, *_VARIANTS, STDLIB_NAME]


def known_corpora() -> list[str]:
    """Names `load_corpus` accepts besides paths (canonical names, then aliases)."""
    return [*corpus_names(), *_ALIASES]


def train_val_split(seq: _Seq, val_fraction: float = 0.1) -> tuple[_Seq, _Seq]:
    """Cut any sliceable sequence into a leading train part and a trailing val part.

    No shuffling: the split is the same on every run and the val text is a contiguous,
    unseen stretch, as in nanoGPT's shakespeare_char preparation.
    """
    if not 0.0 <= val_fraction < 1.0:
        raise InvalidInputError("error.corpus.val-fraction", got=str(val_fraction))
    cut = int(len(seq) * (1.0 - val_fraction))
    return seq[:cut], seq[cut:]


def load_corpus(
    name_or_path: str | os.PathLike[str], *, max_chars: int | None = DEFAULT_STDLIB_MAX_CHARS
) -> Corpus:
    """Load a bundled corpus by name, build `python-stdlib`, or read a text file or folder.

    `max_chars` caps only the `python-stdlib` corpus (None means the whole library).
    """
    if isinstance(name_or_path, str):
        if not name_or_path.strip():  # Path("") is the current folder: never read it unasked
            raise InvalidInputError("error.corpus.empty-name", names=", ".join(corpus_names()))
        key = name_or_path.strip().lower()
        key = _ALIASES.get(key, key)
        if key in _BUNDLED:
            return _load_bundled(key)
        if key in _VARIANTS:
            return _load_variant(key)
        if key == STDLIB_NAME:
            return load_python_stdlib(max_chars=max_chars)
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return _load_folder(path)
    if path.is_file():
        return _load_file(path)
    raise _not_found(name_or_path)


def _not_found(name_or_path: str | os.PathLike[str]) -> InvalidInputError:
    known = ", ".join(corpus_names())
    text = os.fspath(name_or_path)
    looks_like_path = not isinstance(name_or_path, str) or "/" in text or os.sep in text
    if looks_like_path or Path(text).suffix:
        return InvalidInputError("error.corpus.no-file", name=repr(text), known=known)
    return InvalidInputError("error.corpus.unknown", name=repr(text), known=known)


def _load_bundled(name: str) -> Corpus:
    folder, description = _BUNDLED[name]
    asset = resources.files("lmscope") / "assets" / "corpora" / folder / "input.txt"
    text = decode_text(asset.read_bytes(), Message("error.corpus.part.bundled", name=repr(name)))
    return Corpus(name=name, text=text, source=f"{description}: assets/corpora/{folder}/input.txt")


def _load_variant(name: str) -> Corpus:
    base, first_dropped, description = _VARIANTS[name]
    text = _load_bundled(base).text
    cut = text.find("\n" + first_dropped)
    if cut < 0:  # the shipped file changed; better to fail than to train on the wrong text
        raise InvalidInputError("error.corpus.variant-tail", name=repr(name), base=repr(base))
    folder = _BUNDLED[base][0]
    source = f"{description}: assets/corpora/{folder}/input.txt, first {cut + 1:,} characters"
    return Corpus(name=name, text=text[: cut + 1], source=source)


def decode_text(raw: bytes, what: object) -> str:
    """Bytes -> text the corpus way (UTF-8, no BOM, LF line ends); binary data is refused.
    ``what`` names the bytes in the error (a path, or a Message)."""
    if b"\x00" in raw:
        raise InvalidInputError("error.corpus.nul-bytes", what=what)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        byte, offset = f"0x{raw[err.start]:02X}", str(err.start)
        if _reads_as_text(raw):  # Latin-1, Windows-1252...: text, just not UTF-8
            raise InvalidInputError(
                "error.corpus.not-utf8", what=what, byte=byte, offset=offset
            ) from None
        raise InvalidInputError(
            "error.corpus.binary", what=what, byte=byte, offset=offset
        ) from None
    return text.removeprefix("\ufeff").replace("\r\n", "\n")


def _reads_as_text(raw: bytes, sample: int = 1 << 16) -> bool:
    """Whether bytes read as Latin-1 are almost all printable text (under 1% control codes)."""
    chars = raw[:sample].decode("latin-1")
    controls = sum(1 for c in chars if not c.isprintable() and c not in "\n\r\t\f")
    return controls <= len(chars) // 100


def _read_text_file(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise InvalidInputError(
            "error.corpus.cannot-read", path=repr(str(path)), why=str(err.strerror)
        ) from None
    return decode_text(raw, str(path))


def _require_text(text: str, what: object) -> str:
    if not text.strip():
        raise InvalidInputError("error.corpus.empty", what=what)
    return text


def _load_file(path: Path) -> Corpus:
    text = _require_text(_read_text_file(path), str(path))
    return Corpus(name=path.name, text=text, source=f"text file {path.resolve()}")


def _visible_files(folder: Path) -> list[Path]:
    """Files under `folder`, recursively, sorted by relative path; hidden ones (.git) skipped."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found.extend(Path(root, f) for f in files if not f.startswith("."))
    return sorted(found, key=lambda p: p.relative_to(folder).as_posix())


def _load_folder(folder: Path) -> Corpus:
    pieces, skipped = [], 0
    for path in _visible_files(folder):
        try:
            text = _read_text_file(path)
        except InvalidInputError:
            skipped += 1  # binary or unreadable: a folder may hold images next to its text
            continue
        pieces.append(_with_final_newline(text))
    text = "".join(pieces)
    if not text.strip():
        raise InvalidInputError(
            "error.corpus.folder-no-text-skipped" if skipped else "error.corpus.folder-no-text",
            folder=repr(str(folder)),
            n=skipped,
        )
    source = f"folder {folder.resolve()}: {len(pieces)} text file(s), {skipped} skipped"
    return Corpus(name=folder.name, text=text, source=source)


def _with_final_newline(text: str) -> str:
    # Files are joined end to end; a newline keeps one file's last line off the next one's first.
    return text if not text or text.endswith("\n") else text + "\n"


def stdlib_root() -> Path:
    """Where the running Python keeps its standard-library source."""
    return Path(sysconfig.get_paths()["stdlib"])


def _stdlib_files(root: Path) -> list[str]:
    """Relative posix paths of the stdlib's own .py files, sorted, test suites excluded."""
    found = []
    for here, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _STDLIB_SKIP_DIRS]
        rel_dir = Path(here).relative_to(root)
        found.extend((rel_dir / f).as_posix() for f in files if f.endswith(".py"))
    return sorted(found)


def load_python_stdlib(max_chars: int | None = DEFAULT_STDLIB_MAX_CHARS) -> Corpus:
    """Python's own standard library as one text, each file under a `# file: path` line.

    Files come in sorted relative-path order and the result is cut at `max_chars`, so the
    same Python always yields the same corpus.
    """
    if max_chars is not None and max_chars <= 0:
        raise InvalidInputError("error.corpus.max-chars", got=str(max_chars))
    root = stdlib_root()
    if not root.is_dir():
        raise InvalidInputError("error.corpus.no-stdlib", folder=repr(str(root)))
    pieces, size, count = [], 0, 0
    for rel in _stdlib_files(root):
        if max_chars is not None and size >= max_chars:
            break
        try:
            body = _read_text_file(root / rel)
        except InvalidInputError:
            continue  # unreadable or not UTF-8: leave it out rather than fail the whole corpus
        piece = f"# file: {rel}\n{_with_final_newline(body)}"
        pieces.append(piece)
        size += len(piece)
        count += 1
    text = "".join(pieces)
    if max_chars is not None:
        text = text[:max_chars]
    version = ".".join(map(str, sys.version_info[:3]))
    cap = "no cap" if max_chars is None else f"capped at {max_chars:,} chars"
    source = f"Python {version} standard library at {root}: {count} files, {cap}"
    return Corpus(
        name=STDLIB_NAME,
        text=_require_text(text, Message("error.corpus.part.stdlib")),
        source=source,
    )
