"""Ablations: switch parts of the model off and see what the prediction becomes.

An ablation is a probe-level intervention, not a modified copy of the model: the hook replaces
a head's z (before the output projection), a whole attention output or a whole MLP output with
zeros or with its mean over the prompt's positions, and the forward pass carries on from there.

Specs people type: ``L5H3`` or ``5.3`` (head 3 of layer 5), ``L5H*`` (every head of layer 5),
``attn5`` / ``L5.attn`` (the whole attention output of layer 5), ``mlp5`` / ``L5.mlp``,
``attn*`` / ``mlp*`` / ``L*H*`` (every layer).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import torch

from lmscope.errors import InvalidInputError

MODES = ("zero", "mean")
_HEAD = re.compile(r"^(?:L(\d+|\*)H(\d+|\*)|(\d+)\.(\d+|\*))$", re.IGNORECASE)
_PART = re.compile(r"^(?:(attn|mlp)(\d+|\*)|L(\d+|\*)\.(attn|mlp))$", re.IGNORECASE)


@dataclass(frozen=True)
class Ablation:
    kind: str  # "head", "attn" or "mlp"
    layer: int
    head: int | None = None

    def __str__(self) -> str:
        return f"L{self.layer}H{self.head}" if self.kind == "head" else f"{self.kind}{self.layer}"

    @property
    def probe(self) -> str:
        return {
            "head": f"blocks.{self.layer}.attn.hook_z",
            "attn": f"blocks.{self.layer}.hook_attn_out",
            "mlp": f"blocks.{self.layer}.hook_mlp_out",
        }[self.kind]


def _expand(value: str | None, count: int, what: str, spec: str) -> list[int]:
    if value == "*":
        return list(range(count))
    index = int(value)
    if not 0 <= index < count:
        raise InvalidInputError(f"{spec!r}: {what} {index} does not exist (0..{count - 1})")
    return [index]


def parse_ablations(specs, config) -> list[Ablation]:
    """Turn specs (strings or Ablation objects) into validated Ablations for ``config``."""
    if isinstance(specs, str | Ablation):
        specs = [specs]
    out: list[Ablation] = []
    for spec in specs:
        if isinstance(spec, Ablation):
            spec = str(spec)
        text = str(spec).strip()
        if m := _HEAD.match(text):
            layer_s, head_s = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
            for layer in _expand(layer_s, config.n_layer, "layer", text):
                for head in _expand(head_s, config.n_head, "head", text):
                    out.append(Ablation("head", layer, head))
        elif m := _PART.match(text):
            kind, layer_s = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
            for layer in _expand(layer_s, config.n_layer, "layer", text):
                out.append(Ablation(kind.lower(), layer))
        else:
            raise InvalidInputError(
                f"cannot read ablation {text!r}; use L5H3 (a head), L5H* (a layer's heads), "
                "attn5 or mlp5 (a whole sublayer), attn* / mlp* (every layer)"
            )
    return list(dict.fromkeys(out))  # drop repeats, keep order


class Ablator:
    """A hook that applies ablations, then hands every tensor on to ``inner`` (a recorder)."""

    def __init__(self, ablations: list[Ablation], mode: str = "zero", inner=None):
        if mode not in MODES:
            raise InvalidInputError(f"ablation mode must be 'zero' or 'mean', got {mode!r}")
        self.mode, self.inner = mode, inner
        self.targets: dict[str, list[int | None]] = {}
        for a in ablations:
            self.targets.setdefault(a.probe, []).append(a.head)

    def wants(self, name: str) -> bool:
        return self.inner is not None and getattr(self.inner, "wants", lambda n: True)(name)

    def __call__(self, name: str, tensor: torch.Tensor) -> torch.Tensor:
        heads = self.targets.get(name)
        if heads is not None:
            tensor = self._ablate(tensor, heads)
        return self.inner(name, tensor) if self.inner is not None else tensor

    def _ablate(self, t: torch.Tensor, heads: list[int | None]) -> torch.Tensor:
        t = t.clone()
        # heads index dim 2 of hook_z [batch, pos, head, d_head]; a sublayer output goes whole
        index = (slice(None), slice(None), heads) if heads[0] is not None else (slice(None),)
        if self.mode == "zero":
            t[index] = 0.0
        else:
            t[index] = t[index].mean(dim=1, keepdim=True)  # broadcast over positions
        return t


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


@torch.no_grad()
def ablation_effect(
    model, text_or_ids, ablate, *, mode: str = "zero", position: int = -1, k: int = 10
) -> AblationEffect:
    """Next-token distribution at ``position`` with and without the ablations."""
    ablations = parse_ablations(ablate, model.config)
    ids = model.to_ids(text_or_ids)
    if not -len(ids) <= position < len(ids):
        raise InvalidInputError(f"position must be in 0..{len(ids) - 1}, got {position}")
    position %= len(ids)
    # A causal model's output at `position` depends on nothing later, so the pass can stop
    # there and compute one row of logits; a mean ablation averages over the whole prompt,
    # so it needs every position.
    end = len(ids) if mode == "mean" else position + 1
    idx = torch.tensor([ids[:end]], device=model.device)

    def next_token_logp(ablator: Ablator) -> torch.Tensor:
        logits = model.gpt(idx, hook=ablator, last_only=end == position + 1)[0][0]
        return torch.log_softmax(logits[-1 if end == position + 1 else position].float(), -1)

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
