"""Timing that survives a busy machine: best of several repeats, and enough calls per repeat
that a microsecond-scale call is not lost in the clock's own noise.

Two clocks. ``wall`` (the default) is elapsed time, what a user waits for. ``cpu`` is the
CPU time this process consumed: on a machine shared with other jobs it leaves out the time
the process sat descheduled, so single-threaded work (``--threads 1``) measures the same as
on an idle machine. With several threads it adds their times up, and GPU work is invisible
to it, so it is only offered for single-threaded CPU runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from lmscope.errors import InvalidInputError

MIN_REPEAT_SECONDS = 0.002  # batch fast calls until one repeat lasts at least this long
SLOW_CALL_SECONDS = 0.05  # a call this slow is its own warm-up
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
CLOCK_LABELS = {"wall": "wall-clock time", "cpu": "CPU time"}


def clock_for(name: str) -> Callable[[], float]:
    if name not in CLOCKS:
        raise InvalidInputError(f"--clock must be wall or cpu, got {name!r}")
    return CLOCKS[name]


def check_clock(name: str, devices, threads: int | None) -> None:
    """The CPU clock only means elapsed time for one thread on the CPU: refuse the rest."""
    clock_for(name)
    if name == "cpu":
        if any(d != "cpu" for d in devices):
            raise InvalidInputError("--clock cpu cannot see GPU work; use --clock wall with CUDA")
        if threads != 1:
            raise InvalidInputError("--clock cpu adds up every thread's time; add --threads 1")


def sync_for(device: str) -> Callable[[], None]:
    """A function that waits for queued device work, so the clock measures the work itself."""
    if device.startswith("cuda"):
        import torch  # here: lmscope.lab.configs imports this module, and --help needs no torch

        return torch.cuda.synchronize
    return lambda: None


def best_time(
    fn: Callable[[], object],
    repeats: int,
    sync: Callable[[], None] | None = None,
    clock: str = "wall",
) -> float:
    """Seconds per call of ``fn``: the minimum over ``repeats`` repeats (the least disturbed
    one). The first call warms caches; it counts as a repeat only when it is slow (a warm-up
    is then irrelevant and a second full run would only cost time)."""
    if repeats < 1:
        raise InvalidInputError(f"repeats must be >= 1, got {repeats}")
    now = clock_for(clock)
    sync = sync or (lambda: None)
    start = now()
    fn()
    sync()
    once = now() - start
    calls = max(1, min(10_000, int(MIN_REPEAT_SECONDS / max(once, 1e-9))))
    slow = once >= SLOW_CALL_SECONDS
    best = once if slow else float("inf")
    for _ in range(repeats - 1 if slow else repeats):
        start = now()
        for _ in range(calls):
            fn()
        sync()
        best = min(best, (now() - start) / calls)
    return best
