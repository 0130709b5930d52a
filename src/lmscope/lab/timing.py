"""Wall-clock timing that survives a busy machine: best of several repeats, and enough calls
per repeat that a microsecond-scale call is not lost in the clock's own noise."""

from __future__ import annotations

import time
from collections.abc import Callable

from lmscope.errors import InvalidInputError

MIN_REPEAT_SECONDS = 0.002  # batch fast calls until one repeat lasts at least this long
SLOW_CALL_SECONDS = 0.05  # a call this slow is its own warm-up


def sync_for(device: str) -> Callable[[], None]:
    """A function that waits for queued device work, so the clock measures the work itself."""
    if device.startswith("cuda"):
        import torch

        return torch.cuda.synchronize
    return lambda: None


def best_time(fn: Callable[[], object], repeats: int, sync: Callable[[], None] | None = None):
    """Seconds per call of ``fn``: the minimum over ``repeats`` repeats (the least disturbed
    one). The first call warms caches; it counts as a repeat only when it is slow (a warm-up
    is then irrelevant and a second full run would only cost time)."""
    if repeats < 1:
        raise InvalidInputError(f"repeats must be >= 1, got {repeats}")
    sync = sync or (lambda: None)
    start = time.perf_counter()
    fn()
    sync()
    once = time.perf_counter() - start
    calls = max(1, min(10_000, int(MIN_REPEAT_SECONDS / max(once, 1e-9))))
    slow = once >= SLOW_CALL_SECONDS
    best = once if slow else float("inf")
    for _ in range(repeats - 1 if slow else repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        best = min(best, (time.perf_counter() - start) / calls)
    return best
