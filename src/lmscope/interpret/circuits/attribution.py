"""Direct logit attribution: what each part of the model wrote toward one logit.

The residual stream after the last block is a sum: the token embedding (and GPT-2's position
embedding), every attention head's output, every MLP's output, and any output-projection
biases. The logit of a token is that sum through the final norm, then a dot product with the
token's row of the unembedding. The final norm divides by the stream's own scale (and GPT-2's
LayerNorm subtracts its mean): with that scale frozen at the value of the real run, the norm
is linear, and the logit splits exactly into one term per part. That frozen scale is the
approximation: it says what each part wrote along the token's direction *in this run*, not
what the logit would be without it (a part's removal would change the scale too; ablation
measures that).

With ``versus``, the direction is the difference of two tokens' rows, and the parts add up to
the difference of their logits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from lmscope.errors import InvalidInputError, checked_keywords
from lmscope.interpret.circuits.common import answer_ids, floats, pieces, transformer, unembedding
from lmscope.models.gpt2 import LayerNorm
from lmscope.models.llama import RMSNorm


@dataclass
class Attribution:
    ids: list[int]
    position: int
    token: int
    versus: int | None
    logit: float  # the model's logit (or logit difference) at ``position``
    contributions: dict[str, float]  # embed, pos_embed, L{l}H{h}, mlp{l}
    remainder: dict[str, float]  # the constant terms: attention output biases, the norm's bias
    heads: torch.Tensor  # [layer, head], the same numbers as the L{l}H{h} contributions
    mlps: torch.Tensor  # [layer]
    tokens: list[str] = field(default_factory=list, repr=False)
    token_text: str = ""
    versus_text: str | None = None

    @property
    def total(self) -> float:
        """The contributions and the remainder added up: the logit, up to rounding."""
        return sum(self.contributions.values()) + sum(self.remainder.values())

    def largest(self, k: int = 10) -> list[tuple[str, float]]:
        """The k contributions of largest size, largest first."""
        return sorted(self.contributions.items(), key=lambda kv: -abs(kv[1]))[:k]

    def to_json(self) -> dict:
        return {
            "ids": list(self.ids),
            "tokens": list(self.tokens),
            "position": self.position,
            "token": {"id": self.token, "text": self.token_text},
            "versus": None
            if self.versus is None
            else {"id": self.versus, "text": self.versus_text},
            "logit": self.logit,
            "contributions": dict(self.contributions),
            "remainder": dict(self.remainder),
            "total": self.total,
            "heads": floats(self.heads),
            "mlps": floats(self.mlps),
        }

    def __repr__(self) -> str:
        what = repr(self.token_text) + (f" - {self.versus_text!r}" if self.versus_text else "")
        top = ", ".join(f"{name} {value:+.2f}" for name, value in self.largest(3))
        return (
            f"Attribution({what} at position {self.position}: logit {self.logit:.3f} = "
            f"{len(self.contributions)} contributions + remainder; largest {top})"
        )


def _names(n_layer: int) -> list[str]:
    return [
        "hook_embed",
        "hook_pos_embed",
        *(f"blocks.{layer}.attn.hook_z" for layer in range(n_layer)),
        *(f"blocks.{layer}.hook_mlp_out" for layer in range(n_layer)),
        "ln_final.hook_scale",
        "logits",
    ]


@checked_keywords
@torch.no_grad()
def attribute(
    model,
    text: str | Sequence[int],
    token: int | str,
    versus: int | str | None = None,
    *,
    position: int = -1,
) -> Attribution:
    """Split the logit of ``token`` (minus that of ``versus``, when given) after ``position``
    (default the last) into what the embedding, every head and every MLP wrote (see the
    module's text). ``token`` and ``versus`` are ids or texts of one token each."""
    transformer(model)
    ids = model.to_ids(text)
    if isinstance(position, bool) or not isinstance(position, int):
        raise InvalidInputError("error.circuits.position-kind", value=repr(position)[:40])
    if not -len(ids) <= position < len(ids):
        raise InvalidInputError(
            "error.circuits.no-position", position=position, n=len(ids), last=len(ids) - 1
        )
    position %= len(ids)
    target, other = answer_ids(model, token, versus, ("token", "versus"))
    net, config = model.net, model.config
    trace = model.trace(ids[: position + 1], names=_names(config.n_layer), keep_logits="all")
    t = trace.tensors
    w_u = unembedding(net).float()
    direction = w_u[target] - (w_u[other] if other is not None else 0.0)
    logits = t["logits"][-1].float()
    logit = float(logits[target] - (logits[other] if other is not None else 0.0))

    norm = net.ln_f
    if isinstance(norm, LayerNorm):
        centre = True
    elif isinstance(norm, RMSNorm):
        centre = False
    else:
        raise InvalidInputError("error.circuits.unknown-norm", norm=type(norm).__name__)
    scale = t["ln_final.hook_scale"][-1].float()  # [1]: the run's own, frozen
    gain = norm.weight.float()
    along = direction * gain / scale  # what a unit of the stream adds to the logit

    def through_norm(vectors: torch.Tensor) -> torch.Tensor:
        """[..., d_model] parts of the last residual -> their terms of the logit."""
        vectors = vectors.float()
        if centre:
            vectors = vectors - vectors.mean(-1, keepdim=True)
        return vectors @ along

    contributions = {"embed": float(through_norm(t["hook_embed"][-1]))}
    if "hook_pos_embed" in t:
        contributions["pos_embed"] = float(through_norm(t["hook_pos_embed"][-1]))
    remainder: dict[str, float] = {}
    heads, mlps, attn_bias = [], [], 0.0
    for layer in range(config.n_layer):
        attn = net.h[layer].attn
        z = t[f"blocks.{layer}.attn.hook_z"][-1:]  # [1, head, d_head]: the last position
        results = attn.head_results(z)[0]  # [head, d_model]
        heads.append(through_norm(results))
        bias = getattr(attn, "c_proj", getattr(attn, "o_proj", None))
        if bias is not None and bias.bias is not None:
            attn_bias += float(through_norm(bias.bias))
        mlps.append(through_norm(t[f"blocks.{layer}.hook_mlp_out"][-1]))
    head_grid, mlp_row = torch.stack(heads), torch.stack(mlps)
    for layer in range(config.n_layer):
        for head in range(config.n_head):
            contributions[f"L{layer}H{head}"] = float(head_grid[layer, head])
    for layer in range(config.n_layer):
        contributions[f"mlp{layer}"] = float(mlp_row[layer])
    if attn_bias:
        remainder["attn_bias"] = attn_bias
    norm_bias = getattr(norm, "bias", None)
    if norm_bias is not None:
        remainder["norm_bias"] = float(norm_bias.float() @ direction)
    return Attribution(
        ids,
        position,
        target,
        other,
        logit,
        contributions,
        remainder,
        head_grid,
        mlp_row,
        pieces(model, ids),
        pieces(model, [target])[0],
        None if other is None else pieces(model, [other])[0],
    )
