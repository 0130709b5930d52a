"""The recall task: a list of symbols, then filler, then questions about the list.

One example is a fixed-length line of characters in four parts:

    qfkxbm      P symbols (a-z, drawn with repetition): what must be remembered
    ~-=+~-      N filler characters: the distance the list must be carried over
    ?2k?0q      Q queries: "?", a position in the list (0-9), then the symbol there (the answer)
    ....        padding up to the fixed length (after every answer, so it changes nothing)

Symbols, positions, filler, the query mark and the padding are five disjoint alphabets, so a
query's position digit never occurs before it and its answer is never ambiguous. A model has
to carry all P symbols across the N filler characters: an RNN in its fixed-size state, a GPT
in its KV cache, which grows with every character read. Distance N counts the filler
characters between the list and the first query; the first query is the one tests score.

Examples are drawn with NumPy from a seed alone, so the same seed gives the same examples.
No PyTorch here: the generator and its arithmetic are cheap to import and to test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from lmscope.errors import InvalidInputError

SYMBOLS = "abcdefghijklmnopqrstuvwxyz"
POSITIONS = "0123456789"
FILLER = "-=+~*^#%"
QUERY = "?"
PAD = "."
ALPHABET = "".join(sorted(SYMBOLS + POSITIONS + FILLER + QUERY + PAD))
CHANCE = 1 / len(SYMBOLS)  # accuracy of a guess that knows only what an answer looks like


@dataclass(frozen=True)
class TaskShape:
    """The longest list and distance an example may hold, and its queries; its length follows."""

    max_items: int = 8
    max_distance: int = 32
    queries: int = 4  # per example (fewer when the list is shorter)

    def __post_init__(self):
        for name, low in (("max_items", 1), ("max_distance", 0), ("queries", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise InvalidInputError(
                    "error.lab.recall.whole-number", name=name, low=low, value=repr(value)
                )
        if self.max_items > len(POSITIONS):
            raise InvalidInputError(
                "error.lab.recall.too-many-symbols", most=len(POSITIONS), got=self.max_items
            )

    @property
    def length(self) -> int:
        """Characters per example: the longest list, filler and queries, no more."""
        return self.max_items + self.max_distance + 3 * min(self.queries, self.max_items)


@dataclass
class Examples:
    """A batch of examples as character codes, with where the scored answer is."""

    codes: np.ndarray  # [n, length] uint8: ord() of each character
    items: np.ndarray  # [n] P: symbols in each list
    distance: np.ndarray  # [n] N: filler characters before the first query
    answer_at: (
        np.ndarray
    )  # [n] index of the first query's answer (its position digit is one before)
    answer: np.ndarray  # [n] the answer's character code

    def __len__(self) -> int:
        return len(self.codes)

    def text(self, i: int) -> str:
        return self.codes[i].tobytes().decode("ascii")

    def lines(self) -> str:
        """All examples end to end as one string (no separators: each has the same length)."""
        return self.codes.tobytes().decode("ascii")


def _codes(chars: str) -> np.ndarray:
    return np.frombuffer(chars.encode("ascii"), dtype=np.uint8)


def make_examples(
    shape: TaskShape,
    n: int,
    seed: int | list[int],
    items: int | None = None,
    distance: int | None = None,
) -> Examples:
    """``n`` examples; P and N drawn uniformly (1..max_items, 0..max_distance) unless fixed."""
    if items is not None and not 1 <= items <= shape.max_items:
        raise InvalidInputError("error.lab.recall.items-range", most=shape.max_items, got=items)
    if distance is not None and not 0 <= distance <= shape.max_distance:
        raise InvalidInputError(
            "error.lab.recall.distance-range", most=shape.max_distance, got=distance
        )
    rng = np.random.default_rng(seed)
    symbols, positions, filler = _codes(SYMBOLS), _codes(POSITIONS), _codes(FILLER)
    codes = np.full((n, shape.length), ord(PAD), dtype=np.uint8)
    p_all = np.full(n, items) if items is not None else rng.integers(1, shape.max_items + 1, n)
    d_all = (
        np.full(n, distance) if distance is not None else rng.integers(0, shape.max_distance + 1, n)
    )
    answer_at = np.empty(n, dtype=np.int64)
    answer = np.empty(n, dtype=np.uint8)
    for i in range(n):
        p, d = int(p_all[i]), int(d_all[i])
        row = codes[i]
        row[:p] = rng.choice(symbols, size=p)
        row[p : p + d] = rng.choice(filler, size=d)
        asked = rng.permutation(p)[: min(p, shape.queries)]
        for j, where in enumerate(asked):
            at = p + d + 3 * j
            row[at : at + 3] = (ord(QUERY), positions[where], row[where])
        answer_at[i], answer[i] = p + d + 2, row[asked[0]]
    return Examples(codes, p_all.astype(np.int64), d_all.astype(np.int64), answer_at, answer)


# --- what each model keeps while it waits ---------------------------------------------------
FLOAT32 = 4


def rnn_state_bytes(cell: str, hidden: int, layers: int, bytes_per: int = FLOAT32) -> int:
    """An LSTM keeps h and c per layer, a GRU (or vanilla RNN) h alone; neither grows."""
    per_layer = 2 if cell == "lstm" else 1
    return layers * per_layer * hidden * bytes_per


def kv_cache_bytes(layers: int, dim: int, tokens: int, bytes_per: int = FLOAT32) -> int:
    """A GPT keeps one key and one value of width ``dim`` per layer for every token read."""
    return layers * 2 * dim * tokens * bytes_per


def tokens_read(items: int, distance: int) -> int:
    """Characters read when the first answer is due: the list, the filler, "?" and the digit."""
    return items + distance + 2


# --- how sure a measured accuracy is ----------------------------------------------------------
Z95 = 1.959964  # the normal quantile of a two-sided 95% interval


def wilson(correct: int, total: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``correct`` out of ``total`` (95% by default): unlike
    p +- z*sqrt(p(1-p)/n) it stays inside [0, 1] and is not zero-wide at 0 or 100%."""
    if total <= 0:
        return 0.0, 1.0
    p = correct / total
    spread = z * z / total
    centre = (p + spread / 2) / (1 + spread)
    half = z * math.sqrt(p * (1 - p) / total + spread / (4 * total)) / (1 + spread)
    return max(0.0, centre - half), min(1.0, centre + half)
