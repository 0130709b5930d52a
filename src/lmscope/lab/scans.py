"""Prefix scans in pure Python, counting their depth (rounds) and work (operator calls).

A scan turns x_0..x_{N-1} into the running results x_0, x_0+x_1, ..., for any associative
operator. The serial scan needs N-1 dependent steps; the parallel scans below need only
O(log N) rounds, where every operation inside a round is independent of the others and could
run on its own core. Pure Python runs the rounds one operation at a time, so these functions
measure the *shape* of the computation (rounds, operations), not a parallel speed-up.

The same scans also compute the RNN-like recurrence h_t = a_t * h_{t-1} + x_t: write each step
as the affine map h -> a_t * h + x_t; composing two such maps is again one (``affine_op``), and
composition is associative, so the recurrence's states are a scan over (a_t, x_t) pairs.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lmscope.errors import InvalidInputError

Op = Callable[[Any, Any], Any]


@dataclass(frozen=True)
class ScanCost:
    rounds: int  # dependent steps: the depth of the computation graph
    work: int  # operator applications in total

    def to_dict(self) -> dict:
        return {"rounds": self.rounds, "work": self.work}


def affine_op(earlier: tuple[float, float], later: tuple[float, float]) -> tuple[float, float]:
    """Compose h -> a1*h + b1 (earlier) with h -> a2*h + b2 (later): h -> a1*a2*h + a2*b1 + b2."""
    a1, b1 = earlier
    a2, b2 = later
    return (a1 * a2, a2 * b1 + b2)


AFFINE_IDENTITY = (1.0, 0.0)


def log2_ceil(n: int) -> int:
    """Smallest k with 2**k >= n (0 for n = 1)."""
    if n < 1:
        raise InvalidInputError("error.lab.at-least-one", flag="N", got=n)
    return (n - 1).bit_length()


def serial_scan(xs: Sequence, op: Op = operator.add) -> tuple[list, ScanCost]:
    """The recurrence way: each result waits for the previous one."""
    out: list = []
    for x in xs:
        out.append(op(out[-1], x) if out else x)
    steps = max(0, len(out) - 1)
    return out, ScanCost(rounds=steps, work=steps)


def recurrence_states(xs: Sequence[float], a: float = 0.9) -> list[float]:
    """Every state of h_t = a*h_{t-1} + x_t from h_{-1} = 0, one step at a time."""
    h = 0.0
    states = []
    for x in xs:
        h = a * h + x
        states.append(h)
    return states


def hillis_steele_scan(xs: Sequence, op: Op = operator.add) -> tuple[list, ScanCost]:
    """Inclusive scan in ceil(log2 N) rounds: in round r every position i >= 2**r adds in
    position i - 2**r. Simple and shallow, but it does N*log2(N) - (N-1) operations for N a
    power of two, more than the N-1 of the serial scan."""
    y = list(xs)
    n = len(y)
    rounds = work = 0
    d = 1
    while d < n:
        # Build the new round from the old one only: all these operations are independent.
        y = y[:d] + [op(y[i - d], y[i]) for i in range(d, n)]
        work += n - d
        rounds += 1
        d *= 2
    return y, ScanCost(rounds, work)


def hillis_steele_cost(n: int) -> ScanCost:
    """Rounds and work of ``hillis_steele_scan`` on N items, without running it."""
    if n < 1:
        raise InvalidInputError("error.lab.at-least-one", flag="N", got=n)
    rounds = log2_ceil(n)
    return ScanCost(rounds, sum(n - (1 << r) for r in range(rounds)))


def blelloch_scan(xs: Sequence, op: Op = operator.add, identity: Any = 0) -> tuple[list, ScanCost]:
    """Work-efficient inclusive scan: an up-sweep builds partial sums in a balanced tree
    (log2 P rounds, P-1 operations), a down-sweep pushes prefixes back down (log2 P rounds,
    P-1 operations), where P is N rounded up to a power of two and the tail is padded with
    the identity. Depth 2*log2(P), work 2*(P-1): about 2N, whatever N is.

    The tree yields the exclusive scan; the inclusive one is that shifted left by one with
    the grand total appended, so it costs no extra operations."""
    n = len(xs)
    if n == 0:
        return [], ScanCost(0, 0)
    levels = log2_ceil(n)
    size = 1 << levels
    t = list(xs) + [identity] * (size - n)
    rounds = work = 0
    for level in range(levels):  # up-sweep: t[right] becomes the sum of its subtree
        half, stride = 1 << level, 2 << level
        for right in range(stride - 1, size, stride):
            t[right] = op(t[right - half], t[right])
            work += 1
        rounds += 1
    total = t[-1]
    t[-1] = identity
    for level in reversed(range(levels)):  # down-sweep: pass each prefix to the children
        half, stride = 1 << level, 2 << level
        for right in range(stride - 1, size, stride):
            left_sum = t[right - half]
            t[right - half] = t[right]  # left child: everything before this subtree
            t[right] = op(t[right], left_sum)  # right child: that, then the left subtree
            work += 1
        rounds += 1
    inclusive = (t + [total])[1 : n + 1]
    return inclusive, ScanCost(rounds, work)


def blelloch_cost(n: int) -> ScanCost:
    """Rounds and work of ``blelloch_scan`` on N items, without running it."""
    levels = log2_ceil(n)
    return ScanCost(2 * levels, 2 * ((1 << levels) - 1))


def tree_reduce(xs: Sequence, op: Op = operator.add) -> tuple[Any, ScanCost]:
    """Pairwise reduction, the shape of sum() on parallel hardware: ceil(log2 N) rounds."""
    level = list(xs)
    if not level:
        raise InvalidInputError("error.lab.scan.empty")
    rounds = work = 0
    while len(level) > 1:
        pairs = [op(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        work += len(pairs)
        if len(level) % 2:
            pairs.append(level[-1])  # the odd one out waits for the next round
        level = pairs
        rounds += 1
    return level[0], ScanCost(rounds, work)


def max_abs_diff(xs: Sequence[float], ys: Sequence[float]) -> float:
    if len(xs) != len(ys):
        raise InvalidInputError("error.lab.scan.lengths", first=len(xs), second=len(ys))
    return max((abs(x - y) for x, y in zip(xs, ys, strict=True)), default=0.0)


def close(xs: Sequence[float], ys: Sequence[float], rel: float = 1e-9) -> bool:
    """Equal up to floating-point reassociation, relative to the largest magnitude."""
    scale = max((abs(v) for v in list(xs) + list(ys)), default=0.0) or 1.0
    return max_abs_diff(xs, ys) <= rel * scale and all(map(math.isfinite, xs))
