"""Reading a trace from several threads at once.

The web app builds views in a pool of threads, and two views may read the same cached trace
together. A probe that a trace derives on first access (attention scores and pattern, per-head
results: see ``engine.trace``) is computed once and then kept; two threads asking for it at the
same moment must not both start that, or one finds it neither derived nor stored yet. ``read``
lets one thread derive it while the others wait. (Trace itself takes no lock; when it does,
``read`` becomes ``trace[name]``.)
"""

from __future__ import annotations

import threading

import torch

from lmscope.engine.trace import Trace

_DERIVING = threading.RLock()  # re-entrant: a derived probe may read other derived ones


def read(trace: Trace, name: str) -> torch.Tensor:
    """``trace[name]``, safe while other threads read the same trace."""
    stored = trace.tensors.get(name)
    if stored is not None:
        return stored
    with _DERIVING:
        return trace[name]
