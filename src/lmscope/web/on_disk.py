"""The models on this machine, for the page's model menu: the same listing as ``lmscope
models`` (``engine.models_on_disk``: headers only; nothing in Ollama's, LM Studio's or the
Hugging Face stores is copied or changed), found once on a thread of its own, started with the
server or by the first request that asks, so that no request waits for the disk. Each model the
server does not explain comes with the command that serves it beside those it does."""

from __future__ import annotations

import shlex
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from lmscope.errors import LmscopeError
from lmscope.formats.stores.entry import StoredModel


def _find() -> list[StoredModel]:
    from lmscope.engine.models_on_disk import models_on_disk  # lazy: not for every app

    return models_on_disk()


class OnDisk:
    """The listing, found once in the background (``start``); ``found`` is None until then."""

    def __init__(self, find: Callable[[], list[StoredModel]] = _find):
        self._find = find
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._done = threading.Event()
        self.found: list[StoredModel] | None = None
        self.error: LmscopeError | OSError | None = None  # why the stores could not be read

    def start(self) -> None:
        """Look, once, on a daemon thread (a second call does nothing)."""
        with self._lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(target=self._look, name="lmscope-on-disk", daemon=True)
            self._thread.start()

    def _look(self) -> None:
        try:
            found = self._find()
        except (LmscopeError, OSError) as err:  # the menu says so; the server goes on
            found, self.error = [], err
        self.found = found
        self._done.set()

    def wait(self, timeout: float | None = None) -> list[StoredModel] | None:
        """The listing once found (started if it was not), waiting at most ``timeout`` s."""
        self.start()
        self._done.wait(timeout)
        return self.found


def same_model(stored: StoredModel, specs: Sequence[str | None]) -> bool:
    """Whether ``stored`` is one the server was started with: named the same, or the same
    file or folder as a path it was given."""
    for spec in specs:
        if spec is None:
            continue
        if spec == stored.name:
            return True
        path = Path(spec).expanduser()
        try:
            if path.exists() and path.resolve() == stored.path.resolve():
                return True
        except OSError:
            continue
    return False


def serve_command(specs: Sequence[str | None], name: str, *, char: bool = False) -> str:
    """The command that serves ``name`` beside the served models (each as --model named it),
    or alone when what opened one of them is not known (an app made in Python); a char model
    (``char``) with ``--rnn``, for the /rnn page."""
    known = [s for s in specs if s is not None] if None not in specs else []
    if not char:
        known, last = [*known, name], ""
    else:
        last = f" --rnn {shlex.quote(name)}"
    return " ".join(["lmscope", "serve", *(f"--model {shlex.quote(s)}" for s in known)]) + last
