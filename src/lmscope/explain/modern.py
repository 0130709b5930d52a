"""What the Llama family (SmolLM2, Llama, Qwen2, Mistral) does differently from GPT-2, shown with
the model's real numbers: rotary positions (RoPE), RMSNorm, grouped-query attention and the
gated SwiGLU MLP.

Each view reads probes and weights only. Where it recomputes something the model already did
(a rotation, SiLU(gate) x up, post @ W_down), it is to show the parts adding up: the view
carries the largest difference from the recorded probe, which the tests hold near zero.

``design(model)`` says how an architecture does the steps that differ; the step builders
(``step_data``) pick their view from it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, cast

import torch
import torch.nn.functional as F
from pydantic import BaseModel, Field

from lmscope.engine.families import first
from lmscope.engine.trace import Trace
from lmscope.explain.attention import kv_head
from lmscope.explain.numbers import number, rounded
from lmscope.explain.probes import read
from lmscope.explain.values import ActivationStats, Vector, stats, vector

if TYPE_CHECKING:
    from lmscope.models.gpt2 import LayerNorm
    from lmscope.models.llama import RMSNorm


@dataclass(frozen=True)
class Design:
    """How an architecture does the steps where the families differ."""

    norm: str  # "LayerNorm" (centre, scale, shift) or "RMSNorm" (scale only)
    positions: str  # "learned" (vectors added to the embedding) or "rotary" (RoPE in attention)
    mlp: str  # "GELU" (up, activation, down), "SwiGLU" (gate and up, SiLU, down) or "GeGLU"

    @property
    def gated(self) -> bool:
        """The MLP multiplies an activated gate by an up projection (SwiGLU, GeGLU)."""
        return self.mlp in ("SwiGLU", "GeGLU")


DESIGNS = {
    "gpt2": Design(norm="LayerNorm", positions="learned", mlp="GELU"),
    "llama": Design(norm="RMSNorm", positions="rotary", mlp="SwiGLU"),
    "gemma3": Design(norm="RMSNorm", positions="rotary", mlp="GeGLU"),  # a tanh-GELU gate
}


def design(model) -> Design:
    """The design of ``model``'s family, or of the nearest family it builds on
    (``engine.families``); GPT-2's for the others."""
    return first(model.capabilities.family, DESIGNS) or DESIGNS["gpt2"]


# --- activation curves ------------------------------------------------------------------------

# config.activation -> (the name shown, the function the model applies)
ACTIVATIONS = {
    "silu": ("SiLU", F.silu),
    "gelu_new": ("GELU (tanh)", lambda x: F.gelu(x, approximate="tanh")),
    "gelu_pytorch_tanh": ("GELU (tanh)", lambda x: F.gelu(x, approximate="tanh")),
    "gelu": ("GELU", F.gelu),
    "relu": ("ReLU", F.relu),
}
CURVE_POINTS = 121


class Curve(BaseModel):
    """An activation function sampled over the range of the values it is applied to."""

    name: str
    x: list[float]
    y: list[float]


def activation_curve(activation: str, values: torch.Tensor) -> Curve | None:
    """The curve of ``activation`` from min(values, -4) to max(values, 4); None if unknown."""
    if activation not in ACTIVATIONS:
        return None
    name, fn = ACTIVATIONS[activation]
    v = values.detach().float()
    lo, hi = min(float(v.min()), -4.0), max(float(v.max()), 4.0)
    x = torch.linspace(lo, hi, CURVE_POINTS)
    return Curve(name=name, x=rounded(x), y=rounded(fn(x)))


# --- RoPE -------------------------------------------------------------------------------------

SHIFTS = (0, 1, 10, 100, 1000)  # how far the check moves both positions
MOVES = (1, 2, 5, 10)  # how far the contrast moves the query alone


class RotationFrequencies(BaseModel):
    theta: float = Field(..., description="rope_theta, the base of the frequencies")
    d_head: int
    rotary_dims: int = Field(
        ..., description="the first dims of a head that rotate (d_head unless partial)"
    )
    scaled: bool = Field(..., description="Llama 3's or LongRoPE's rescaling is applied")
    factors: Literal["short", "long"] | None = Field(
        None, description="LongRoPE: which factor list this prompt's length uses"
    )
    original_context: int | None = Field(
        None, description="LongRoPE: longer prompts than this use the long factors"
    )
    length: int = Field(..., description="the prompt's positions (LongRoPE's factors follow it)")
    attention_factor: float = Field(1.0, description="LongRoPE: cos and sin are multiplied by it")
    inv_freq: list[float] = Field(
        ..., description="per pair i (dims i, i + rotary_dims/2): rad/pos"
    )
    wavelength: list[float] = Field(..., description="positions per full turn, 2π / inv_freq")
    angle: list[float] = Field(..., description="per pair: the angle at this position, mod 2π")


class Rotated(BaseModel):
    before: Vector = Field(..., description="hook_q / hook_k")
    after: Vector = Field(..., description="hook_rot_q / hook_rot_k")


class ShiftedScore(BaseModel):
    shift: int
    query_at: int
    key_at: int
    distance: int
    score: float = Field(..., description="rotated q · rotated k (before the 1/√d_head scale)")


class RelativeCheck(BaseModel):
    """The same real q and k rotated to other positions: q·k follows the distance only."""

    query_position: int
    key_position: int
    recorded_score: float = Field(..., description="hook_attn_scores_raw[head, query, key]")
    same_distance: list[ShiftedScore] = Field(..., description="both moved by the same shift")
    max_abs_difference: float = Field(..., description="largest |score - score at shift 0|")
    relative_difference: float
    other_distance: list[ShiftedScore] = Field(..., description="the query moved alone")


class RopeStep(BaseModel):
    kind: Literal["rotary"] = "rotary"
    layer: int
    head: int
    kv_head: int
    position: int
    frequencies: RotationFrequencies
    q: Rotated
    k: Rotated
    rotation_max_error: float = Field(..., description="max |rotate(hook_q) - hook_rot_q|")
    check: RelativeCheck


def _rotate(model, x: torch.Tensor, position: int, layer: int, length: int) -> torch.Tensor:
    """One query or key vector [d_head] rotated to ``position`` by the model's own RoPE (that
    of ``layer``: Gemma 3's local and global layers rotate at different speeds) at the speeds
    of a sequence of ``length`` (LongRoPE's short or long factors: the prompt's, even where the
    check moves a position past it)."""
    return model.net.rotate(x.float()[None, None, :], [position], layer, length)[0, 0]


def _unrotated(trace: Trace, attention: str, which: str) -> torch.Tensor:
    """The q or k that RoPE rotates: the projection, or with QK-norm (Qwen3, Gemma 3) the
    normalized projection, when the trace holds it."""
    normed = f"{attention}.{which}_norm.hook_out"
    return trace[normed] if normed in trace else trace[f"{attention}.hook_{which}"]


def _key_position(trace: Trace, layer: int, head: int, position: int) -> int:
    """The earlier position the head attends to most from ``position`` (itself at 0)."""
    if position == 0:
        return 0
    row = read(trace, f"blocks.{layer}.attn.hook_pattern")[head, position, :position]
    return int(row.argmax())


def relative_check(model, trace: Trace, layer: int, head: int, position: int) -> RelativeCheck:
    a, kv = f"blocks.{layer}.attn", kv_head(trace, layer, head)
    i = position
    j = _key_position(trace, layer, head, i)
    q, k = _unrotated(trace, a, "q")[i, head], _unrotated(trace, a, "k")[j, kv]
    limit = model.config.n_ctx - 1
    length = len(trace.ids)

    def score(qi: int, kj: int, shift: int) -> ShiftedScore:
        dot = _rotate(model, q, qi, layer, length) @ _rotate(model, k, kj, layer, length)
        return ShiftedScore(
            shift=shift,
            query_at=qi,
            key_at=kj,
            distance=qi - kj,
            score=number(dot, 9),  # type: ignore[arg-type]  # None if not finite: see numbers.number
        )

    same = [score(i + s, j + s, s) for s in SHIFTS if i + s <= limit]
    moved = [score(i + s, j, s) for s in MOVES if i + s <= limit]
    base = same[0].score
    worst = max(abs(s.score - base) for s in same)
    return RelativeCheck(
        query_position=i,
        key_position=j,
        recorded_score=number(read(trace, f"{a}.hook_attn_scores_raw")[head, i, j], 9),  # type: ignore[arg-type]  # None if not finite: see numbers.number
        same_distance=same,
        max_abs_difference=worst,
        relative_difference=worst / max(abs(base), 1e-30),
        other_distance=moved,
    )


def rope_view(model, trace: Trace, layer: int, head: int, position: int) -> RopeStep:
    a, kv = f"blocks.{layer}.attn", kv_head(trace, layer, head)
    length = len(trace.ids)
    inv_freq = model.net.inv_freq_for(layer, length).float()
    q, rot_q = _unrotated(trace, a, "q")[position, head], trace[f"{a}.hook_rot_q"][position, head]
    k, rot_k = _unrotated(trace, a, "k")[position, kv], trace[f"{a}.hook_rot_k"][position, kv]
    error = (_rotate(model, q, position, layer, length) - rot_q.float()).abs().max()
    rot_error = (_rotate(model, k, position, layer, length) - rot_k.float()).abs().max()
    error = torch.maximum(error, rot_error)
    config = model.config
    longrope = config.longrope
    return RopeStep(
        layer=layer,
        head=head,
        kv_head=kv,
        position=position,
        frequencies=RotationFrequencies(
            theta=model.net.rope_theta_of(layer),
            d_head=config.d_head,
            rotary_dims=config.rotary_dims,
            scaled=config.rope_scaling is not None,
            factors=("long" if model.net.long_rope_at(length) else "short") if longrope else None,
            original_context=(
                config.rope_scaling["original_max_position_embeddings"] if longrope else None
            ),
            attention_factor=model.net.rope_scale,
            length=length,
            inv_freq=rounded(inv_freq),
            wavelength=rounded(2 * math.pi / inv_freq),
            angle=rounded(torch.remainder(position * inv_freq.double(), 2 * math.pi)),
        ),
        q=Rotated(before=vector(q), after=vector(rot_q)),
        k=Rotated(before=vector(k), after=vector(rot_k)),
        rotation_max_error=float(error),
        check=relative_check(model, trace, layer, head, position),
    )


# --- RMSNorm ----------------------------------------------------------------------------------


class RMSNormView(BaseModel):
    kind: Literal["rmsnorm"] = "rmsnorm"
    which: str = Field(..., description="ln1 (before attention), ln2 (before the MLP), final")
    input: Vector
    input_mean: float = Field(..., description="not subtracted: RMSNorm does not centre")
    mean_square: float
    eps: float
    rms: float = Field(..., description="sqrt(mean(x²) + eps), the probe hook_scale")
    normalized: Vector = Field(..., description="x / rms: root mean square 1, mean kept")
    normalized_rms: float
    gain: list[float] = Field(..., description="the learned per-dimension gain; no bias")
    output: Vector
    recompose_max_error: float = Field(..., description="max |normalized × gain - output|")


def norm_parts(model, which: str, layer: int) -> tuple[LayerNorm | RMSNorm, str, str]:
    """(the norm module, the probe before it, its probe prefix)."""
    if which == "final":
        last = model.config.n_layer - 1
        return model.net.ln_f, f"blocks.{last}.hook_resid_post", "ln_final"
    block = model.net.h[layer]
    before = f"blocks.{layer}.hook_resid_{'pre' if which == 'ln1' else 'mid'}"
    return (block.ln_1 if which == "ln1" else block.ln_2), before, f"blocks.{layer}.{which}"


def rmsnorm_view(model, trace: Trace, position: int, which: str, layer: int = 0) -> RMSNormView:
    norm, before, p = norm_parts(model, which, layer)
    x = trace[before][position].float()
    normalized = trace[f"{p}.hook_normalized"][position].float()
    output = trace[f"{p}.hook_out"][position].float()
    gain = cast("RMSNorm", norm).gain.detach().float()  # an RMSNorm design: an RMSNorm
    return RMSNormView(
        which=which,
        input=vector(x),
        input_mean=number(x.mean()),  # type: ignore[arg-type]  # None if not finite: see numbers.number
        mean_square=number(x.pow(2).mean()),  # type: ignore[arg-type]  # None if not finite: see numbers.number
        eps=norm.eps,
        rms=number(trace[f"{p}.hook_scale"][position]),  # type: ignore[arg-type]  # None if not finite: see numbers.number
        normalized=vector(normalized),
        normalized_rms=number(normalized.pow(2).mean().sqrt()),  # type: ignore[arg-type]  # None if not finite: see numbers.number
        gain=rounded(gain),
        output=vector(output),
        recompose_max_error=float((normalized * gain - output).abs().max()),
    )


# --- grouped-query attention ------------------------------------------------------------------


class KVCacheSize(BaseModel):
    """Bytes the KV cache holds: keys and values of every layer's key/value heads."""

    dtype: str
    bytes_per_value: int
    per_token: int = Field(..., description="2 × n_layer × n_kv_head × d_head × bytes")
    per_token_full: int = Field(..., description="the same with one kv head per query head")
    tokens: int
    at_prompt: int
    at_prompt_full: int
    context: int
    at_context: int
    at_context_full: int
    saved_fraction: float = Field(..., description="1 - n_kv_head / n_head")


class KVGroup(BaseModel):
    kv_head: int
    query_heads: list[int]


class Grouping(BaseModel):
    n_head: int
    n_kv_head: int
    group_size: int
    kv_head_of: list[int] = Field(..., description="per query head: the kv head it reads")
    groups: list[KVGroup]
    k_norm_by_kv_head: list[float]
    v_norm_by_kv_head: list[float]
    kv_cache: KVCacheSize


def kv_cache_size(model, n_kv: int, n_tokens: int) -> KVCacheSize:
    """The cache of ``n_tokens`` with ``n_kv`` key/value heads per layer, and with one per
    query head (multi-head attention), in the model's dtype."""
    c = model.config
    dtype = next(model.net.parameters()).dtype
    size = torch.empty((), dtype=dtype).element_size()
    per_head = 2 * c.n_layer * c.d_head * size  # a key and a value per layer
    context = model.capabilities.context or c.n_ctx
    return KVCacheSize(
        dtype=str(dtype).removeprefix("torch."),
        bytes_per_value=size,
        per_token=per_head * n_kv,
        per_token_full=per_head * c.n_head,
        tokens=n_tokens,
        at_prompt=per_head * n_kv * n_tokens,
        at_prompt_full=per_head * c.n_head * n_tokens,
        context=context,
        at_context=per_head * n_kv * context,
        at_context_full=per_head * c.n_head * context,
        saved_fraction=number(1 - n_kv / c.n_head),  # type: ignore[arg-type]  # finite
    )


def grouping(model, trace: Trace, layer: int, position: int) -> Grouping:
    a = f"blocks.{layer}.attn"
    n_head, n_kv = trace[f"{a}.hook_q"].shape[1], trace[f"{a}.hook_k"].shape[1]
    of = [kv_head(trace, layer, h) for h in range(n_head)]
    return Grouping(
        n_head=n_head,
        n_kv_head=n_kv,
        group_size=n_head // n_kv,
        kv_head_of=of,
        groups=[
            KVGroup(kv_head=g, query_heads=[h for h in range(n_head) if of[h] == g])
            for g in range(n_kv)
        ],
        k_norm_by_kv_head=rounded(trace[f"{a}.hook_k"][position].norm(dim=-1)),
        v_norm_by_kv_head=rounded(trace[f"{a}.hook_v"][position].norm(dim=-1)),
        kv_cache=kv_cache_size(model, n_kv, len(trace)),
    )


# --- SwiGLU -----------------------------------------------------------------------------------

TOP_FEATURES = 12


class GatedFeature(BaseModel):
    index: int
    gate: float
    silu_gate: float
    up: float
    post: float


class ExpertRouting(BaseModel):
    """Where a mixture of experts' router sent the token: the view's gate, up, post and output
    are those of the expert it weighs most (``shown``); ``mixed_output`` is the weighted sum of
    all its chosen experts' outputs, the probe hook_mlp_out."""

    n_expert: int
    probs: Vector = Field(..., description="the router's probability of every expert")
    chosen: list[int] = Field(..., description="the experts the token goes through, best first")
    weights: list[float] = Field(..., description="their weights in the mix")
    shown: int = Field(..., description="the expert whose numbers the view shows")
    tokens_per_expert: list[int] = Field(
        ..., description="how many of the prompt's tokens each expert was chosen for"
    )
    mixed_output: Vector = Field(..., description="the probe hook_mlp_out")


class SwiGLUStep(BaseModel):
    kind: Literal["swiglu"] = "swiglu"
    d_model: int
    d_mlp: int
    input: Vector = Field(..., description="ln2.hook_out: the RMSNorm before the MLP")
    gate: Vector = Field(..., description="x · W_gate, the probe mlp.hook_pre")
    up: Vector = Field(..., description="x · W_up, the probe mlp.hook_pre_linear")
    silu_gate: Vector = Field(..., description="SiLU(gate) = gate · sigmoid(gate)")
    post: Vector = Field(..., description="SiLU(gate) × up, the probe mlp.hook_post")
    output: Vector = Field(..., description="post · W_down, the probe hook_mlp_out")
    gate_stats: ActivationStats
    up_stats: ActivationStats
    post_stats: ActivationStats
    curve: Curve
    W_gate: list[int]
    W_up: list[int]
    W_down: list[int]
    strongest: list[GatedFeature] = Field(..., description="the features with the largest |post|")
    product_max_error: float = Field(..., description="max |SiLU(gate) × up - post|")
    down_max_error: float = Field(..., description="max |post · W_down - mlp_out|")
    routing: ExpertRouting | None = Field(None, description="a mixture of experts' choice")


def swiglu_view(model, trace: Trace, layer: int, position: int) -> SwiGLUStep:
    p = f"blocks.{layer}"
    mlp = model.net.h[layer].mlp
    routing = None
    if hasattr(mlp, "experts"):  # a mixture of experts: its first expert's numbers
        gate, up, post, out, mlp, routing = _first_expert(trace, p, mlp, position)
    else:
        gate = trace[f"{p}.mlp.hook_pre"][position].float()
        up = trace[f"{p}.mlp.hook_pre_linear"][position].float()
        post = trace[f"{p}.mlp.hook_post"][position].float()
        out = trace[f"{p}.hook_mlp_out"][position].float()
        if f"{p}.ln2_post.hook_normalized" in trace:
            # Gemma 3's sandwich: hook_mlp_out is after the MLP's post-norm; the MLP's own
            # output is what that norm took in, normalized times its scale
            normalized = trace[f"{p}.ln2_post.hook_normalized"][position]
            out = (normalized * trace[f"{p}.ln2_post.hook_scale"][position]).float()
    # SiLU in the Llama recipe; Gemma 3's GeGLU gates with tanh GELU (silu_gate then holds it)
    activation = getattr(model.config, "activation", "silu")
    silu = ACTIVATIONS[activation][1](gate)
    d_model, d_mlp = mlp.down_proj.weight.shape  # gate and up may be one matrix (Phi-3)
    with torch.no_grad():
        down = F.linear(post, mlp.down_proj.weight.float(), _float(mlp.down_proj.bias))
    order = post.abs().argsort(descending=True)[:TOP_FEATURES].tolist()
    return SwiGLUStep(
        d_model=d_model,
        d_mlp=d_mlp,
        input=vector(trace[f"{p}.ln2.hook_out"][position]),
        gate=vector(gate),
        up=vector(up),
        silu_gate=vector(silu),
        post=vector(post),
        output=vector(out),
        gate_stats=stats(gate),
        up_stats=stats(up),
        post_stats=stats(post),
        curve=activation_curve(activation, gate),  # type: ignore[arg-type]  # a known one
        W_gate=[d_model, d_mlp],
        W_up=[d_model, d_mlp],
        W_down=[d_mlp, d_model],
        strongest=[
            GatedFeature(
                index=i,
                gate=number(gate[i]),  # type: ignore[arg-type]  # None if not finite: see numbers.number
                silu_gate=number(silu[i]),  # type: ignore[arg-type]  # None if not finite: see numbers.number
                up=number(up[i]),  # type: ignore[arg-type]  # None if not finite: see numbers.number
                post=number(post[i]),  # type: ignore[arg-type]  # None if not finite: see numbers.number
            )
            for i in order
        ],
        product_max_error=float((silu * up - post).abs().max()),
        down_max_error=float((down - out).abs().max()),
        routing=routing,
    )


def mlp_pre_post(model, trace: Trace, layer: int, position: int):
    """The MLP's pre-activation (GPT-2: before GELU; SwiGLU: the gate) and post-activation at
    ``position``; in a mixture of experts, those of the expert the router weighs most."""
    p = f"blocks.{layer}"
    mlp = model.net.h[layer].mlp
    if hasattr(mlp, "experts"):
        gate, _, post, *_ = _first_expert(trace, p, mlp, position)
        return gate, post
    return read(trace, f"{p}.mlp.hook_pre")[position], read(trace, f"{p}.mlp.hook_post")[position]


@torch.no_grad()
def _first_expert(trace: Trace, p: str, moe, position: int):
    """gate, up, post and output of the expert the router weighs most for the token at
    ``position`` (computed with its weights from the recorded MLP input), that expert, and the
    routing."""
    chosen = trace[f"{p}.mlp.hook_expert_indices"]
    weights = trace[f"{p}.mlp.hook_expert_weights"][position]
    expert = moe.experts[int(chosen[position, 0])]
    x = trace[f"{p}.ln2.hook_out"][position]
    gate, up = expert.gate_proj(x), expert.up_proj(x)
    post = F.silu(gate) * up
    out = expert.down_proj(post)
    routing = ExpertRouting(
        n_expert=len(moe.experts),
        probs=vector(trace[f"{p}.mlp.hook_router_probs"][position]),
        chosen=[int(e) for e in chosen[position]],
        weights=[float(w) for w in weights],
        shown=int(chosen[position, 0]),
        tokens_per_expert=torch.bincount(chosen.flatten(), minlength=len(moe.experts)).tolist(),
        mixed_output=vector(trace[f"{p}.hook_mlp_out"][position]),
    )
    return gate.float(), up.float(), post.float(), out.float(), expert, routing


def _float(t: torch.Tensor | None) -> torch.Tensor | None:
    return None if t is None else t.float()
