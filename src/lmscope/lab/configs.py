"""The lab experiments' settings, checked when they are made.

Each experiment runs from one of these dataclasses: ``serial_depth`` from
``SerialDepthConfig``, ``memory_wall`` from ``MemoryWallConfig``, ``gradient_flow`` from
``GradientFlowConfig`` and ``race`` from ``RaceConfig``. A wrong value is one line naming the
CLI flag that sets it. They live apart from the experiments, and import neither PyTorch nor
NumPy, so that ``lmscope --help`` shows their defaults without starting either.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from lmscope.errors import InvalidInputError
from lmscope.i18n import Message
from lmscope.lab.choices import check_models
from lmscope.lab.timing import check_clock

MEMORY_METHODS = ("naive", "sdpa", "lstm")
DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8}
GRADIENT_MODELS = ("rnn", "lstm", "gru", "gpt")
GRADIENT_STATES = ("init", "trained")
RACE_MODELS = ("lstm", "gpt", "gru", "rnn")
RECURRENT = ("lstm", "gru", "rnn")


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _whole_numbers(cfg, flags: dict[str, str], low: int = 1) -> None:
    """Refuse a setting that is not a whole number >= ``low``: ``flags`` maps field -> flag."""
    for name, flag in flags.items():
        value = getattr(cfg, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            said = (
                "error.lab.whole-number-part"
                if isinstance(flag, Message)
                else "error.lab.whole-number"
            )
            raise InvalidInputError(said, flag=flag, low=low, value=repr(value))


def _check_threads(threads: int | None) -> None:
    if threads is not None and threads < 1:
        raise InvalidInputError("error.lab.threads", got=threads)


@dataclass
class SerialDepthConfig:
    max_n: int | None = None  # cap on every size list
    repeats: int = 3  # at least; more while they disagree (lmscope.lab.timing)
    quick: bool = False  # smaller sizes, for a first look or a slow machine
    devices: list[str] = field(default_factory=lambda: ["cpu"])
    a: float = 0.9
    seed: int = 0
    clock: str = "wall"  # or "cpu": see lmscope.lab.timing
    threads: int | None = None  # torch CPU threads; the caller sets them, this records them

    def __post_init__(self):
        if self.max_n is not None and self.max_n < 1:
            raise InvalidInputError("error.lab.at-least-one", flag="--max-n", got=self.max_n)
        if self.repeats < 1:
            raise InvalidInputError("error.lab.at-least-one", flag="--repeats", got=self.repeats)
        if not (math.isfinite(self.a) and -1.0 <= self.a <= 1.0):
            # |a| > 1 makes h grow like a^N: every method overflows long before N = 65,536
            raise InvalidInputError("error.lab.a-range", got=self.a)
        _check_threads(self.threads)
        check_clock(self.clock, self.devices, self.threads)

    def sizes(self, full: list[int], quick: list[int] | None = None) -> list[int]:
        """The size list in use: the quick one when asked, capped at --max-n."""
        chosen = quick if (self.quick and quick is not None) else full
        if self.max_n is None:
            return list(chosen)
        return [n for n in chosen if n <= self.max_n] or [self.max_n]


@dataclass
class MemoryWallConfig:
    min_n: int = 256
    max_n: int = 16_384
    heads: int = 12
    d_head: int = 64
    batch: int = 1
    dtype: str = "float32"
    device: str = "cpu"
    budget_bytes: int | None = None  # None: a share of the available memory (memory_wall)
    repeats: int = 3  # at least; more while they disagree (lmscope.lab.timing)
    methods: tuple[str, ...] = MEMORY_METHODS
    threads: int | None = None
    clock: str = "wall"  # or "cpu": see lmscope.lab.timing
    kv_dtypes: tuple[str, ...] = field(default=("float32", "float16"))

    def __post_init__(self):
        for name in ("min_n", "max_n", "heads", "d_head", "batch", "repeats"):
            value = getattr(self, name)
            if value < 1:
                raise InvalidInputError("error.lab.at-least-one", flag=_flag(name), got=value)
        if self.min_n > self.max_n:
            raise InvalidInputError("error.lab.min-over-max", low=self.min_n, high=self.max_n)
        if self.dtype not in DTYPE_BYTES:
            raise InvalidInputError("error.lab.dtype", known=", ".join(DTYPE_BYTES))
        if self.budget_bytes is not None and self.budget_bytes <= 0:
            raise InvalidInputError("error.lab.budget-bytes", got=self.budget_bytes)
        unknown = [m for m in self.methods if m not in MEMORY_METHODS]
        if unknown or not self.methods:
            raise InvalidInputError("error.lab.methods", known=", ".join(MEMORY_METHODS))
        _check_threads(self.threads)
        check_clock(self.clock, [self.device], self.threads)

    @property
    def bytes_per_element(self) -> int:
        return DTYPE_BYTES[self.dtype]

    def sizes(self) -> list[int]:
        """min_n, 2*min_n, 4*min_n, ... up to max_n."""
        out, n = [], self.min_n
        while n <= self.max_n:
            out.append(n)
            n *= 2
        return out


@dataclass
class GradientFlowConfig:
    max_k: int = 256
    data: str = "warpeace-novel"  # where the measured sequences (and training text) come from
    embed: int = 64  # input embedding width of every model (the GPT's d_model)
    gpt_layers: int = 4
    gpt_heads: int = 4
    rnn_layers: int = 1
    batches: int = 4
    batch_size: int = 8
    states: tuple[str, ...] = ("init",)
    train_iters: int = 300  # for state "trained"
    archs: tuple[str, ...] = GRADIENT_MODELS
    seed: int = 0
    threads: int | None = None
    extra: dict = field(default_factory=dict)  # recorded in params as is

    def __post_init__(self):
        # a fall per step needs two distances: k = 1 alone gave a NaN factor and no result
        _whole_numbers(self, {"max_k": _flag("max_k")}, low=2)
        names = ("embed", "gpt_layers", "gpt_heads", "rnn_layers", "batches")
        names += ("batch_size", "train_iters")
        _whole_numbers(self, {name: _flag(name) for name in names})
        if self.embed % self.gpt_heads:
            raise InvalidInputError("error.lab.embed-heads", embed=self.embed, heads=self.gpt_heads)
        if not self.states:
            raise InvalidInputError("error.lab.state-none")
        bad = [s for s in self.states if s not in GRADIENT_STATES]
        if bad:
            raise InvalidInputError("error.lab.state-unknown", state=bad[0])
        if not self.archs:
            raise InvalidInputError("error.lab.models.none", known=", ".join(GRADIENT_MODELS))
        bad = [a for a in self.archs if a not in GRADIENT_MODELS]
        if bad:
            raise InvalidInputError(
                "error.lab.models.unknown-some", model=bad[0], known=", ".join(GRADIENT_MODELS)
            )


@dataclass
class RaceConfig:
    budget_s: float = 240.0  # training time per model, on ``clock``
    context: int = 512  # N: characters per training window
    batch: int = 8
    models: tuple[str, ...] = ("lstm", "gpt")
    data: str = "shakespeare"
    gpt_layers: int = 4
    gpt_heads: int = 4
    gpt_dim: int = 128
    rnn_layers: int = 2
    device: str = "cpu"
    clock: str = "wall"
    threads: int | None = None  # torch CPU threads; the caller sets them, this records them
    eval_points: int = 12  # evaluations spread evenly over the budget (the last at the end)
    eval_batches: int = 8  # validation batches per evaluation
    seed: int = 1337
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.budget_s, (int, float)) or not math.isfinite(self.budget_s):
            raise InvalidInputError("error.lab.budget-seconds", got=repr(self.budget_s))
        if self.budget_s <= 0:
            raise InvalidInputError("error.lab.budget-positive", got=f"{self.budget_s:g}")
        names = ("batch", "gpt_layers", "gpt_heads", "gpt_dim", "rnn_layers", "eval_points")
        names += ("eval_batches",)
        _whole_numbers(
            self,
            {"context": Message("error.lab.part.context"), **{name: _flag(name) for name in names}},
        )
        if self.gpt_dim % self.gpt_heads:
            raise InvalidInputError("error.lab.dim-heads", dim=self.gpt_dim, heads=self.gpt_heads)
        check_models(self.models, RACE_MODELS, RECURRENT, "lstm,gpt")
        self.models = tuple(dict.fromkeys(self.models))
        _check_threads(self.threads)
        check_clock(self.clock, [self.device], self.threads)
