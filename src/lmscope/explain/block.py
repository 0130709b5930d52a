"""One Transformer block at one position: its LayerNorms, Q/K/V and head outputs, the
projection, the residual additions, the MLP, and what dropout would do in training."""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import BaseModel, Field

from lmscope.engine.trace import Trace
from lmscope.explain.modern import (
    Curve,
    RMSNormView,
    activation_curve,
    design,
    mlp_pre_post,
    norm_parts,
    rmsnorm_view,
)
from lmscope.explain.numbers import number, rounded
from lmscope.explain.probes import read
from lmscope.explain.values import ActivationStats, Vector, stats, vector

EXAMPLE_DROPOUT = 0.1  # the rate shown when the model was trained without dropout


class LayerNormView(BaseModel):
    kind: Literal["layernorm"] = "layernorm"
    input: Vector
    mean: float
    std: float = Field(..., description="sqrt(var + eps), the probe hook_scale")
    normalized: Vector
    gamma: list[float]
    beta: list[float] | None = Field(..., description="null: the norm has no shift (RMSNorm)")
    output: Vector
    eps: float


class DropoutExample(BaseModel):
    model_rate: float
    example_rate: float
    probe: str
    zeroed: list[int]
    after: list[float]


class LayerResponse(BaseModel):
    layer: int
    position: int
    resid_pre: Vector
    ln1: LayerNormView | RMSNormView = Field(..., discriminator="kind")
    q: list[list[float]] = Field(..., description="[head][d_head] at this position")
    k: list[list[float]]
    v: list[list[float]]
    z: list[list[float]] = Field(..., description="[head][d_head]: attention-weighted values")
    head_results: list[Vector] = Field(..., description="z_h @ W_O[h] per head, bias excluded")
    attn_bias: list[float] | None = Field(..., description="b_O; null where there is none")
    attn_out: Vector
    resid_mid: Vector
    ln2: LayerNormView | RMSNormView = Field(..., discriminator="kind")
    mlp_pre: Vector
    mlp_post: Vector
    mlp_pre_stats: ActivationStats
    mlp_post_stats: ActivationStats
    mlp_out: Vector
    resid_post: Vector
    activation: str
    activation_curve: Curve | None = Field(..., description="the activation over mlp_pre's range")
    dropout: DropoutExample


def _rounded_or_none(t: torch.Tensor | None) -> list[float] | None:
    return None if t is None else rounded(t)


def output_bias(attn) -> torch.Tensor | None:
    """The bias the attention output projection adds after the heads (GPT-2's b_O)."""
    proj = getattr(attn, "c_proj", None)
    return getattr(proj, "bias", None)


def layernorm(model, trace: Trace, position: int, which: str, layer: int = 0) -> LayerNormView:
    """A LayerNorm at ``position``: ``which`` is "ln1" (before attention) or "ln2" (before the
    MLP) of block ``layer``, or "final" (after the last block)."""
    ln, before, p = norm_parts(model, which, layer)
    x = trace[before][position]
    return LayerNormView(
        input=vector(x),
        mean=number(x.float().mean()),  # type: ignore[arg-type]  # None if not finite: see numbers.number
        std=number(trace[f"{p}.hook_scale"][position]),  # type: ignore[arg-type]  # None if not finite: see numbers.number
        normalized=vector(trace[f"{p}.hook_normalized"][position]),
        gamma=rounded(ln.weight),
        beta=_rounded_or_none(getattr(ln, "bias", None)),
        output=vector(trace[f"{p}.hook_out"][position]),
        eps=ln.eps,
    )


def norm_view(
    model, trace: Trace, position: int, which: str, layer: int = 0
) -> LayerNormView | RMSNormView:
    """The model's own norm at ``position`` (``which`` as in ``layernorm``): an RMSNorm shown as
    one (its rms, no mean taken away, no shift), a LayerNorm as a LayerNorm."""
    if design(model).norm == "RMSNorm":
        return rmsnorm_view(model, trace, position, which, layer)
    return layernorm(model, trace, position, which, layer)


def dropout_example(model, trace: Trace, layer: int, position: int) -> DropoutExample:
    """A train-mode dropout mask (seeded) on block ``layer``'s attention output: at the
    model's own rate, or at 0.1 when it was trained without dropout."""
    rate = model.config.dropout
    example = rate if rate > 0 else EXAMPLE_DROPOUT
    probe = f"blocks.{layer}.hook_attn_out"
    keep, dropped = trace.dropout_example(probe, p=example, seed=0)
    return DropoutExample(
        model_rate=rate,
        example_rate=example,
        probe=probe,
        zeroed=(~keep[position]).nonzero().flatten().tolist(),
        after=rounded(dropped[position]),
    )


# LayerResponse field -> probe of the block, for the vectors read at the position
VECTORS = {
    "resid_pre": "hook_resid_pre",
    "attn_out": "hook_attn_out",
    "resid_mid": "hook_resid_mid",
    "mlp_pre": "mlp.hook_pre",
    "mlp_post": "mlp.hook_post",
    "mlp_out": "hook_mlp_out",
    "resid_post": "hook_resid_post",
}


def layer_view(model, trace: Trace, layer: int, position: int) -> LayerResponse:
    p, i = f"blocks.{layer}", position

    def at(name: str) -> torch.Tensor:
        return read(trace, f"{p}.{name}")[i]

    pre, post = mlp_pre_post(model, trace, layer, i)  # a mixture of experts: its first expert's
    mlp = {"mlp_pre": pre, "mlp_post": post}
    return LayerResponse(
        layer=layer,
        position=i,
        # the checker cannot match fields to the keys of a dict
        **{n: vector(mlp[n] if n in mlp else at(probe)) for n, probe in VECTORS.items()},  # type: ignore[arg-type]
        **{name: rounded(at(f"attn.hook_{name}")) for name in ("q", "k", "v", "z")},  # type: ignore[arg-type]
        ln1=norm_view(model, trace, i, "ln1", layer),
        ln2=norm_view(model, trace, i, "ln2", layer),
        head_results=[vector(r) for r in at("attn.hook_result")],
        attn_bias=_rounded_or_none(output_bias(model.net.h[layer].attn)),
        mlp_pre_stats=stats(pre),
        mlp_post_stats=stats(post),
        activation=model.config.activation,
        activation_curve=activation_curve(model.config.activation, pre),
        dropout=dropout_example(model, trace, layer, i),
    )
