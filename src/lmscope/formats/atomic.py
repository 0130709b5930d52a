"""Folders that appear whole or not at all: every model folder and checkpoint lmscope writes.

The contents go into a hidden sibling folder (``.out.tmp-*``), are flushed to disk, and are
then swapped in with two renames: the current folder becomes ``.out.old``, the new one becomes
``out``. A crash (even ``kill -9``) at any moment leaves either the new folder, or the previous
one under ``out`` or ``.out.old``; ``recover`` (called before every read and write) puts the
previous one back in the second case and sweeps away half-written temporary folders.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

OLD_SUFFIX = ".old"
TMP_INFIX = ".tmp-"


def old_path(directory: Path) -> Path:
    return directory.with_name(f".{directory.name}{OLD_SUFFIX}")


def recover(directory: str | os.PathLike) -> None:
    """Finish what a crashed write left behind: restore ``.out.old`` if ``out`` is gone
    (the crash fell between the two renames), then delete stale temporary folders."""
    directory = Path(directory)
    old = old_path(directory)
    if old.exists():
        if directory.exists():
            shutil.rmtree(old, ignore_errors=True)  # the swap finished; only clean-up was left
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
    shutil.rmtree(old, ignore_errors=True)
