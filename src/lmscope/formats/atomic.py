"""Folders that appear whole or not at all: every model folder and checkpoint lmscope writes.

The contents go into a hidden sibling folder (``.out.tmp-*``), are flushed to disk, and are
then swapped in with two renames: the current folder becomes ``.out.old``, the new one becomes
``out``. A crash (even ``kill -9``) at any moment leaves either the new folder, or the previous
one under ``out`` or ``.out.old``; ``recover`` (called before every read and write) puts the
previous one back in the second case and sweeps away half-written temporary folders.

Files lmscope did not write (a README, plots, notes added while a run trains) are never
deleted: after the swap they are moved from ``.out.old`` into the new folder, and only then is
``.out.old`` removed. A crash before that leaves them in ``.out.old``, where ``recover`` finds
them and moves them over the same way.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from lmscope.errors import InvalidInputError
from lmscope.i18n import Message

OLD_SUFFIX = ".old"
TMP_INFIX = ".tmp-"

# Every name lmscope writes into a model or checkpoint folder. A previous version's entry with
# one of these names is lmscope's own and may be replaced or dropped; any other entry belongs to
# someone else and is carried into the new folder untouched.
LMSCOPE_FILES = frozenset(
    {
        "lmscope.json",
        "model.safetensors",
        "optimizer.safetensors",
        "trainer.json",
        "trainer.safetensors",
        "timeline.json",
        "timeline.md",
        "encoder.json",
        "vocab.bpe",
        "vocab.json",
        "merges.txt",
        "tokenizer.json",
        "tokenizer_config.json",
        "chat_template.jinja",
        "chars.json",
    }
)


def old_path(directory: Path) -> Path:
    return directory.with_name(f".{directory.name}{OLD_SUFFIX}")


def recover(directory: str | os.PathLike) -> None:
    """Finish what a crashed write left behind: restore ``.out.old`` if ``out`` is gone
    (the crash fell between the two renames), then delete stale temporary folders."""
    directory = Path(directory)
    old = old_path(directory)
    if old.exists():
        if directory.exists():
            _settle(old, directory)  # the swap finished; carrying over and clean-up were left
        else:
            with contextlib.suppress(FileNotFoundError):  # another process got there first
                os.replace(old, directory)
    if directory.parent.is_dir():
        for stale in directory.parent.glob(f".{directory.name}{TMP_INFIX}*"):
            shutil.rmtree(stale, ignore_errors=True)


def readable(directory: str | os.PathLike) -> Path:
    """Where to read ``directory`` from without changing anything: the folder itself, or its
    previous version when a write was killed between its two renames. Readers must not call
    ``recover``, which could race a writer that is still running."""
    directory = Path(directory)
    if not directory.exists() and old_path(directory).is_dir():
        return old_path(directory)
    return directory


@contextlib.contextmanager
def writing(path: str | os.PathLike):
    """Around writing one output file: an OSError (a missing folder, a folder where the file
    must go, no permission) becomes one line naming the file."""
    try:
        yield
    except IsADirectoryError:
        raise InvalidInputError("error.write.is-folder", file=str(path)) from None
    except OSError as err:
        why = str(err.strerror or err)
        raise InvalidInputError("error.write.cannot-write", file=str(path), why=why) from None


def cannot_write(directory: str | os.PathLike) -> Message | None:
    """Why ``write_folder(directory)`` would fail for want of a place to write (a file where a
    folder must be, a folder that cannot be written in), or None: asked before long work. The
    new folder is made next to ``directory``, so that is where writing must work."""
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        return Message("error.write.file-not-folder", path=str(directory))
    return cannot_write_in(directory.parent)


def cannot_write_in(folder: str | os.PathLike) -> Message | None:
    """Why files could not be written in ``folder`` (made with its parents where missing), or
    None: a catalog message, its ``path`` the file found where a folder must be."""
    existing = Path(folder)
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent  # the folder that mkdir would create the rest in
    if not existing.is_dir():
        return Message("error.write.file-not-folder", path=str(existing))
    try:  # the one sure test of "can write here" (permissions, read-only disks, root)
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as err:
        return Message(
            "error.write.cannot-write-in", folder=str(existing), why=str(err.strerror or err)
        )
    return None


def write_folder(directory: str | os.PathLike, fill: Callable[[Path], None]) -> Path:
    """Create ``directory`` atomically: ``fill(tmp)`` writes the files into a temporary folder,
    which then replaces ``directory``. On any error the previous folder is left as it was."""
    directory = Path(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    recover(directory)
    tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}{TMP_INFIX}", dir=directory.parent))
    try:
        fill(tmp)
        _fsync_tree(tmp)
        _swap_in(tmp, directory)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        old = old_path(directory)
        if old.exists() and directory.exists():  # stopped after the swap: finish it
            with contextlib.suppress(BaseException):
                _settle(old, directory)
        raise
    return directory


def _fsync_tree(folder: Path) -> None:
    """Flush every file, then the folder itself, so the rename publishes finished bytes.

    Permissions become the usual ones for the user's umask (mkdtemp makes private folders).
    """
    mask = _umask()
    for path in folder.rglob("*"):
        if path.is_file():
            path.chmod(0o666 & ~mask)
            with open(path, "rb") as f:
                os.fsync(f.fileno())
    folder.chmod(0o777 & ~mask)
    _fsync_dir(folder)


def _umask() -> int:
    mask = os.umask(0o022)  # reading the umask means setting it; put it straight back
    os.umask(mask)
    return mask


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # some platforms cannot open folders; the rename is still atomic there
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _swap_in(new: Path, target: Path) -> None:
    old = old_path(target)
    if target.exists():
        os.replace(target, old)
    # A crash here leaves only .old: recover() renames it back.
    os.replace(new, target)
    _fsync_dir(target.parent)
    if old.exists():
        _settle(old, target)


def _settle(old: Path, target: Path) -> None:
    """Move every entry of ``old`` that lmscope did not write into ``target``, then delete
    ``old``, which by then holds only files the writer replaced. Each move is one rename, so a
    crash at any point leaves every user file either in ``target`` or still in ``old``."""
    try:
        for entry in sorted(old.iterdir()):
            if not _replaced(entry.name, target):
                with contextlib.suppress(FileNotFoundError):  # another process moved it
                    os.replace(entry, target / entry.name)
        _fsync_dir(target)
        if any(not _replaced(p.name, target) for p in old.iterdir()):
            return  # something appeared there meanwhile; never delete what lmscope did not write
    except FileNotFoundError:  # another process (a DDP rank's recover) settled it first
        return
    shutil.rmtree(old, ignore_errors=True)


def _replaced(name: str, target: Path) -> bool:
    """Whether the previous folder's entry ``name`` was the writer's own: a name lmscope writes,
    or one the new folder holds (the same writer's newer version, as in the weight cache)."""
    return name in LMSCOPE_FILES or (target / name).exists() or (target / name).is_symlink()
