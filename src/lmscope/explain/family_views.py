"""What the families built on the Llama recipe add to a step, as data read from the model's
probes and weights: Gemma 3's sqrt(d_model) embedding scale, (1 + w) norms and four-norm
"sandwich" blocks, QK-norm (Qwen3, Gemma 3, Qwen3-MoE), GeGLU, local (sliding-window) and global
layers, Phi-3's fused projections, and a mixture of experts' router.

``family_data(key, context)`` lists the views a step adds for the model in front of it (none
for GPT-2 and plain Llama models). Each view is picked by what the model has (a QK-norm, a fused
matrix, experts), so a family that shares a part shares its view. Where a view recomputes what
the model did (the scale, a norm, a split), it carries the largest difference from the
recorded probe, which the tests hold near zero.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal

import torch
import torch.nn.functional as F
from pydantic import BaseModel, Field

from lmscope.explain.attention import kv_head
from lmscope.explain.modern import ACTIVATIONS, GatedFeature
from lmscope.explain.numbers import number, rounded
from lmscope.explain.probes import read
from lmscope.explain.tokens import tokens as token_list
from lmscope.explain.values import Vector, vector
from lmscope.models.gemma3 import Gemma3, Gemma3RMSNorm, SandwichBlock
from lmscope.models.moe import SparseMoE
from lmscope.models.phi3 import Phi3Attention, Phi3MLP

WINDOW = 12  # mask rows/columns shown, as the masked-attention step's window
ROUTED_TOKENS = 64  # tokens whose routing is listed (the counts cover every token)
GEGLU_FEATURES = 8


def _rms(t: torch.Tensor) -> float:
    return number(t.float().pow(2).mean().sqrt())  # type: ignore[return-value]  # finite here


def _error(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.float() - b.float()).abs().max())


# --- Gemma 3: the embedding scale ---------------------------------------------------------


class EmbedScale(BaseModel):
    """Gemma 3 multiplies the stored token row by sqrt(d_model) before the first block."""

    kind: Literal["embed-scale"] = "embed-scale"
    d_model: int
    scale: float = Field(..., description="sqrt(d_model), in the model's precision")
    position: int
    stored: Vector = Field(..., description="hook_embed: the row of W_E as stored")
    scaled: Vector = Field(..., description="blocks.0.hook_resid_pre: the row times the scale")
    stored_rms: float
    scaled_rms: float
    max_error: float = Field(..., description="max |hook_embed × scale - hook_resid_pre|")


def embed_scale(model, trace, position: int) -> EmbedScale:
    d = model.config.n_embd
    stored = trace["hook_embed"][position]
    scaled = trace["blocks.0.hook_resid_pre"][position]
    scale = torch.tensor(d**0.5).to(stored.dtype)  # as the model rounds it
    return EmbedScale(
        d_model=d,
        scale=float(scale),
        position=position,
        stored=vector(stored),
        scaled=vector(scaled),
        stored_rms=_rms(stored),
        scaled_rms=_rms(scaled),
        max_error=_error(stored * scale, scaled),
    )


# --- Gemma 3: (1 + w) norms, four per block -----------------------------------------------


class SandwichNorm(BaseModel):
    which: str = Field(..., description="ln1, ln1_post, ln2 or ln2_post")
    probe: str = Field(..., description="its probes' prefix, e.g. blocks.0.ln1_post")
    input_rms: float = Field(..., description="the root mean square of what it normalizes")
    output_rms: float
    weight_mean: float = Field(..., description="w as stored (a gain of 1 is w = 0)")
    weight_min: float
    weight_max: float
    gain_mean: float = Field(..., description="1 + w, what the normalized vector is scaled by")
    gain_min: float
    gain_max: float
    max_error: float = Field(..., description="max |normalized × (1 + w) - hook_out|")


class SandwichNorms(BaseModel):
    """A Gemma 3 block's four RMSNorms at one position: before and after attention, before
    and after the MLP; each multiplies by 1 + w."""

    kind: Literal["sandwich"] = "sandwich"
    layer: int
    position: int
    norms: list[SandwichNorm]
    attn_out_rms: float = Field(..., description="hook_attn_out: what ln1_post adds to the stream")
    mlp_out_rms: float = Field(..., description="hook_mlp_out: what ln2_post adds")
    resid_rms: float = Field(..., description="hook_resid_post: the stream they are added to")


_SANDWICH = (
    ("ln1", "ln_1", "hook_resid_pre"),
    ("ln1_post", "ln_1_post", None),
    ("ln2", "ln_2", "hook_resid_mid"),
    ("ln2_post", "ln_2_post", None),
)


def sandwich_norms(model, trace, layer: int, position: int) -> SandwichNorms:
    block, p = model.net.h[layer], f"blocks.{layer}"
    norms = []
    for which, attr, before in _SANDWICH:
        norm, q = getattr(block, attr), f"{p}.{which}"
        normalized = trace[f"{q}.hook_normalized"][position].float()
        scale = trace[f"{q}.hook_scale"][position].float()
        x = trace[f"{p}.{before}"][position] if before else normalized * scale
        out = trace[f"{q}.hook_out"][position]
        w = norm.weight.detach().float()
        gain = norm.gain.detach().float()
        norms.append(
            SandwichNorm(
                which=which,
                probe=q,
                input_rms=_rms(x),
                output_rms=_rms(out),
                weight_mean=float(w.mean()),
                weight_min=float(w.min()),
                weight_max=float(w.max()),
                gain_mean=float(gain.mean()),
                gain_min=float(gain.min()),
                gain_max=float(gain.max()),
                max_error=_error(normalized * gain, out),
            )
        )
    return SandwichNorms(
        layer=layer,
        position=position,
        norms=norms,
        attn_out_rms=_rms(trace[f"{p}.hook_attn_out"][position]),
        mlp_out_rms=_rms(trace[f"{p}.hook_mlp_out"][position]),
        resid_rms=_rms(trace[f"{p}.hook_resid_post"][position]),
    )


# --- QK-norm: Qwen3, Gemma 3, Qwen3-MoE ---------------------------------------------------


class NormedHead(BaseModel):
    before: Vector = Field(..., description="hook_q / hook_k: the projection")
    after: Vector = Field(..., description="q_norm.hook_out / k_norm.hook_out: what RoPE rotates")
    rms_before: float
    rms_after: float
    max_error: float = Field(..., description="max |before / rms × gain - after|")


class QKNorm(BaseModel):
    """Each head's query and key normalized by an RMSNorm of their own before RoPE."""

    kind: Literal["qk-norm"] = "qk-norm"
    layer: int
    head: int
    kv_head: int
    position: int
    gain: Literal["w", "1 + w"] = Field(..., description="Qwen3: w; Gemma 3: 1 + w")
    q: NormedHead
    k: NormedHead
    q_rms_by_head_before: list[float] = Field(..., description="every query head at position")
    q_rms_by_head_after: list[float]
    dot_before: float = Field(..., description="q · k of the projections (no RoPE, no scale)")
    dot_after: float = Field(..., description="q · k after the norms (no RoPE, no scale)")


def _normed(trace, a: str, which: str, position: int, head: int, norm) -> NormedHead:
    before = trace[f"{a}.hook_{which}"][position, head].float()
    after = trace[f"{a}.{which}_norm.hook_out"][position, head].float()
    scale = trace[f"{a}.{which}_norm.hook_scale"][position, head].float()
    gain = norm.gain.detach().float()
    return NormedHead(
        before=vector(before),
        after=vector(after),
        rms_before=_rms(before),
        rms_after=_rms(after),
        max_error=_error(before / scale * gain, after),
    )


def qk_norm(model, trace, layer: int, head: int, position: int) -> QKNorm:
    attn, a = model.net.h[layer].attn, f"blocks.{layer}.attn"
    kv = kv_head(trace, layer, head)
    q = _normed(trace, a, "q", position, head, attn.q_norm)
    k = _normed(trace, a, "k", position, kv, attn.k_norm)
    qs = trace[f"{a}.hook_q"][position].float()
    qn = trace[f"{a}.q_norm.hook_out"][position].float()
    k_before = trace[f"{a}.hook_k"][position, kv].float()
    k_after = trace[f"{a}.k_norm.hook_out"][position, kv].float()
    return QKNorm(
        layer=layer,
        head=head,
        kv_head=kv,
        position=position,
        gain="1 + w" if isinstance(attn.q_norm, Gemma3RMSNorm) else "w",
        q=q,
        k=k,
        q_rms_by_head_before=rounded(qs.pow(2).mean(-1).sqrt()),
        q_rms_by_head_after=rounded(qn.pow(2).mean(-1).sqrt()),
        dot_before=float(qs[head] @ k_before),
        dot_after=float(qn[head] @ k_after),
    )


# --- Gemma 3: GeGLU -----------------------------------------------------------------------


class GeGLUFeature(GatedFeature):
    """One feature of the gated MLP, with the gate through both activations: ``silu_gate`` is
    what the Llama recipe would multiply by."""

    gelu_gate: float = Field(..., description="GELU(gate), tanh form: what Gemma 3 multiplies by")


class GeGLU(BaseModel):
    """The MLP's gate through tanh-GELU (Gemma 3) instead of SiLU (Llama)."""

    kind: Literal["geglu"] = "geglu"
    layer: int
    position: int
    activation: str = Field(..., description="the config's name: gelu_pytorch_tanh")
    strongest: list[GeGLUFeature] = Field(..., description="the features with the largest |post|")
    max_error: float = Field(..., description="max |GELU(gate) × up - hook_post|")
    max_gelu_silu_gap: float = Field(..., description="max |GELU(gate) - SiLU(gate)| here")


def geglu(model, trace, layer: int, position: int) -> GeGLU:
    p = f"blocks.{layer}.mlp"
    gate = trace[f"{p}.hook_pre"][position].float()
    up = trace[f"{p}.hook_pre_linear"][position].float()
    post = trace[f"{p}.hook_post"][position].float()
    activation = model.config.activation
    gelu = ACTIVATIONS[activation][1](gate)
    silu = F.silu(gate)
    order = post.abs().argsort(descending=True)[:GEGLU_FEATURES].tolist()
    return GeGLU(
        layer=layer,
        position=position,
        activation=activation,
        strongest=[
            GeGLUFeature(
                index=i,
                gate=float(gate[i]),
                gelu_gate=float(gelu[i]),
                silu_gate=float(silu[i]),
                up=float(up[i]),
                post=float(post[i]),
            )
            for i in order
        ],
        max_error=_error(gelu * up, post),
        max_gelu_silu_gap=_error(gelu, silu),
    )


# --- Gemma 3: local (sliding-window) and global layers ------------------------------------


class SlidingWindow(BaseModel):
    """Which layers see only the last ``window`` keys and which see all, their RoPE bases, and
    the chosen layer's mask around the query as the model applied it."""

    kind: Literal["sliding-window"] = "sliding-window"
    layer: int
    local: bool = Field(..., description="this layer slides a window")
    window: int | None
    local_layers: list[int]
    global_layers: list[int]
    rope_local_theta: float
    rope_global_theta: float
    query_position: int
    first_key: int = Field(..., description="the earliest key this query may attend to")
    hidden_by_window: int = Field(..., description="earlier keys the window hides")
    window_start: int = Field(..., description="first position of the rows/columns shown")
    allowed: list[list[bool]] = Field(
        ..., description="[query][key] around the query: the score was not masked (-inf)"
    )
    outside_weight: float = Field(..., description="attention weight beyond the window (0)")


def sliding_window(model, trace, layer: int, head: int, position: int) -> SlidingWindow:
    c = model.config
    layers = range(c.n_layer)
    local = c.is_local(layer)
    a = f"blocks.{layer}.attn"
    scores = read(trace, f"{a}.hook_attn_scores")[head]
    row = scores[position, : position + 1]
    seen = torch.isfinite(row).nonzero().flatten()
    first_key = int(seen.min())
    w = slice(max(0, position + 1 - WINDOW), position + 1)
    pattern = read(trace, f"{a}.hook_pattern")[head][position]
    return SlidingWindow(
        layer=layer,
        local=local,
        window=c.sliding_window,
        local_layers=[i for i in layers if c.is_local(i)],
        global_layers=[i for i in layers if not c.is_local(i)],
        rope_local_theta=c.rope_local_theta,
        rope_global_theta=c.rope_theta,
        query_position=position,
        first_key=first_key,
        hidden_by_window=first_key,
        window_start=w.start,
        allowed=torch.isfinite(scores[w, w]).tolist(),
        outside_weight=float(pattern[:first_key].sum()),
    )


# --- Phi-3: fused projections -------------------------------------------------------------


class FusedPart(BaseModel):
    name: str = Field(..., description="q, k, v (qkv_proj) or gate, up (gate_up_proj)")
    rows: list[int] = Field(..., description="[first, last + 1] of the matrix's output rows")
    probe: str
    max_error: float = Field(..., description="max |its slice of the product - the probe|")


class FusedProjection(BaseModel):
    """One matrix that makes several projections at once, and how its output is cut."""

    kind: Literal["fused"] = "fused"
    matrix: Literal["qkv_proj", "gate_up_proj"]
    weight_shape: list[int] = Field(..., description="[out, in], as stored")
    input_probe: str
    parts: list[FusedPart]


@torch.no_grad()
def fused_qkv(model, trace, layer: int, position: int) -> FusedProjection:
    attn, p = model.net.h[layer].attn, f"blocks.{layer}"
    x = trace[f"{p}.ln1.hook_out"][position]
    out = attn.qkv_proj(x).float()
    parts, start = [], 0
    for name, size in zip("qkv", attn.split, strict=True):
        probe = f"{p}.attn.hook_{name}"
        piece = out[start : start + size]
        error = _error(piece, trace[probe][position].reshape(-1))
        parts.append(FusedPart(name=name, rows=[start, start + size], probe=probe, max_error=error))
        start += size
    return FusedProjection(
        matrix="qkv_proj",
        weight_shape=list(attn.qkv_proj.weight.shape),
        input_probe=f"{p}.ln1.hook_out",
        parts=parts,
    )


@torch.no_grad()
def fused_gate_up(model, trace, layer: int, position: int) -> FusedProjection:
    mlp, p = model.net.h[layer].mlp, f"blocks.{layer}"
    x = trace[f"{p}.ln2.hook_out"][position]
    out = mlp.gate_up_proj(x).float()
    d = mlp.d_mlp
    parts = [
        FusedPart(
            name=name,
            rows=[start, start + d],
            probe=f"{p}.mlp.{probe}",
            max_error=_error(out[start : start + d], trace[f"{p}.mlp.{probe}"][position]),
        )
        for name, start, probe in (("gate", 0, "hook_pre"), ("up", d, "hook_pre_linear"))
    ]
    return FusedProjection(
        matrix="gate_up_proj",
        weight_shape=list(mlp.gate_up_proj.weight.shape),
        input_probe=f"{p}.ln2.hook_out",
        parts=parts,
    )


# --- a mixture of experts: the router -----------------------------------------------------


class RoutedToken(BaseModel):
    position: int
    token: str
    probs: list[float] = Field(..., description="the router's probability of every expert")
    chosen: list[int] = Field(..., description="the experts it goes through, best first")
    weights: list[float] = Field(..., description="their weights in the mix")


class Router(BaseModel):
    """A sparse layer's router over the whole prompt: per token, the probabilities of every
    expert, the top-k chosen and their weights; per expert, how many tokens chose it."""

    kind: Literal["router"] = "router"
    layer: int
    n_expert: int
    top_k: int
    renormalized: bool = Field(..., description="the chosen probabilities divided by their sum")
    position: int
    tokens: list[RoutedToken] = Field(..., description="the prompt's last tokens (at most 64)")
    tokens_per_expert: list[int] = Field(..., description="over every token of the prompt")
    share_per_expert: list[float] = Field(..., description="tokens_per_expert / (tokens × k)")
    mean_prob_per_expert: list[float] = Field(..., description="the router's mean probability")


def router(model, trace, layer: int, position: int) -> Router:
    moe, p = model.net.h[layer].mlp, f"blocks.{layer}.mlp"
    probs = trace[f"{p}.hook_router_probs"].float()
    chosen = trace[f"{p}.hook_expert_indices"]
    weights = trace[f"{p}.hook_expert_weights"].float()
    n, k = len(moe.experts), chosen.shape[-1]
    counts = torch.bincount(chosen.flatten(), minlength=n)
    shown = token_list(trace)[-ROUTED_TOKENS:]
    return Router(
        layer=layer,
        n_expert=n,
        top_k=k,
        renormalized=bool(moe.norm_topk_prob),
        position=position,
        tokens=[
            RoutedToken(
                position=t.position,
                token=t.text,
                probs=rounded(probs[t.position]),
                chosen=chosen[t.position].tolist(),
                weights=rounded(weights[t.position]),
            )
            for t in shown
        ],
        tokens_per_expert=counts.tolist(),
        share_per_expert=rounded(counts.float() / chosen.numel()),
        mean_prob_per_expert=rounded(probs.mean(0)),
    )


# --- which step shows what ----------------------------------------------------------------

FamilyData = Annotated[
    EmbedScale | SandwichNorms | QKNorm | GeGLU | SlidingWindow | FusedProjection | Router,
    Field(discriminator="kind"),
]


def _has_qk_norm(model, layer: int) -> bool:
    return hasattr(model.net.h[layer].attn, "q_norm")


def _views(key: str, c) -> list[BaseModel]:
    net, layer, pos = c.model.net, c.layer, c.position
    block = net.h[layer]
    gemma = isinstance(net, Gemma3)
    found: dict[str, list[tuple[bool, Callable[[], BaseModel]]]] = {
        "embedding": [(gemma, lambda: embed_scale(c.model, c.trace, pos))],
        "blocks": [
            (
                isinstance(block, SandwichBlock),
                lambda: sandwich_norms(c.model, c.trace, layer, pos),
            )
        ],
        "layernorm": [
            (
                isinstance(block, SandwichBlock),
                lambda: sandwich_norms(c.model, c.trace, layer, pos),
            )
        ],
        "qkv": [
            (_has_qk_norm(c.model, layer), lambda: qk_norm(c.model, c.trace, layer, c.head, pos)),
            (
                isinstance(block.attn, Phi3Attention),
                lambda: fused_qkv(c.model, c.trace, layer, pos),
            ),
        ],
        "positional-encoding": [
            (gemma, lambda: sliding_window(c.model, c.trace, layer, c.head, pos))
        ],
        "masked-attention": [(gemma, lambda: sliding_window(c.model, c.trace, layer, c.head, pos))],
        "mlp": [
            (gemma, lambda: geglu(c.model, c.trace, layer, pos)),
            (isinstance(block.mlp, Phi3MLP), lambda: fused_gate_up(c.model, c.trace, layer, pos)),
            (isinstance(block.mlp, SparseMoE), lambda: router(c.model, c.trace, layer, pos)),
        ],
    }
    return [make() for applies, make in found.get(key, []) if applies]


def family_data(key: str, context) -> list[BaseModel]:
    """The views step ``key`` adds for the model of ``context`` (a ``StepContext``): what its
    family does that GPT-2 and the Llama recipe do not; [] for those two."""
    net = getattr(context.model, "net", None)
    if net is None or not hasattr(net, "h"):
        return []
    return _views(key, context)
