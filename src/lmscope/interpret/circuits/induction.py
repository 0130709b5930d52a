"""Induction and previous-token heads, found on repeated random tokens.

T random token ids, then the same T ids again (after a BOS where the model's tokenizer starts
every text with one). In the second copy every token has been seen before, so a head that
looks at the token that *followed* the earlier occurrence of the current token, and copies it,
predicts the rest of the sequence: an induction head. Its attention from position i of the
second copy goes to i - T + 1. A previous-token head attends from i to i - 1; an induction
head needs one in an earlier layer (to know which token came before each position).

Per layer and head:

- the induction score: the mean, over the positions i of the second copy, of the attention
  weight from i to i - T + 1;
- the previous-token score: the mean, over the same positions, of the weight from i to i - 1.

And per position, the loss of predicting the next token: on random tokens the first copy
cannot be predicted (about ln(vocab) nats); in the second copy the loss collapses when the
model has induction heads.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from lmscope.engine.probs import log_probs
from lmscope.errors import InvalidInputError, checked_keywords
from lmscope.interpret.circuits.common import (
    checked_head,
    checked_layer,
    floats,
    pieces,
    transformer,
)


@dataclass
class InductionScores:
    """What ``induction_scores`` found. ``scores`` and ``previous_token`` are [layer, head];
    ``loss`` has one value per position but the last: ``loss[i]`` is the loss (nats) of
    predicting ``ids[i + 1]``; ``patterns`` is every head's attention, [layer, head, query,
    key]."""

    ids: list[int]
    length: int
    seed: int
    bos: bool  # whether a BOS opens the sequence (the model's tokenizer adds one)
    scores: torch.Tensor
    previous_token: torch.Tensor
    loss: torch.Tensor
    patterns: torch.Tensor = field(repr=False)
    tokens: list[str] = field(default_factory=list, repr=False)

    @property
    def start(self) -> int:
        """Where the first copy starts (1 after a BOS, else 0)."""
        return 1 if self.bos else 0

    @property
    def second_copy(self) -> range:
        return range(self.start + self.length, self.start + 2 * self.length)

    def copy_losses(self) -> tuple[float, float]:
        """Mean loss over the first copy's tokens (but its first, which nothing predicts) and
        over the second copy's tokens."""
        s, T = self.start, self.length
        first = self.loss[s : s + T - 1]  # predicting ids s+1 .. s+T-1
        second = self.loss[s + T - 1 : s + 2 * T - 1]  # predicting ids s+T .. s+2T-1
        return float(first.mean()), float(second.mean())

    def top(self, k: int = 5, *, previous: bool = False) -> list[tuple[str, float]]:
        """The k heads with the highest induction (or previous-token) scores, as
        ``("L3H2", score)``, highest first."""
        grid = self.previous_token if previous else self.scores
        n_head = grid.shape[1]
        values, index = grid.flatten().topk(min(k, grid.numel()))
        return [
            (f"L{int(i) // n_head}H{int(i) % n_head}", float(v))
            for v, i in zip(values, index, strict=True)
        ]

    def pattern(self, layer: int, head: int) -> torch.Tensor:
        """One head's attention over the sequence, [query, key]."""
        n_layer, n_head = self.patterns.shape[:2]
        return self.patterns[checked_layer(n_layer, layer), checked_head(n_head, head)]

    def to_json(self) -> dict:
        first, second = self.copy_losses()
        return {
            "ids": list(self.ids),
            "tokens": list(self.tokens),
            "length": self.length,
            "seed": self.seed,
            "bos": self.bos,
            "scores": floats(self.scores),
            "previous_token": floats(self.previous_token),
            "loss": floats(self.loss),
            "loss_first_copy": first,
            "loss_second_copy": second,
            "top_induction": [{"head": h, "score": s} for h, s in self.top()],
            "top_previous_token": [{"head": h, "score": s} for h, s in self.top(previous=True)],
        }

    def __repr__(self) -> str:
        first, second = self.copy_losses()
        top = ", ".join(f"{h} {s:.2f}" for h, s in self.top(3))
        return (
            f"InductionScores({len(self.ids)} tokens, T={self.length}, seed {self.seed}: "
            f"top induction heads {top}; loss {first:.2f} -> {second:.2f} nats)"
        )


def random_repeated_ids(model, length: int, seed: int) -> tuple[list[int], bool]:
    """[BOS] + T random ids + the same T ids, and whether the BOS is there. The ids are drawn
    (uniformly, with repeats) from the vocabulary without its special tokens."""
    tokenizer = model.tokenizer
    bos_id = getattr(tokenizer, "bos_id", None)
    bos = (
        tokenizer is not None and bool(getattr(tokenizer, "add_bos", False)) and bos_id is not None
    )
    special = set(getattr(tokenizer, "special_tokens", {}).values()) if tokenizer else set()
    if bos_id is not None:
        special.add(bos_id)
    allowed = torch.tensor([i for i in range(model.vocab_size) if i not in special])
    generator = torch.Generator().manual_seed(seed)
    draw = allowed[torch.randint(len(allowed), (length,), generator=generator)].tolist()
    return ([bos_id] if bos else []) + draw + draw, bos


@checked_keywords
@torch.no_grad()
def induction_scores(model, *, length: int = 50, seed: int = 0) -> InductionScores:
    """Induction and previous-token scores of every head, and the loss at every position, on
    ``length`` random tokens repeated once (see the module's text)."""
    transformer(model)
    if isinstance(length, bool) or not isinstance(length, int) or length < 2:
        raise InvalidInputError("error.circuits.length-kind", value=repr(length)[:40])
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidInputError("error.circuits.seed-kind", value=repr(seed)[:40])
    context = model.capabilities.context
    bos = 1 if getattr(model.tokenizer, "add_bos", False) else 0
    if context is not None and 2 * length + bos > context:
        raise InvalidInputError(
            "error.circuits.length-too-long", length=length, n=2 * length + bos, context=context
        )
    ids, has_bos = random_repeated_ids(model, length, seed)
    trace = model.trace(ids, names=["blocks.*.attn.hook_pattern", "logits"], keep_logits="all")
    n_layer = model.config.n_layer
    patterns = torch.stack([trace[f"blocks.{layer}.attn.hook_pattern"] for layer in range(n_layer)])
    patterns = patterns.float()  # [layer, head, query, key]
    start = 1 if has_bos else 0
    queries = torch.arange(start + length, start + 2 * length)
    scores = patterns[:, :, queries, queries - length + 1].mean(-1)
    previous = patterns[:, :, queries, queries - 1].mean(-1)
    logits = trace["logits"][:, : model.vocab_size]
    targets = torch.tensor(ids[1:])
    loss = -log_probs(logits[:-1]).gather(-1, targets[:, None]).squeeze(-1)
    return InductionScores(
        ids, length, seed, has_bos, scores, previous, loss, patterns, pieces(model, ids)
    )
