"""The page's Generate buttons: tokens from the one generation loop
(``lmscope.engine.generation``), one JSON event per token, then why it stopped.

Each token is drawn with its own generator, seeded from (seed, position). So a token depends
only on the seed, the sampling settings and the text before it: pressing "Generate" five times
gives the same text as "Generate 5", and a page reload with the same seed repeats a run.
Generation stops at the context length instead of sliding the window, because the page traces
the whole sequence afterwards. The model gate is held for one step at a time, so other
requests interleave with a long run.

When several pages generate at once, their queued steps run as one batch (``steps_together``):
one step reads the weights for all of them, which on a CPU costs little more than one run's
step. A batched step's float32 sums are grouped differently (its logits differ from a lone
step's by about 1e-5), so a seed repeats its text exactly except where two candidates are that
close, which sampling almost never meets.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import torch

from lmscope.engine.generation import TokenStream, generate
from lmscope.engine.sampling import SamplingParams
from lmscope.errors import InvalidInputError, LmscopeError
from lmscope.web.error_codes import error_body
from lmscope.web.schemas import GeneratedEvent


def fresh_seed(bits: int = 52) -> int:  # 52: the page gets it back exactly (a JS number)
    return secrets.randbits(bits)


def events(
    model,
    gate,
    ids: list[int],
    n: int,
    params: SamplingParams,
    seed: int,
    stop_at_eot: bool,
    trace=None,
    lang: str = "en",
) -> tuple[Iterator[GeneratedEvent], TokenStream]:
    """Up to ``n`` token events, then one ``done`` event with the reason it stopped (end of
    text, context full, done); an error on the way ends the stream with an ``error`` event.
    Also the run itself, whose model steps ``steps_together`` may batch with other runs'.
    With ``trace`` (of ``ids``, holding the model's ``cache_probes``) the run starts from its
    keys, values and last logits instead of reading the prompt again."""
    context = model.capabilities.context
    if context is not None and len(ids) >= context:
        raise InvalidInputError("error.web.context-full", context=context)
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
    if trace is not None:  # on the first token's job, not here: it copies every layer's k, v
        tokens.begin = lambda ids: model.start_from(trace)
    return _stream(model, tokens, n, seed, stop_at_eot, lang), tokens


# The work queue's group for generation steps: queued steps of several runs go as one batch.
GROUP = "generation"


def steps_together(model):
    """The work queue's batcher for ``GROUP``: of a batch of generation jobs, the runs that
    need a model step get it from one ``model.step_many``, which reads the weights once for
    all of them (a step of SmolLM2 costs about the same for one run as for several)."""

    def run(jobs) -> None:
        runs = [job.payload for job in jobs if isinstance(job.payload, TokenStream)]
        runs = [r for r in runs if r.pending is not None]
        if len(runs) < 2:
            return
        states, tokens = zip(*(r.pending for r in runs), strict=True)
        with torch.inference_mode():
            results = model.step_many(list(states), list(tokens))
        for r, (logits, state) in zip(runs, results, strict=True):
            r.provide(logits, state)

    return run


def error_event(err: LmscopeError, lang: str = "en") -> GeneratedEvent:
    """The stream's last line when an error stops it: the error's line (in ``lang``), its
    catalog id and values, as an error answer has them (``web.error_codes``)."""
    return GeneratedEvent(type="error", **error_body(err, lang))


def _stream(
    model, tokens, n: int, seed: int, stop_at_eot: bool, lang: str = "en"
) -> Iterator[GeneratedEvent]:
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
        yield error_event(err, lang)
        return
    if eot is not None and last == eot:
        reason = "end of text"
    else:
        reason = "context full" if count < n else "done"
    yield GeneratedEvent(type="done", reason=reason, seed=seed)
