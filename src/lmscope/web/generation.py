"""The page's Generate buttons: tokens from the one generation loop
(``lmscope.engine.generation``), one JSON event per token, then why it stopped.

Each token is drawn with its own generator, seeded from (seed, position). So a token depends
only on the seed, the sampling settings and the text before it: pressing "Generate" five times
gives the same text as "Generate 5", and a page reload with the same seed repeats a run.
Generation stops at the context length instead of sliding the window, because the page traces
the whole sequence afterwards. The model gate is held for one step at a time, so other
requests interleave with a long run.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

from lmscope.engine.generation import generate
from lmscope.engine.sampling import SamplingParams
from lmscope.errors import InvalidInputError, LmscopeError
from lmscope.web.error_codes import error_code
from lmscope.web.schemas import GeneratedEvent


def fresh_seed(bits: int = 52) -> int:  # 52: the page gets it back exactly (a JS number)
    return secrets.randbits(bits)


def events(
    model, gate, ids: list[int], n: int, params: SamplingParams, seed: int, stop_at_eot: bool
) -> Iterator[GeneratedEvent]:
    """Up to ``n`` token events, then one ``done`` event with the reason it stopped (end of
    text, context full, done); an error on the way ends the stream with an ``error`` event."""
    context = model.capabilities.context
    if context is not None and len(ids) >= context:
        raise InvalidInputError(
            f"the sequence already fills the model's context of {context} tokens"
        )
    tokens = generate(
        model,
        list(ids),
        n,
        params,
        seed=seed,
        stop_at_eot=stop_at_eot,
        per_position=True,
        stop_when_full=True,
        lock=gate,
    )
    return _stream(model, tokens, n, seed, stop_at_eot)


def _stream(model, tokens, n: int, seed: int, stop_at_eot: bool) -> Iterator[GeneratedEvent]:
    eot = getattr(model.tokenizer, "eot_id", None) if stop_at_eot else None
    count, last = 0, None
    try:
        for t in tokens:
            count, last = count + 1, t.id
            text = t.text if t.text is not None else f"#{t.id}"
            yield GeneratedEvent(
                type="token",
                id=t.id,
                text=text,
                position=t.position,
                prob=t.prob,
                model_prob=t.model_prob,
                pool_size=t.pool_size,
                seed=seed,
            )
    except LmscopeError as err:
        code, params = error_code(str(err))
        yield GeneratedEvent(type="error", error=str(err), code=code, params=params)
        return
    if eot is not None and last == eot:
        reason = "end of text"
    else:
        reason = "context full" if count < n else "done"
    yield GeneratedEvent(type="done", reason=reason, seed=seed)
