"""Ablations: switch parts of the model off and see what the prediction becomes.

The specs and the hook that applies them live in ``lmscope.engine.hooks`` (a trace can run with
ablations); this module measures their effect on the next-token prediction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from lmscope.engine import checks
from lmscope.engine.hooks import MODES, Ablation, Ablator, parse_ablations
from lmscope.engine.probs import log_probs
from lmscope.errors import InvalidInputError, checked_keywords

__all__ = ["MODES", "Ablation", "AblationEffect", "Ablator", "ablation_effect", "parse_ablations"]


@dataclass
class AblationEffect:
    ablations: list[str]
    mode: str
    position: int
    before: list[dict]  # top tokens without the ablation
    after: list[dict]  # top tokens with it
    diff: list[dict]  # union of both top lists: prob before, after, change
    kl: float  # KL(before || after) in nats over the whole vocabulary

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    def __repr__(self) -> str:
        # the dataclass repr printed three lists of ten token dicts (3,000 characters)
        def top(rows):
            return f"{rows[0]['token']!r} {rows[0]['prob']:.1%}" if rows else "-"

        return (
            f"AblationEffect({', '.join(self.ablations)} ({self.mode}) at position "
            f"{self.position}: top {top(self.before)} -> {top(self.after)}, "
            f"KL {self.kl:.4g} nats; .before, .after, .diff list the top {len(self.before)})"
        )


@checked_keywords
@torch.no_grad()
def ablation_effect(
    model, text_or_ids, ablate, *, mode: str = "zero", position: int = -1, k: int = 10
) -> AblationEffect:
    """Next-token distribution at ``position`` with and without the ablations."""
    if not model.capabilities.trace:
        raise InvalidInputError(
            "error.ablation.char-model",
            name=str(model.name),
            arch=model.capabilities.family.upper(),
        )
    k = min(checks.at_least_one(k, "k"), model.vocab_size)
    ablations = parse_ablations(ablate, model.config)
    ids = model.to_ids(text_or_ids)
    position = checks.position(len(ids), position)
    # A causal model's output at `position` depends on nothing later, so the pass can stop
    # there and compute one row of logits; a mean ablation averages over the whole prompt,
    # so it needs every position.
    end = len(ids) if mode == "mean" else position + 1
    idx = torch.tensor([ids[:end]], device=model.device)

    def next_token_logp(ablator: Ablator) -> torch.Tensor:
        logits = model.net(idx, hook=ablator, last_only=end == position + 1)[0][0]
        row = logits[-1 if end == position + 1 else position, : model.vocab_size]  # no padding
        return log_probs(row)

    # both passes take the probed path, so "ablate nothing" gives bitwise the same numbers
    before = next_token_logp(Ablator([]))
    after = next_token_logp(Ablator(ablations, mode))
    kl = float((before.exp() * (before - after)).sum())

    def label(i: int) -> str:
        return model.tokenizer.piece(i).text if model.tokenizer is not None else str(i)

    def top(logp):
        values, index = logp.topk(k)
        return [
            {"id": int(i), "token": label(int(i)), "prob": float(v.exp())}
            for v, i in zip(values, index, strict=True)
        ]

    union = list(dict.fromkeys([r["id"] for r in top(before)] + [r["id"] for r in top(after)]))
    diff = [
        {
            "id": i,
            "token": label(i),
            "before": float(before[i].exp()),
            "after": float(after[i].exp()),
            "change": float(after[i].exp() - before[i].exp()),
        }
        for i in union
    ]
    return AblationEffect(
        [str(a) for a in ablations],
        mode,
        position % len(ids),
        top(before),
        top(after),
        diff,
        kl if math.isfinite(kl) else float("inf"),
    )
