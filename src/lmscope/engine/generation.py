"""Autoregressive generation with a KV cache, as a stream of tokens.

Each step feeds only the newest token: keys and values of earlier positions come from the cache,
so a step costs O(context) instead of re-running the whole prompt. When the context window is
full the window slides: the cache is rebuilt from the last ``n_ctx // 2`` tokens.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch

from lmscope.engine.sampling import SamplingParams, candidate_pool, make_generator
from lmscope.errors import InvalidInputError


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


def generate(
    model,
    prompt: str | Sequence[int],
    max_new_tokens: int = 20,
    params: SamplingParams | None = None,
    *,
    seed: int | None = None,
    stop_at_eot: bool = True,
    truncate: bool = False,
) -> Iterator[GeneratedToken]:
    """Yield up to ``max_new_tokens`` tokens sampled from ``model`` (a LanguageModel)."""
    if getattr(model, "family", "gpt") != "gpt":  # a char-RNN carries a state, not a KV cache
        return model.generate(
            prompt, max_new_tokens, params, seed=seed, stop_at_eot=stop_at_eot, truncate=truncate
        )
    if max_new_tokens < 0:
        raise InvalidInputError(f"max_new_tokens must be >= 0, got {max_new_tokens}")
    params = params or SamplingParams()
    ids = model.to_ids(prompt, truncate=truncate)
    return _stream(model, ids, max_new_tokens, params, make_generator(seed), stop_at_eot)


@torch.inference_mode()
def _stream(model, ids: list[int], max_new: int, params, generator, stop_at_eot: bool):
    gpt, n_ctx = model.gpt, model.config.n_ctx
    eot = getattr(model.tokenizer, "eot_id", None) if stop_at_eot else None
    cache = gpt.new_cache()
    pending = ids  # tokens not yet in the cache
    for _ in range(max_new):
        if cache.length + len(pending) > n_ctx:
            cache, pending = gpt.new_cache(), ids[-(n_ctx // 2) :]
        idx = torch.tensor([pending], device=model.device)
        logits = gpt(idx, cache=cache, last_only=True)[0][0, -1].float().cpu()
        pool = candidate_pool(logits, params)
        token = pool.sample(generator)
        where = (pool.token_ids == token).nonzero()[0, 0]
        ids = ids + [token]
        pending = [token]
        piece = model.tokenizer.piece(token).text if model.tokenizer is not None else None
        yield GeneratedToken(
            token,
            piece,
            float(pool.probs[where]),
            float(pool.original_probs[where]),
            len(pool.token_ids),
            len(ids) - 1,
        )
        if eot is not None and token == eot:
            return


def generate_ids(
    model, prompt, max_new_tokens: int = 20, params: SamplingParams | None = None, **kwargs
) -> list[int]:
    """The prompt's ids followed by the generated ones (convenience for tests and scripts)."""
    ids = model.to_ids(prompt, truncate=kwargs.get("truncate", False))
    new = [t.id for t in generate(model, ids, max_new_tokens, params, **kwargs)]
    return ids + new
