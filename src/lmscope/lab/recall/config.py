"""Settings of ``lmscope lab recall``, checked when they are made.

Like ``lmscope.lab.configs`` this imports neither PyTorch nor NumPy, so ``lmscope --help``
reads the defaults without starting either. A wrong value is one line naming its flag.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from lmscope.errors import InvalidInputError
from lmscope.i18n import Message
from lmscope.lab.choices import check_models

RECALL_MODELS = ("lstm", "gru", "gpt")
RECURRENT = ("lstm", "gru")
MAX_ITEMS = 10  # one position digit (0-9) per remembered symbol
# --quick: a shorter task (lists of at most 4, distances up to 16) and one size, under a minute
# on two idle cores, still long enough for the recurrent models to learn the easy cases.
QUICK = {"sizes": (32,), "steps": 800, "items": 4, "distance": 16, "budget_s": 30.0}
QUICK_TEST_EXAMPLES = 200


def _whole(value, flag: str | Message, low: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        said = "error.lab.whole-number" if isinstance(flag, str) else "error.lab.whole-number-part"
        raise InvalidInputError(said, flag=flag, low=low, value=repr(value))


@dataclass
class RecallConfig:
    # the models: one GPT width per size, recurrent models matched to its parameter count
    sizes: tuple[int, ...] = (16, 32, 48)
    models: tuple[str, ...] = RECALL_MODELS
    gpt_layers: int = 2
    gpt_head_dim: int = 16  # heads = width / 16
    rnn_layers: int = 1
    # the task: lists of 1..items symbols, carried over 0..distance filler characters
    items: int = 8
    distance: int = 32
    queries: int = 4
    # training: the same examples in the same order for every model
    steps: int = 1500
    batch: int = 32
    lr: float = 5e-3  # one learning rate for every model (AdamW, warm-up then a cosine to lr/10)
    # most training time per model (wall clock), so a busy machine still finishes in about
    # ten minutes; a model it stops is named in the result. None: no cap
    budget_s: float | None = 75.0
    # testing
    test_examples: int = 400  # per (distance, list length) cell
    seed: int = 0
    quick: bool = False
    device: str = "cpu"
    threads: int | None = None  # torch CPU threads; the caller sets them, this records them
    extra: dict = field(default_factory=dict)  # recorded in params as is

    def __post_init__(self):
        self.sizes = tuple(dict.fromkeys(self.sizes))
        self.models = tuple(dict.fromkeys(self.models))
        if not self.sizes:
            raise InvalidInputError("error.lab.recall.no-sizes")
        for size in self.sizes:
            _whole(size, Message("error.lab.part.sizes-entry"), self.gpt_head_dim)
            if size % self.gpt_head_dim:
                raise InvalidInputError(
                    "error.lab.recall.size-multiple", head=self.gpt_head_dim, got=size
                )
        check_models(self.models, RECALL_MODELS, RECURRENT)
        for name, flag in (
            ("gpt_layers", "--gpt-layers"),
            ("gpt_head_dim", "--gpt-head-dim"),
            ("rnn_layers", "--rnn-layers"),
            ("items", "--items"),
            ("queries", "--queries"),
            ("steps", "--steps"),
            ("batch", "--batch"),
            ("test_examples", "--test-examples"),
        ):
            _whole(getattr(self, name), flag)
        _whole(self.distance, "--distance", 0)
        _whole(self.seed, "--seed", 0)
        if self.items > MAX_ITEMS:
            raise InvalidInputError("error.lab.recall.items-most", items=self.items, most=MAX_ITEMS)
        if not isinstance(self.lr, (int, float)) or not (math.isfinite(self.lr) and self.lr > 0):
            raise InvalidInputError("error.lab.recall.lr", got=repr(self.lr))
        if self.budget_s is not None and not (
            isinstance(self.budget_s, (int, float))
            and math.isfinite(self.budget_s)
            and self.budget_s > 0
        ):
            raise InvalidInputError("error.lab.recall.budget", got=repr(self.budget_s))
        if self.threads is not None and self.threads < 1:
            raise InvalidInputError("error.lab.threads", got=self.threads)

    @classmethod
    def quick_settings(cls, **given) -> RecallConfig:
        """--quick: QUICK's settings under anything given explicitly."""
        return cls(**{**QUICK, "test_examples": QUICK_TEST_EXAMPLES, **given, "quick": True})

    def distances(self) -> list[int]:
        """The distances tested: 0, then doubling from 4, and the longest trained."""
        out = [0] + [d for d in (4, 8, 16, 32, 64, 128, 256) if d < self.distance]
        return sorted(set(out + [self.distance]))

    def list_lengths(self) -> list[int]:
        """The list lengths tested: 1, 2, 4, ... and the longest trained."""
        out = [p for p in (1, 2, 4, 8) if p < self.items]
        return sorted(set(out + [self.items]))
