"""Sampling from a logits vector, returning the pool of tokens that survive each filter.

Pipeline (all maths in float64, results in float32):

1. temperature: ``log_softmax(logits / T)``. ``greedy=True``, ``T == 0`` and any
   ``T < GREEDY_TEMPERATURE`` mean greedy decoding: the pool is the argmax alone, lowest id on
   ties, and the filters below are skipped.
2. tokens whose tempered probability is exactly zero (``-inf`` masks, underflow) are dropped;
   stage ``"nonzero"`` counts the rest.
3. top-k keeps the ``k`` most likely tokens (exactly ``k``: ties at the boundary go to the
   lowest ids).
4. top-p keeps the smallest prefix whose cumulative probability is ``>= p``, always at least one
   token. Like Hugging Face ``transformers`` and vLLM, the probabilities it adds up are the
   tempered ones renormalised over the top-k survivors. ``p == 1`` keeps everything.
5. min-p keeps tokens with ``prob >= min_p * max_prob`` (the ratio is the same before or after
   renormalising, so this is relative to the max tempered probability).
6. the survivors are renormalised.

Logits may be a torch tensor of any real dtype and device, a numpy array or a list; NaN, +inf
and all-(-inf) vectors raise InvalidInputError (-inf alone is a mask). Pools live on the CPU.

Reproducibility contract: ``CandidatePool.sample`` draws exactly one float64 number from the
generator (``torch.rand``; the global torch RNG when ``generator`` is None) and maps it through
the pool's cumulative probabilities. So the same seed, the same params and the same logits values
(in any dtype that represents them exactly) give the same token, sequence after sequence, for a
given torch version on CPU. Greedy pools also consume one draw, so switching greedy on or off
does not shift the random stream of later steps.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import numpy as np
import torch

from lmscope.errors import InvalidInputError, checked_keywords

# Below this temperature sampling is treated as greedy (the T -> 0 limit).
GREEDY_TEMPERATURE = 1e-5

__all__ = [
    "GREEDY_TEMPERATURE",
    "CandidatePool",
    "SamplingParams",
    "apply_temperature",
    "candidate_pool",
    "make_generator",
    "sample_token",
]


# --- parameter validation -------------------------------------------------------------------


def _is_real(value: Any) -> bool:
    # bool is an int subclass; True as a temperature is a bug, not a number.
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _check_temperature(value: Any) -> float:
    if not _is_real(value) or not math.isfinite(value) or value < 0:
        raise InvalidInputError("error.sampling.temperature", got=repr(value))
    return float(value)


def _check_top_k(value: Any) -> int | None:
    if value is None:
        return None
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 0:
        raise InvalidInputError("error.sampling.top-k", got=repr(value))
    return int(value)


def _check_fraction(name: str, value: Any, allow_zero: bool) -> float | None:
    if value is None:
        return None
    low_ok = _is_real(value) and (value >= 0 if allow_zero else value > 0)
    if not low_ok or not value <= 1:  # `not <=` also rejects NaN
        interval = "[0, 1]" if allow_zero else "(0, 1]"
        raise InvalidInputError(
            "error.sampling.fraction", name=name, interval=interval, got=repr(value)
        )
    return float(value)


@dataclass(frozen=True)
class SamplingParams:
    """How to pick the next token. Validated on construction (InvalidInputError)."""

    temperature: float = 1.0  # >= 0; 0 or < GREEDY_TEMPERATURE means greedy
    top_k: int | None = None  # None or 0 = off; larger than the vocabulary = off
    top_p: float | None = None  # None = off; in (0, 1]
    min_p: float | None = None  # None = off; in [0, 1]
    greedy: bool = False

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise InvalidInputError for a bad field; store plain Python numbers otherwise."""
        if not isinstance(self.greedy, (bool, np.bool_)):
            raise InvalidInputError("error.sampling.greedy", got=repr(self.greedy))
        clean = {
            "temperature": _check_temperature(self.temperature),
            "top_k": _check_top_k(self.top_k),
            "top_p": _check_fraction("top_p", self.top_p, allow_zero=False),
            "min_p": _check_fraction("min_p", self.min_p, allow_zero=True),
            "greedy": bool(self.greedy),
        }
        # Frozen dataclass: normalise numpy scalars etc. so to_dict() is JSON-ready.
        for name, value in clean.items():
            object.__setattr__(self, name, value)

    @property
    def is_greedy(self) -> bool:
        return self.greedy or self.temperature < GREEDY_TEMPERATURE

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SamplingParams:
        """Build from a mapping such as parsed JSON; missing keys take their defaults."""
        if not isinstance(data, Mapping):
            raise InvalidInputError("error.sampling.params-mapping", type=type(data).__name__)
        known = [f.name for f in fields(cls)]
        unknown = sorted(str(key) for key in data if key not in known)
        if unknown:
            raise InvalidInputError(
                "error.sampling.unknown-params",
                n=len(unknown),
                names=", ".join(unknown),
                known=", ".join(known),
            )
        return cls(**data)


# --- logits and temperature -----------------------------------------------------------------


def _as_logits(logits: Any) -> torch.Tensor:
    """Any 1-D float vector (tensor, numpy array, list) -> float64 CPU tensor, checked."""
    if isinstance(logits, torch.Tensor):
        x = logits.detach().cpu()
    else:
        try:
            x = torch.from_numpy(np.array(logits))
        except (TypeError, ValueError, RuntimeError) as exc:
            raise InvalidInputError("error.sampling.logits-numbers", why=str(exc)) from None
    if x.dtype == torch.bool or x.is_complex() or not (x.is_floating_point() or _is_int(x)):
        raise InvalidInputError("error.sampling.logits-dtype", dtype=str(x.dtype))
    if x.ndim != 1:
        raise InvalidInputError("error.sampling.logits-shape", shape=str(tuple(x.shape)))
    if x.numel() == 0:
        raise InvalidInputError("error.sampling.logits-empty")
    x = x.to(torch.float64)
    # One cheap pass in the usual case: a NaN or an infinity makes the sum non-finite, and the
    # float64 sum of float32 numbers cannot overflow (a float64 input's may: then look closer).
    if math.isfinite(float(x.sum())) or bool(torch.isfinite(x).all()):
        return x
    if torch.isnan(x).any():
        raise InvalidInputError("error.sampling.logits-nan")
    if torch.isposinf(x).any():
        raise InvalidInputError("error.sampling.logits-inf")
    if torch.isneginf(x).all():
        raise InvalidInputError("error.sampling.logits-all-masked")
    return x


def _is_int(x: torch.Tensor) -> bool:
    return x.dtype in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def _scaled(
    x: torch.Tensor, temperature: float, high: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """(x - max) / T and its logsumexp: log_softmax(x / T) is their difference. ``high`` is
    x.max() when the caller has it already."""
    # Shift first: the max becomes exactly 0 and everything else <= 0, so dividing by a tiny T
    # can only overflow towards -inf (probability 0, the right limit), never to +inf or NaN.
    scaled = x - (x.max() if high is None else high)
    if temperature != 1.0:  # x / 1.0 is x: one pass over the vocabulary saved
        scaled = scaled / temperature
    # logsumexp subtracts the max (exactly 0 here) before exp, sum and log: the same numbers,
    # without its own pass to find that max
    return scaled, torch.exp(scaled).sum().log()


def _log_softmax(x: torch.Tensor, temperature: float) -> torch.Tensor:
    """Stable float64 log_softmax(x / T) for checked logits and T > 0."""
    scaled, lse = _scaled(x, temperature)
    return scaled - lse


# exp of a float64 above this is certainly > 0 (the smallest positive double is exp(-744.4))
_SURELY_NONZERO = -700.0


def _nonzero_count(scaled: torch.Tensor, lse: torch.Tensor) -> int:
    """How many tokens have probability > 0 in float64: exp(scaled - lse) > 0."""
    if float(scaled.min()) - float(lse) > _SURELY_NONZERO:  # 44 of margin dwarfs any rounding
        return int(scaled.numel())
    return int((torch.exp(scaled - lse) > 0).sum())


def _greedy_log_probs(x: torch.Tensor) -> torch.Tensor:
    """The T -> 0 limit with ties broken to the lowest id: log of a one-hot vector."""
    out = torch.full_like(x, -math.inf)
    out[int(torch.argmax(x))] = 0.0  # argmax returns the first maximal index
    return out


def _tempered_log_probs(x: torch.Tensor, temperature: float) -> torch.Tensor:
    if temperature < GREEDY_TEMPERATURE:
        return _greedy_log_probs(x)
    return _log_softmax(x, temperature)


def apply_temperature(logits: Any, temperature: float) -> torch.Tensor:
    """log_softmax(logits / T) as float32, same order as the input.

    Log-probabilities rather than scaled logits: they are finite or -inf for any valid input,
    whereas ``logits / 1e-4`` overflows float32. ``T < GREEDY_TEMPERATURE`` gives the greedy
    limit (0 at the argmax, -inf elsewhere).
    """
    x = _as_logits(logits)
    return _tempered_log_probs(x, _check_temperature(temperature)).to(torch.float32)


# --- the candidate pool ---------------------------------------------------------------------


@dataclass
class CandidatePool:
    """Tokens that survived every filter, most likely first (ties: lowest id first)."""

    token_ids: torch.Tensor  # int64 ids
    probs: torch.Tensor  # float32, renormalised over the pool, sums to 1
    original_probs: torch.Tensor  # float32 softmax(logits) at T = 1, what the model said
    tempered_probs: torch.Tensor  # float32 softmax(logits / T), before any filter
    stages: dict[str, int] = field(default_factory=dict)  # survivors after each stage
    params: SamplingParams = field(default_factory=SamplingParams)

    def __len__(self) -> int:
        return int(self.token_ids.numel())

    def __repr__(self) -> str:  # the dataclass repr printed its four tensors in full
        chosen = {k: v for k, v in vars(self.params).items() if v not in (None, False)}
        said = ", ".join(f"{k}={v}" for k, v in chosen.items())
        top = ", ".join(f"{i} {p:.1%}" for i, p in self.top(3))
        more = ", …" if len(self) > 3 else ""
        vocab = self.stages.get("vocab", len(self))
        return (
            f"CandidatePool({len(self):,} of {vocab:,} tokens ({said}): {top}{more}; "
            f"token_ids, probs, original_probs, tempered_probs [{len(self)}])"
        )

    def sample(self, generator: torch.Generator | None = None) -> int:
        """Draw one token id; consumes exactly one float64 from ``generator``."""
        u = float(torch.rand((), generator=generator, dtype=torch.float64))
        cdf = torch.cumsum(self.probs.to(torch.float64), dim=0)
        target = torch.tensor([u * float(cdf[-1])], dtype=torch.float64)
        index = int(torch.searchsorted(cdf, target, right=True)[0])
        # Rounding can put the target at the very end; fall back to the last token that has
        # probability (float32 may round a tail prob to 0, which must never be drawn).
        last_positive = int((self.probs > 0).sum()) - 1
        return int(self.token_ids[min(index, last_positive)])

    def top(self, n: int) -> list[tuple[int, float]]:
        """The ``n`` most likely pool tokens as (id, renormalised prob) pairs."""
        if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 0:
            raise InvalidInputError("error.value.integer-at-least", name="n", low=0, got=repr(n))
        ids = self.token_ids[:n].tolist()
        probs = self.probs[:n].tolist()
        return list(zip(ids, probs, strict=True))


def _top_p_count(log_probs: torch.Tensor, top_p: float) -> int:
    """Length of the smallest prefix (sorted log-probs) whose renormalised mass is >= top_p."""
    n = int(log_probs.numel())
    if top_p >= 1.0:
        return n  # every nonzero token is needed to reach exactly 1
    mass = torch.exp(log_probs - torch.logsumexp(log_probs, dim=0))
    cumulative = torch.cumsum(mass, dim=0)
    first = int(torch.searchsorted(cumulative, torch.tensor([top_p], dtype=torch.float64))[0])
    return min(first + 1, n)  # first == n only if rounding kept the sum below top_p


def _min_p_count(log_probs: torch.Tensor, min_p: float) -> int:
    """How many sorted tokens have prob >= min_p * max prob (compared in log space)."""
    if min_p <= 0.0:
        return int(log_probs.numel())
    threshold = float(log_probs[0]) + math.log(min_p)
    return int((log_probs >= threshold).sum())


def _filter_counts(
    sorted_log_probs: torch.Tensor, params: SamplingParams, nonzero: int
) -> dict[str, int]:
    """Apply top-k, top-p and min-p in turn to log-probs sorted descending (at least the
    prefix these filters read), after the ``nonzero`` tokens that can be drawn at all."""
    n = nonzero
    stages = {"nonzero": n}
    if params.top_k:
        n = min(n, params.top_k)
    stages["top_k"] = n
    if params.top_p is not None:
        n = _top_p_count(sorted_log_probs[:n], params.top_p)
    stages["top_p"] = n
    if params.min_p is not None:
        n = _min_p_count(sorted_log_probs[:n], params.min_p)
    stages["min_p"] = n
    return stages


def _prefix_needed(tempered: torch.Tensor, params: SamplingParams, nonzero: int) -> int:
    """How long a prefix of the sorted tokens the filters read: top-k reads only its k (top-p
    and min-p then look within them), min-p alone only the tokens above its threshold; top-p
    alone, or no filter, reads every token that can be drawn."""
    if params.top_k:
        return min(nonzero, params.top_k)
    if params.top_p is None and params.min_p:
        threshold = float(tempered.max()) + math.log(params.min_p)
        return min(nonzero, int((tempered >= threshold).sum()))
    return nonzero


def _sorted_prefix(log_probs: torch.Tensor, length: int) -> torch.Tensor:
    """Token ids by descending probability, ties in id order (a stable sort), at least the
    first ``length`` of them: the tokens at or above the length-th largest value are found by
    top-k and only they are sorted, instead of the whole vocabulary."""
    if 4 * length >= log_probs.numel():
        return torch.sort(log_probs, descending=True, stable=True).indices
    kth = torch.topk(log_probs, length, sorted=False).values.min()
    candidates = (log_probs >= kth).nonzero().squeeze(1)  # ascending ids
    return candidates[torch.sort(log_probs[candidates], descending=True, stable=True).indices]


def _renormalise(log_probs: torch.Tensor) -> torch.Tensor:
    return torch.exp(log_probs - torch.logsumexp(log_probs, dim=0))


@checked_keywords
def candidate_pool(logits: Any, params: SamplingParams | None = None) -> CandidatePool:
    """Run the sampling pipeline on a 1-D logits vector and return the surviving pool.

    The work is that of the pool asked for: greedy reads the vocabulary a few times and sorts
    nothing; top-k and min-p sort only their candidates."""
    if params is None:
        params = SamplingParams()
    if not isinstance(params, SamplingParams):
        raise InvalidInputError("error.sampling.params-type", type=type(params).__name__)
    if params.is_greedy:
        quick = _greedy_pool_float32(logits, params)
        if quick is not None:
            return quick
    x = _as_logits(logits)
    # greedy: the max and where it is first (the lowest id on ties) in one pass over raw
    # logits (tempering can merge near-ties)
    high, first = torch.max(x, dim=0) if params.is_greedy else (None, None)
    scaled, lse = _scaled(x, 1.0, high)  # log softmax at T = 1 is scaled - lse, read at the pool
    cold = params.temperature < GREEDY_TEMPERATURE
    warm = params.temperature == 1.0  # tempered = the T = 1 softmax: computed once

    if first is not None:
        ids = first.reshape(1)
        if cold:  # the T -> 0 limit: a one-hot at the argmax
            nonzero, tempered_at = 1, torch.zeros(1, dtype=torch.float64)
        else:
            t_scaled, t_lse = (scaled, lse) if warm else _scaled(x, params.temperature)
            nonzero, tempered_at = _nonzero_count(t_scaled, t_lse), t_scaled[ids] - t_lse
        counts = {"nonzero": nonzero, "top_k": 1, "top_p": 1, "min_p": 1}
    else:
        t_scaled, t_lse = (scaled, lse) if warm else _scaled(x, params.temperature)
        tempered = t_scaled - t_lse
        nonzero = _nonzero_count(t_scaled, t_lse)
        order = _sorted_prefix(tempered, _prefix_needed(tempered, params, nonzero))
        counts = _filter_counts(tempered[order], params, nonzero)
        ids = order[: counts["min_p"]]
        tempered_at = tempered[ids]

    return CandidatePool(
        token_ids=ids.to(torch.int64),
        probs=_renormalise(tempered_at).to(torch.float32),
        original_probs=torch.exp(scaled[ids] - lse).to(torch.float32),
        tempered_probs=torch.exp(tempered_at).to(torch.float32),
        stages={"vocab": int(x.numel()), **counts},
        params=params,
    )


def _greedy_pool_float32(logits: Any, params: SamplingParams) -> CandidatePool | None:
    """The greedy pool of a model's float32 logits, or None where the general path must decide.

    A generation step samples from 262,144 logits with Gemma 3, and the general path's checks
    and copies cost a few percent of the step. Greedy needs only the argmax and the softmax's
    normaliser: the same float64 numbers as the general path's (so the same pool, bit for
    bit), in one buffer worked in place. Anything unusual (another dtype, a NaN, an infinity,
    a tail so far down that float64 rounds it to 0) goes to the general path, which decides
    and words the error."""
    cold = params.temperature < GREEDY_TEMPERATURE
    if not (cold or params.temperature == 1.0):
        return None  # a tempered softmax needs its own pass
    if not (isinstance(logits, torch.Tensor) and logits.dtype == torch.float32):
        return None
    x = logits.detach().cpu()
    if x.ndim != 1 or x.numel() == 0:
        return None
    high, first = torch.max(x, dim=0)  # the first maximal index: the lowest id on ties
    top = float(high)
    if not math.isfinite(top):
        return None  # NaN, +inf, or every logit masked
    scaled = x.to(torch.float64).sub_(top)
    low = None if cold else float(scaled.min())  # cold: one token has it all, nothing to count
    lse = scaled.exp_().sum().log()
    if low is not None and low - float(lse) <= _SURELY_NONZERO:
        return None  # some tokens' probability is 0 in float64: the general path counts them
    original = torch.exp(-lse).reshape(1).to(torch.float32)
    one = torch.ones(1, dtype=torch.float32)
    n = int(x.numel())
    return CandidatePool(
        token_ids=first.reshape(1).to(torch.int64),
        probs=one,
        original_probs=original,
        tempered_probs=one.clone() if cold else original.clone(),
        stages={"vocab": n, "nonzero": 1 if cold else n, "top_k": 1, "top_p": 1, "min_p": 1},
        params=params,
    )


def sample_token(
    logits: Any,
    params: SamplingParams | None = None,
    generator: torch.Generator | None = None,
) -> int:
    """Pick one token id; see the module docstring for the reproducibility contract."""
    return candidate_pool(logits, params).sample(generator)


def make_generator(seed: int | None) -> torch.Generator:
    """A CPU generator seeded with ``seed`` (0 <= seed < 2**64), or non-deterministically."""
    generator = torch.Generator(device="cpu")
    if seed is None:
        generator.seed()
        return generator
    if not isinstance(seed, numbers.Integral) or isinstance(seed, bool) or not 0 <= seed < 2**64:
        raise InvalidInputError("error.sampling.seed", got=f"{seed!r:.40}")
    generator.manual_seed(int(seed))
    return generator


# a mistyped field (SamplingParams(temprature=0.7)) is one line naming the field meant
SamplingParams.__init__ = checked_keywords(SamplingParams.__init__)  # type: ignore[method-assign]
