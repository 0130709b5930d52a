"""Streaming generation for the page's Generate buttons, one JSON object per token.

Each new token is drawn with its own generator, seeded from (seed, position). So a token depends
only on the seed, the sampling settings and the text before it: pressing "Generate" five times
gives the same text as "Generate 5", and a page reload with the same seed repeats a run.
Generation stops at the context length instead of sliding the window, because the page traces
the whole sequence afterwards.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import torch

from lmscope.engine.sampling import SamplingParams, candidate_pool, make_generator

_MASK64 = (1 << 64) - 1


def position_seed(seed: int, position: int) -> int:
    """SplitMix64 of (seed, position): neighbouring positions get unrelated random streams."""
    z = (seed + (position + 1) * 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def fresh_seed() -> int:
    return secrets.randbits(63)


def sample_at(logits: torch.Tensor, params: SamplingParams, seed: int, position: int):
    """The token the page would append at ``position`` given the logits before it."""
    pool = candidate_pool(logits, params)
    token = pool.sample(make_generator(position_seed(seed, position)))
    where = int((pool.token_ids == token).nonzero()[0, 0])
    return token, pool, where


def stream(
    model,
    gate,
    ids: list[int],
    n: int,
    params: SamplingParams,
    seed: int,
    stop_at_eot: bool = True,
) -> Iterator[dict]:
    """Yield up to ``n`` token events, then one ``done`` event with the reason it stopped.

    The gate is held for one step at a time, so other requests interleave with a long run.
    """
    gpt = model.gpt
    eot = getattr(model.tokenizer, "eot_id", None) if stop_at_eot else None
    room = model.config.n_ctx - len(ids)
    cache = gpt.new_cache()
    pending = list(ids)
    ids = list(ids)
    for _ in range(min(n, room)):
        with gate, torch.inference_mode():
            idx = torch.tensor([pending], device=model.device)
            logits = gpt(idx, cache=cache, last_only=True)[0][0, -1].float().cpu()
        position = len(ids)
        token, pool, where = sample_at(logits, params, seed, position)
        ids.append(token)
        pending = [token]
        yield {
            "type": "token",
            "id": token,
            "text": model.tokenizer.piece(token).text if model.tokenizer else f"#{token}",
            "position": position,
            "prob": float(pool.probs[where]),
            "model_prob": float(pool.original_probs[where]),
            "pool_size": len(pool),
            "seed": seed,
        }
        if eot is not None and token == eot:
            yield {"type": "done", "reason": "end of text", "seed": seed}
            return
    reason = "context full" if n > room else "done"
    yield {"type": "done", "reason": reason, "seed": seed}
