"""Shorter turns between Python threads while one of them does pure-Python work beside another
that calls torch.

Every torch call lets go of the interpreter's lock while it runs and waits for it afterwards.
While another thread runs Python without pause (a 262,144-piece tokenizer's tables being built),
that wait lasts until the interpreter makes the other thread yield: 5 ms by default
(``sys.getswitchinterval``), after every call. A model build makes hundreds of calls, so a
cached Gemma 3 load spent seconds waiting. ``short_turns`` lowers the interval for a while.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

TURN_S = 0.0002  # the interval while short turns are on


@contextlib.contextmanager
def short_turns(seconds: float = TURN_S) -> Iterator[None]:
    """Inside, threads take turns of at most ``seconds``; the previous interval after (the
    setting is the process's)."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(min(before, seconds))
    try:
        yield
    finally:
        sys.setswitchinterval(before)
