"""Logit lens: what the model would predict if the residual stream stopped after each layer.

The residual stream after block L is passed through the model's own final norm (LayerNorm on
GPT-2, RMSNorm on the Llama family) and unembedding, exactly as the last block's output is.
After the last block this *is* the model's output, which the tests check.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from dataclasses import dataclass

import torch

from lmscope.engine import checks
from lmscope.engine.probs import log_probs
from lmscope.errors import InvalidInputError, checked_keywords


@dataclass
class LogitLens:
    stages: list[str]  # "embed", then "block 0" ... "block N-1"
    positions: list[int]
    top_ids: torch.Tensor  # [stage, position, k]
    top_probs: torch.Tensor  # [stage, position, k]
    final_ids: torch.Tensor  # [position]: the model's real top prediction
    final_rank: torch.Tensor  # [stage, position]: its rank at each stage (0 = top)
    final_prob: torch.Tensor  # [stage, position]: its probability at each stage

    def __repr__(self) -> str:  # the dataclass repr printed seven tensors in full
        S, T, k = self.top_ids.shape
        ends = ", ".join(self.stages) if S <= 3 else f"{self.stages[0]} … {self.stages[-1]}"
        return (
            f"LogitLens({S} stages ({ends}) x {T} positions, top {k}: top_ids, top_probs "
            f"{[S, T, k]}; final_ids {[T]}, final_rank, final_prob {[S, T]})"
        )

    def to_dict(self, pieces=None) -> dict:
        def label(i: int):
            return pieces(i) if pieces else int(i)

        return {
            "stages": self.stages,
            "positions": self.positions,
            "final": [{"id": int(i), "token": label(int(i))} for i in self.final_ids],
            "cells": [
                [
                    {
                        "top": [
                            {"id": int(i), "token": label(int(i)), "prob": round(float(p), 6)}
                            for i, p in zip(self.top_ids[s, j], self.top_probs[s, j], strict=True)
                        ],
                        "final_rank": int(self.final_rank[s, j]),
                        "final_prob": round(float(self.final_prob[s, j]), 6),
                    }
                    for j in range(len(self.positions))
                ]
                for s in range(len(self.stages))
            ],
        }


def residual_stages(trace) -> list[tuple[str, str]]:
    n_layer = trace.config.n_layer
    stages = [("embed", "blocks.0.hook_resid_pre")]
    stages += [(f"block {i}", f"blocks.{i}.hook_resid_post") for i in range(n_layer)]
    return stages


READOUT_ROWS = 256  # rows read out per matrix product: the unembedding read once per chunk


def _readout(trace, names: list[str], index: torch.Tensor) -> list[torch.Tensor]:
    """Log-probabilities of the residual streams ``names`` at positions ``index``, one tensor
    per name. The rows of every stage go through the unembedding together, in chunks: read
    out a stage at a time, a short window is a matrix-vector product that reads the whole
    unembedding matrix (tens of MB) once per stage, which cost more than the arithmetic."""
    rows = torch.cat([trace[name][index] for name in names])
    logps = torch.cat([log_probs(trace.readout(chunk)) for chunk in rows.split(READOUT_ROWS)])
    return list(logps.split(len(index)))


def _positions(T: int, positions) -> list[int]:
    """Every position (None), one (an int) or a list of them; negatives count back."""
    if positions is None:
        return list(range(T))
    if isinstance(positions, numbers.Integral) and not isinstance(positions, bool):
        positions = [positions]
    if isinstance(positions, str | bytes) or not isinstance(positions, Iterable):
        raise InvalidInputError("error.lens.positions-type", got=f"{positions!r:.40}")
    chosen = []
    for p in positions:
        if isinstance(p, bool) or not isinstance(p, numbers.Integral):
            raise InvalidInputError("error.check.position-type", got=f"{p!r:.40}")
        chosen.append(checks.position(T, int(p)))
    if not chosen:
        raise InvalidInputError("error.lens.positions-empty")
    return chosen


@checked_keywords
@torch.no_grad()
def logit_lens(trace, k: int = 5, positions: list[int] | None = None) -> LogitLens:
    """Top-k predictions at every stage and position, and how the final prediction ranks."""
    if trace.readout is None:
        raise InvalidInputError("error.lens.no-readout")
    T = len(trace)
    k = checks.at_least_one(k, "k")
    positions = _positions(T, positions)
    stages = residual_stages(trace)
    missing = [name for _, name in stages if name not in trace]
    if missing:
        raise InvalidInputError("error.lens.missing-residual", name=missing[0])
    logps = _readout(trace, [name for _, name in stages], torch.tensor(positions))
    final_ids = logps[-1].argmax(dim=-1)
    top_ids, top_probs, ranks, probs = [], [], [], []
    for logp in logps:
        values, ids = logp.topk(min(k, logp.shape[-1]), dim=-1)
        top_ids.append(ids)
        top_probs.append(values.exp())
        final_logp = logp.gather(-1, final_ids[:, None])
        ranks.append((logp > final_logp).sum(dim=-1))
        probs.append(final_logp.squeeze(-1).exp())
    return LogitLens(
        [s for s, _ in stages],
        positions,
        torch.stack(top_ids),
        torch.stack(top_probs),
        final_ids,
        torch.stack(ranks),
        torch.stack(probs),
    )
