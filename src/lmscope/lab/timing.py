"""Timing that survives a busy machine, or says that it could not: best of several repeats,
enough calls per repeat that a microsecond-scale call is not lost in the clock's own noise, and
the spread of the repeats, so a verdict is only read from timings that agree with themselves.

The rule: a timing is *steady* when at least three repeats were taken and the middle half of
them lies within ``MAX_SPREAD`` (10%) of their median (relative interquartile range). An
unsteady timing is repeated, for up to ``SETTLE_SECONDS`` of real time beyond the repeats asked
for; if it is still unsteady the experiment keeps its best value in the table but says, in its
output and in result.json, that the machine was too noisy for a verdict at that point.

Two clocks. ``wall`` (the default) is elapsed time, what a user waits for. ``cpu`` is the
CPU time this process consumed: on a machine shared with other jobs it leaves out the time
the process sat descheduled, so single-threaded work (``--threads 1``) measures the same as
on an idle machine. With several threads it adds their times up, and GPU work is invisible
to it, so it is only offered for single-threaded CPU runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from lmscope.errors import InvalidInputError
from lmscope.lab.results import Column

MIN_REPEAT_SECONDS = 0.002  # batch fast calls until one repeat lasts at least this long
SLOW_CALL_SECONDS = 0.05  # a call this slow is its own warm-up
MAX_SPREAD = 0.10  # steady: the repeats' interquartile range is at most 10% of their median
MIN_STEADY_REPEATS = 3  # fewer repeats say nothing about their spread
MAX_REPEATS = 15  # an unsteady timing is repeated up to this many times...
SETTLE_SECONDS = 2.0  # ...and for at most this long (real time) beyond the repeats asked for
# The largest spread of a row's timings, in percent: above MAX_SPREAD the machine was too noisy
# for a verdict at that point
SPREAD_COLUMN = Column("spread_pct", "spread %", "float")
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def clock_for(name: str) -> Callable[[], float]:
    if name not in CLOCKS:
        raise InvalidInputError("error.lab.clock.unknown", clock=name)
    return CLOCKS[name]


def check_clock(name: str, devices, threads: int | None) -> None:
    """The CPU clock only means elapsed time for one thread on the CPU: refuse the rest."""
    clock_for(name)
    if name == "cpu":
        if any(d != "cpu" for d in devices):
            raise InvalidInputError("error.lab.clock.gpu")
        if threads != 1:
            raise InvalidInputError("error.lab.clock.threads")


def sync_for(device: str) -> Callable[[], None]:
    """A function that waits for queued device work, so the clock measures the work itself."""
    if device.startswith("cuda"):
        import torch  # here: lmscope.lab.configs imports this module, and --help needs no torch

        return torch.cuda.synchronize
    return lambda: None


def quantile(samples, q: float) -> float:
    """The ``q`` quantile, interpolating between the sorted samples (numpy's default)."""
    ordered = sorted(samples)
    at = q * (len(ordered) - 1)
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def spread(samples) -> float:
    """How much repeats of one timing disagree: their interquartile range over their median
    (0 for identical repeats; infinite when fewer than three say nothing about it)."""
    if len(samples) < MIN_STEADY_REPEATS:
        return float("inf")
    median = quantile(samples, 0.5)
    iqr = quantile(samples, 0.75) - quantile(samples, 0.25)
    return iqr / median if median > 0 else float("inf")


@dataclass(frozen=True)
class Timing:
    """The repeats of one timing, in seconds per call."""

    samples: tuple[float, ...]

    @property
    def best(self) -> float:
        return min(self.samples)

    @property
    def spread(self) -> float:
        return spread(self.samples)

    @property
    def steady(self) -> bool:
        return self.spread <= MAX_SPREAD

    def record(self) -> dict:
        """What result.json keeps of it beside the best value."""
        s = self.spread
        return {
            "repeats": len(self.samples),
            "median_s": quantile(self.samples, 0.5),
            "spread": round(s, 4) if s != float("inf") else None,
            "steady": self.steady,
        }


def settle(
    sample: Callable[[], float],
    repeats: int,
    first: tuple[float, ...] = (),
    settle_s: float | None = None,
) -> Timing:
    """Take ``repeats`` samples (``sample()`` returns seconds per call), then more while they
    are not steady, until MAX_REPEATS or ``settle_s`` (default SETTLE_SECONDS) of real time
    more. ``first``: samples already taken."""
    settle_s = SETTLE_SECONDS if settle_s is None else settle_s
    samples = list(first)
    while len(samples) < repeats:
        samples.append(sample())
    started = time.perf_counter()
    while (
        spread(samples) > MAX_SPREAD
        and len(samples) < MAX_REPEATS
        and time.perf_counter() - started < settle_s
    ):
        samples.append(sample())
    return Timing(tuple(samples))


def measure(
    fn: Callable[[], object],
    repeats: int,
    sync: Callable[[], None] | None = None,
    clock: str = "wall",
    settle_s: float | None = None,
) -> Timing:
    """Seconds per call of ``fn`` over ``repeats`` repeats or more (see ``settle``). The first
    call warms caches; it counts as a repeat only when it is slow (a warm-up is then irrelevant
    and a second full run would only cost time)."""
    if repeats < 1:
        raise InvalidInputError("error.lab.at-least-one", flag="repeats", got=repeats)
    now = clock_for(clock)
    sync = sync or (lambda: None)
    start = now()
    fn()
    sync()
    once = now() - start
    calls = max(1, min(10_000, int(MIN_REPEAT_SECONDS / max(once, 1e-9))))

    def sample() -> float:
        start = now()
        for _ in range(calls):
            fn()
        sync()
        return (now() - start) / calls

    first = (once,) if once >= SLOW_CALL_SECONDS else ()
    return settle(sample, repeats, first, settle_s)


def best_time(
    fn: Callable[[], object],
    repeats: int,
    sync: Callable[[], None] | None = None,
    clock: str = "wall",
) -> float:
    """Seconds per call of ``fn``: the least disturbed repeat of ``measure``."""
    return measure(fn, repeats, sync, clock).best


def steadiness(**timings: Timing) -> dict:
    """The fields a table row gets for timings measured side by side: the largest spread in
    percent (None when too few repeats), whether every one is steady, and each one's record."""
    worst = max(t.spread for t in timings.values())
    return {
        "spread_pct": round(100 * worst, 1) if worst != float("inf") else None,
        "steady": all(t.steady for t in timings.values()),
        "timings": {name: t.record() for name, t in timings.items()},
    }
