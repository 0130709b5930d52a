"""TrainConfig: every setting of a training run, as plain JSON-ready values.

Field names match the ``lmscope train`` flags (``min_lr`` is ``--min-lr``). Defaults are
nanoGPT's Shakespeare-char settings for a CPU: context 64, batch 12, 4 layers, 4 heads,
128 dims, 2000 iterations, lr 1e-3 decayed by a cosine to 1e-4 after 100 warm-up steps,
AdamW with betas (0.9, 0.99) and weight decay 0.1, gradients clipped at 1.0, no dropout.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, fields, replace
from typing import ClassVar

from lmscope.errors import CheckpointError, InvalidInputError
from lmscope.models.fields import JsonConfig

OPTIMIZERS = ("adamw", "adam", "rmsprop")
BATCH_KINDS = ("random", "stream")
DEVICES = ("auto", "cpu", "cuda")
DTYPES = ("float32", "bfloat16")

# Settings that shape the model, the data or the batch sequence: a resumed run must keep them.
# Everything else (iterations, learning-rate schedule, clipping, evaluation, device) may change.
FIXED_ON_RESUME = (
    "arch",
    "data",
    "tokenizer",
    "val_fraction",
    "layers",
    "heads",
    "dim",
    "context",
    "dropout",
    "embed",
    "experts",
    "experts_used",
    "batch",
    "accum",
    "optimizer",
    "weight_decay",
    "beta1",
    "beta2",
    "batches",
    "seed",
)


@dataclass
class TrainConfig(JsonConfig):
    stored_as: ClassVar[str] = "the stored training config"
    # data
    data: str = "shakespeare"  # a bundled corpus name or a path to a text file or folder
    tokenizer: str = "char"  # char | bpe:N (trained on the training split) | gpt2
    val_fraction: float = 0.1
    # model
    arch: str = "gpt"
    layers: int = 4
    heads: int = 4
    dim: int = 128
    context: int = 64  # tokens per training window (the GPT's n_ctx)
    dropout: float = 0.0
    embed: int = 0  # char-RNNs: input embedding width; 0 means one-hot input (as char-rnn)
    experts: int = 4  # a mixture of experts (--arch moe): experts per block
    experts_used: int = 2  # a mixture of experts: experts each token goes through
    # optimisation
    batch: int = 12  # sequences per micro-batch, per process
    accum: int = 1  # micro-batches per optimizer step
    iters: int = 2000
    optimizer: str = "adamw"
    lr: float = 1e-3
    min_lr: float = 1e-4
    warmup: int = 100
    decay_iters: int | None = None  # cosine decay ends here; None means at ``iters``
    weight_decay: float = 0.1  # applied to matrices (dim >= 2) only
    beta1: float = 0.9
    beta2: float = 0.99  # for rmsprop: the squared-gradient average's decay (alpha)
    grad_clip: float = 1.0  # 0 turns clipping off
    batches: str | None = None  # random | stream; None means the architecture's default
    # evaluation, samples, output
    eval_every: int = 250  # 0: never
    eval_iters: int = 20  # batches per evaluation (per process)
    sample_every: int = 500  # 0: never
    sample_length: int = 200
    # iterations at which a sample with a fixed seed and prime joins the run's timeline
    # (timeline.json and timeline.md in the checkpoint folder); 0 means before training
    sample_at: list[int] = field(default_factory=list)
    log_every: int = 50  # iterations between log lines when there is no progress bar; 0: never
    seed: int = 1337
    out: str = "out"
    device: str = "auto"  # auto | cpu | cuda
    dtype: str = "float32"  # float32 | bfloat16 (autocast; weights stay float32)

    def with_overrides(self, **changes) -> TrainConfig:
        unknown = sorted(set(changes) - {f.name for f in fields(self)})
        if unknown:
            raise InvalidInputError(
                "error.training.unknown-settings", n=len(unknown), names=", ".join(unknown)
            )
        return replace(self, **changes)

    @property
    def lr_decay_iters(self) -> int:
        return self.iters if self.decay_iters is None else self.decay_iters

    def validate(self) -> TrainConfig:
        """Raise InvalidInputError naming the first unusable setting; return self."""
        for name in ("layers", "heads", "dim", "context", "batch", "accum", "sample_length"):
            _positive_int(self, name)
        for name in ("experts", "experts_used"):
            _positive_int(self, name)
        for name in ("iters", "warmup", "eval_every", "sample_every", "log_every", "seed"):
            _non_negative_int(self, name)
        if self.decay_iters is not None:
            _non_negative_int(self, "decay_iters")
        if self.eval_every:
            _positive_int(self, "eval_iters")
        _non_negative_int(self, "embed")
        if not isinstance(self.sample_at, (list, tuple)) or any(
            isinstance(i, bool) or not isinstance(i, int) or i < 0 for i in self.sample_at
        ):
            raise InvalidInputError("error.training.sample-at", got=f"{self.sample_at!r:.60}")
        # One message for every bad --lr (0, negative, nan), not one per way to be wrong.
        if not _is_number(self.lr) or not math.isfinite(self.lr) or self.lr <= 0:
            raise InvalidInputError(
                "error.value.number-above", name="--lr", low=0, got=repr(self.lr)
            )
        for name in ("min_lr", "weight_decay", "grad_clip"):
            value = getattr(self, name)
            if not _is_number(value) or not math.isfinite(value) or value < 0:
                raise InvalidInputError(
                    "error.value.number-at-least", name=f"--{_flag(name)}", low=0, got=repr(value)
                )
        if self.min_lr > self.lr:
            raise InvalidInputError("error.training.min-lr", min=str(self.min_lr), lr=str(self.lr))
        for name in ("beta1", "beta2"):
            value = getattr(self, name)
            if not _is_number(value) or not 0 <= value < 1:
                raise InvalidInputError("error.value.fraction", name=f"--{name}", got=repr(value))
        if not _is_number(self.dropout) or not 0 <= self.dropout < 1:
            raise InvalidInputError(
                "error.value.fraction", name="--dropout", got=repr(self.dropout)
            )
        if not _is_number(self.val_fraction) or not 0 < self.val_fraction < 1:
            raise InvalidInputError(
                "error.value.open-fraction", name="val_fraction", got=repr(self.val_fraction)
            )
        _choice(self, "optimizer", OPTIMIZERS)
        _choice(self, "device", DEVICES)
        _choice(self, "dtype", DTYPES)
        if self.batches is not None:
            _choice(self, "batches", BATCH_KINDS)
        parse_tokenizer_spec(self.tokenizer)
        if not isinstance(self.data, str) or not self.data.strip():
            raise InvalidInputError("error.training.data-empty")
        if not isinstance(self.out, str) or not self.out.strip():
            raise InvalidInputError("error.training.out-empty")
        return self


def parse_tokenizer_spec(spec: str) -> tuple[str, int | None]:
    """'char' -> ('char', None); 'bpe:2048' -> ('bpe', 2048); 'gpt2' -> ('gpt2', None)."""
    text = spec.strip().lower() if isinstance(spec, str) else ""
    if text in ("char", "gpt2"):
        return text, None
    if text.startswith("bpe:"):
        size = text[4:]
        if size.isdigit() and int(size) >= 257:
            return "bpe", int(size)
        raise InvalidInputError("error.training.bpe-size", spec=repr(spec))
    raise InvalidInputError("error.training.unknown-tokenizer", spec=f"{spec!r:.60}")


def _flag(name: str) -> str:
    return name.replace("_", "-")


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _positive_int(cfg: TrainConfig, name: str) -> None:
    value = getattr(cfg, name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInputError(
            "error.value.whole-at-least", name=f"--{_flag(name)}", low=1, got=f"{value!r:.40}"
        )


def _non_negative_int(cfg: TrainConfig, name: str) -> None:
    value = getattr(cfg, name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInputError(
            "error.value.whole-at-least", name=f"--{_flag(name)}", low=0, got=f"{value!r:.40}"
        )


def _choice(cfg: TrainConfig, name: str, allowed: tuple[str, ...]) -> None:
    value = getattr(cfg, name)
    if value not in allowed:
        raise InvalidInputError(
            "error.value.not-one-of",
            name=f"--{_flag(name)}",
            got=f"{value!r:.40}",
            known=", ".join(allowed),
        )


def same_data(saved: str, given: str) -> bool:
    """Whether two ``--data`` values name one corpus: the same text, or paths to the same
    file however written (relative to the working folder, absolute, through a link)."""
    if saved == given:
        return True
    try:
        return os.path.samefile(saved, given)
    except (OSError, TypeError, ValueError):  # a corpus name, a missing file
        return False


def check_resumable(saved: TrainConfig, wanted: TrainConfig, where: str) -> None:
    """Refuse to resume with settings that would make a different model or batch sequence."""
    for name in FIXED_ON_RESUME:
        before, now = getattr(saved, name), getattr(wanted, name)
        if name == "data" and same_data(before, now):
            continue
        if before != now:
            raise CheckpointError(
                "error.training.resume-setting",
                where=where,
                flag=f"--{_flag(name)}",
                now=str(now),
                before=str(before),
            )
