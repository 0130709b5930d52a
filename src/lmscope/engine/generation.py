"""The one generation loop: read the prompt once, then sample a token and feed it back.

It runs over the model protocol's ``start``/``step`` (next-token logits plus a state: a KV cache
for a Transformer, the hidden state for an RNN), so GPT-2, Llama-family models and char-RNNs,
the CLI, the Python API and the web stream all generate through this code.

Two ways to seed: one generator for the whole run (``seed``), or ``per_position=True``, where
each token is drawn with its own generator seeded from (seed, position). Then a token depends
only on the seed, the settings and the text before it: generating 1 token five times gives the
same text as generating 5 at once, which the page relies on.
"""

from __future__ import annotations

import contextlib
import difflib
import inspect
import numbers
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import torch

from lmscope.engine.sampling import SamplingParams, candidate_pool, make_generator
from lmscope.errors import ArgumentError, InvalidInputError, unknown_keyword

_MASK64 = (1 << 64) - 1


@dataclass
class GeneratedToken:
    id: int
    text: str | None  # readable piece (partial UTF-8 shown as <0x..>), None without a tokenizer
    prob: float  # probability under the sampling pool it was drawn from
    model_prob: float  # the model's own probability for it (softmax at T=1)
    pool_size: int  # how many candidates survived temperature/top-k/top-p/min-p
    position: int  # its index in the full sequence

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def position_seed(seed: int, position: int) -> int:
    """SplitMix64 of (seed, position): neighbouring positions get unrelated random streams."""
    z = (seed + (position + 1) * 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def generate(
    model,
    prompt: str | Sequence[int],
    max_new_tokens: int = 20,
    params: SamplingParams | None = None,
    *,
    seed: int | None = None,
    stop_at_eot: bool | None = None,
    truncate: bool = False,
    per_position: bool = False,
    stop_when_full: bool = False,
    lock=None,
    **encode_options,
) -> TokenStream:
    """Yield up to ``max_new_tokens`` tokens sampled from ``model`` (any ``lmscope.load`` model).

    ``stop_at_eot`` (default: on for Transformers, off for char-RNNs) ends at the end-of-text
    token. When a Transformer's context fills up, the window slides (the cache is rebuilt from
    the last half), or generation ends with ``stop_when_full``. ``lock`` (a context manager) is
    held around each model step, so other work can interleave with a long run."""
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, numbers.Integral):
        raise InvalidInputError(
            "error.value.integer", name="max_new_tokens", got=f"{max_new_tokens!r:.40}"
        )
    if max_new_tokens < 0:
        raise InvalidInputError(
            "error.value.at-least", name="max_new_tokens", low=0, got=str(max_new_tokens)
        )
    if params is not None and not isinstance(params, SamplingParams):
        raise InvalidInputError("error.generate.params-type", type=type(params).__name__)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)):
        raise InvalidInputError("error.generate.seed-type", got=f"{seed!r:.40}")
    if lock is not None and not (hasattr(lock, "__enter__") and hasattr(lock, "__exit__")):
        raise InvalidInputError("error.generate.lock-type", type=type(lock).__name__)
    _check_encode_options(model, encode_options)
    ids = model.to_ids(prompt, truncate=truncate, **encode_options)
    if stop_at_eot is None:
        stop_at_eot = model.capabilities.kind == "transformer"
    eot = getattr(model.tokenizer, "eot_id", None) if stop_at_eot else None
    return TokenStream(
        model,
        ids,
        int(max_new_tokens),
        params or SamplingParams(),
        seed,
        eot,
        per_position,
        stop_when_full,
        lock or contextlib.nullcontext(),
    )


def _check_encode_options(model, options: dict) -> None:
    """The keywords generate passes on to encoding; any other is named in one line, and a
    sampling setting (temperature=0.7, as transformers takes it) is pointed to ``params``."""
    unknown = sorted(set(options) - set(getattr(model, "encode_options", ())))
    if not unknown:
        return
    name = unknown[0]
    meant = (
        [name]
        if name in _SAMPLING_FIELDS
        else difflib.get_close_matches(name, _SAMPLING_FIELDS, n=1)
    )
    if meant:
        raise ArgumentError(
            "error.generate.sampling-option",
            name=repr(name),
            meant=meant[0],
            value=f"{options[name]!r:.20}",
        )
    own = [p for p in inspect.signature(generate).parameters if p not in _NOT_KEYWORDS]
    raise unknown_keyword("generate", name, [*own, *sorted(model.encode_options)])


_SAMPLING_FIELDS = frozenset(f.name for f in fields(SamplingParams))
_NOT_KEYWORDS = ("model", "encode_options")


class TokenStream:
    """A generation run: an iterator of GeneratedToken, one model step per token after the first
    (which reads the prompt). Between tokens it says which step it needs next (``pending``), so
    a server can run that step for several runs at once and hand each its result
    (``provide``); the tokens drawn are the same either way."""

    def __init__(self, model, ids, max_new, params, seed, eot, per_position, stop_when_full, lock):
        self.model, self.ids, self.max_new, self.params = model, ids, max_new, params
        self.eot, self.per_position, self.stop_when_full = eot, per_position, stop_when_full
        self.lock = lock
        self.context = model.capabilities.context
        if per_position and seed is None:
            seed = secrets.randbits(63)
        self.seed = seed
        self.generator = None if per_position else make_generator(seed)
        self.state = None
        self.count = 0  # tokens drawn so far
        self._given = None  # (logits, state) a caller computed for the next step
        # what reads the prompt: model.start, or a caller's stand-in with the same result (a
        # server's model.start_from a trace it kept), run when the first token is drawn
        self.begin = model.start

    def __iter__(self):
        return self

    def ended(self) -> bool:
        """No token will come: n reached, end of text drawn, or the context full."""
        if self.count >= self.max_new:
            return True
        if self.count and self.eot is not None and self.ids[-1] == self.eot:
            return True
        full = self.stop_when_full and self.context is not None
        return full and len(self.ids) >= self.context

    @property
    def pending(self) -> tuple[Any, int] | None:
        """(state, token): the model step the next token needs, or None (the run is over, the
        next token reads the prompt, or the step was provided already)."""
        if self.count == 0 or self._given is not None or self.ended():
            return None
        return self.state, self.ids[-1]

    def provide(self, logits: torch.Tensor, state: Any) -> None:
        """The result of ``pending``'s step, computed by the caller (``model.step_many``)."""
        self._given = (logits, state)

    def __next__(self) -> GeneratedToken:
        if self.ended():
            raise StopIteration
        position = len(self.ids)
        if self._given is not None:
            (logits, self.state), self._given = self._given, None
        else:
            with self.lock, torch.inference_mode():
                if self.count == 0:
                    logits, self.state = self.begin(self.ids)
                else:
                    logits, self.state = self.model.step(self.state, self.ids[-1])
        generator = self.generator
        if self.per_position:
            generator = make_generator(position_seed(self.seed, position))
        pool = candidate_pool(logits, self.params)
        token = pool.sample(generator)
        where = int((pool.token_ids == token).nonzero()[0, 0])
        self.ids.append(token)
        self.count += 1
        tokenizer = self.model.tokenizer
        return GeneratedToken(
            token,
            tokenizer.piece(token).text if tokenizer is not None else None,
            float(pool.probs[where]),
            float(pool.original_probs[where]),
            len(pool.token_ids),
            position,
        )


def generate_ids(
    model, prompt, max_new_tokens: int = 20, params: SamplingParams | None = None, **kwargs
) -> list[int]:
    """The prompt's ids followed by the generated ones (convenience for tests and scripts)."""
    ids = model.to_ids(prompt, truncate=kwargs.get("truncate", False))
    new = [t.id for t in generate(model, ids, max_new_tokens, params, **kwargs)]
    return ids + new
