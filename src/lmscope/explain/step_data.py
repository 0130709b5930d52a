"""The 20 steps as typed data: one small pydantic model per step, built from a Trace by the
same view builders the web routes serve, so the CLI and the page show the same numbers.

``build(key, context)`` gives one step's data; each builder is registered under its step key
(``engine.steps`` lists the keys, once) and only reads probes and weights.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import torch
from pydantic import BaseModel

from lmscope.engine.sampling import SamplingParams
from lmscope.engine.steps import STEPS_BY_KEY
from lmscope.engine.trace import Trace
from lmscope.explain.attention import kv_head, score_rows
from lmscope.explain.block import DropoutExample, LayerNormView, dropout_example, norm_view
from lmscope.explain.chars import CharSpan, trace_char_spans
from lmscope.explain.embedding import POSITION_PROBE, position_cosines, position_vector
from lmscope.explain.facts import ModelFacts, model_facts, tied_unembedding
from lmscope.explain.logits import (
    PoolToken,
    TokenLogit,
    pool_view,
    position_logits,
    top_logits,
    top_probs,
)
from lmscope.explain.modern import (
    Curve,
    Grouping,
    RMSNormView,
    RopeStep,
    SwiGLUStep,
    activation_curve,
    design,
    grouping,
    rope_view,
    swiglu_view,
)
from lmscope.explain.numbers import Number, number, rounded
from lmscope.explain.probes import read
from lmscope.explain.tokens import Merge, Token, TokenProb, explain_ids, merges, tokens
from lmscope.explain.values import ActivationStats, Vector, stats, vector

TOP = 10  # tokens listed per table
WINDOW = 12  # attention rows/columns shown as a small matrix
LOOP = ["tokenize", "embed", "blocks", "logits", "softmax", "sample", "append"]


@dataclass
class StepContext:
    """What one explanation looks at: a trace, and the layer, head and position chosen."""

    model: Any
    trace: Trace
    layer: int
    head: int
    position: int
    params: SamplingParams
    norm: str = "ln1"  # which norm the norm step shows: ln1, ln2 or final

    def at(self, name: str) -> torch.Tensor:
        """Probe ``name`` of the chosen layer (``{p}`` in the name) at the chosen position."""
        return read(self.trace, name.format(p=f"blocks.{self.layer}"))[self.position]

    @cached_property
    def logits(self) -> torch.Tensor:
        return position_logits(self.model, self.trace, self.position)

    @cached_property
    def tokens(self) -> list[Token]:
        return tokens(self.trace)


_BUILDERS: dict[str, Callable[[StepContext], BaseModel]] = {}


def builds(key: str):
    if key not in STEPS_BY_KEY:
        raise KeyError(f"no step {key!r}")

    def register(fn):
        _BUILDERS[key] = fn
        return fn

    return register


def build(key: str, context: StepContext) -> BaseModel:
    return _BUILDERS[key](context)


# --- 1-3: the whole model ---------------------------------------------------------------


class TransformerStep(BaseModel):
    model: ModelFacts  # type: ignore[valid-type]  # a model built by create_model
    prediction: TokenProb
    top5: list[TokenProb]


class HowItWorksStep(BaseModel):
    loop: list[str]
    context_tokens: int
    next: list[TokenProb]


class ArchitectureStep(BaseModel):
    flow: list[str]
    resid_norm_by_layer: list[float]


@builds("transformer")
def transformer(c: StepContext) -> TransformerStep:
    top = top_probs(c.model, c.logits, 1.0, 5)
    return TransformerStep(model=model_facts(c.model), prediction=top[0], top5=top)


@builds("how-it-works")
def how_it_works(c: StepContext) -> HowItWorksStep:
    top = top_probs(c.model, c.logits, 1.0, 5)
    return HowItWorksStep(loop=LOOP, context_tokens=c.position + 1, next=top)


@builds("architecture")
def architecture(c: StepContext) -> ArchitectureStep:
    cfg, n = c.model.config, len(c.trace)
    return ArchitectureStep(
        flow=[
            f"tokens [{n}]",
            f"embedding [{n}, {cfg.n_embd}]",
            f"{cfg.n_layer} blocks",
            f"final {design(c.model).norm}",
            f"logits [{n}, {cfg.vocab_size}]",
        ],
        resid_norm_by_layer=[
            number(c.trace[f"blocks.{i}.hook_resid_post"][c.position].norm())  # type: ignore[misc]  # None if not finite: see numbers.number
            for i in range(cfg.n_layer)
        ],
    )


# --- 4-7: embeddings and the stack of blocks --------------------------------------------


class EmbeddingStep(BaseModel):
    token: Vector
    position: Vector | None  # None: no learned position embedding
    sum: Vector


class TokenRow(BaseModel):
    position: int
    id: int
    token: str
    norm: float


class TokenMerges(BaseModel):
    id: int
    token: str
    merges: list[Merge]


class TokenEmbeddingStep(BaseModel):
    tokens: list[TokenRow]
    merges: list[TokenMerges]
    embedding_matrix: list[int]
    selected: Vector
    chars: list[CharSpan] = []  # tokens whose UTF-8 bytes only form a character together
    tokenizer: str | None = None  # its kind: "chars" has no merges to show


class PositionalEncodingStep(BaseModel):
    kind: Literal["learned"] = "learned"
    position: int
    vector: Vector | None  # None: no learned position embedding
    norms: list[float]
    cosine_with_previous: list[float]


class BlockChange(BaseModel):
    layer: int
    in_norm: float
    out_norm: float
    change_norm: float


class BlocksStep(BaseModel):
    layers: list[BlockChange]


@builds("embedding")
def embedding(c: StepContext) -> EmbeddingStep:
    return EmbeddingStep(
        token=vector(c.at("hook_embed")),
        position=position_vector(c.trace, c.position),
        sum=vector(c.at("blocks.0.hook_resid_pre")),
    )


@builds("token-embedding")
def token_embedding(c: StepContext) -> TokenEmbeddingStep:
    norms = rounded(c.trace["hook_embed"].norm(dim=-1))
    rows = [
        TokenRow(position=t.position, id=t.id, token=t.text, norm=norms[t.position])
        for t in c.tokens
    ]
    explained = explain_ids(c.model, c.trace.ids, exact=False) or []
    return TokenEmbeddingStep(
        tokens=rows,
        merges=[TokenMerges(id=e.id, token=e.piece.text, merges=merges(e)) for e in explained],
        embedding_matrix=list(c.model.net.wte.weight.shape),
        selected=vector(c.at("hook_embed")),
        chars=trace_char_spans(c.model, c.trace.ids),
        tokenizer=getattr(c.model.tokenizer, "kind", None),
    )


@builds("positional-encoding")
def positional_encoding(c: StepContext) -> PositionalEncodingStep | RopeStep:
    if design(c.model).positions == "rotary":
        return rope_view(c.model, c.trace, c.layer, c.head, c.position)
    learned = POSITION_PROBE in c.trace
    return PositionalEncodingStep(
        position=c.position,
        vector=position_vector(c.trace, c.position),
        norms=rounded(c.trace[POSITION_PROBE].norm(dim=-1)) if learned else [],
        cosine_with_previous=position_cosines(c.trace),
    )


@builds("blocks")
def blocks(c: StepContext) -> BlocksStep:
    rows = []
    for i in range(c.model.config.n_layer):
        pre = c.trace[f"blocks.{i}.hook_resid_pre"][c.position]
        post = c.trace[f"blocks.{i}.hook_resid_post"][c.position]
        rows.append(
            BlockChange(
                layer=i,
                in_norm=number(pre.norm()),  # type: ignore[arg-type]  # None if not finite: see numbers.number
                out_norm=number(post.norm()),  # type: ignore[arg-type]  # None if not finite: see numbers.number
                change_norm=number((post - pre).norm()),  # type: ignore[arg-type]  # None if not finite: see numbers.number
            )
        )
    return BlocksStep(layers=rows)


# --- 8-12: attention --------------------------------------------------------------------


class Attended(BaseModel):
    position: int
    token: str
    weight: float


class SelfAttentionStep(BaseModel):
    layer: int
    head: int
    pattern: list[list[Number]]
    attends_most_to: list[Attended]
    attn_out: Vector


class QKVStep(BaseModel):
    input: Vector
    q: Vector
    k: Vector
    v: Vector
    W_qkv: list[int]
    kv_head: int  # the key/value head the chosen query head reads (itself in GPT-2)
    n_kv_head: int


class MultiHeadStep(BaseModel):
    n_head: int
    d_head: int
    q_shape: list[int]
    k_shape: list[int]
    q_norm_by_head: list[float]
    grouping: Grouping  # which key/value head each query head reads, and the KV cache


class MaskedAttentionStep(BaseModel):
    d_head: int
    query_position: int
    raw: list[Number]
    scaled: list[Number]
    masked: list[Number]
    softmax: list[Number]
    window_start: int  # the last few rows and columns, so the -inf triangle shows
    masked_window: list[list[Number]]


class AttentionOutputStep(BaseModel):
    z_by_head: list[Vector]
    concat_shape: list[int]
    head_result_norms: list[float]
    projected: Vector


@builds("self-attention")
def self_attention(c: StepContext) -> SelfAttentionStep:
    pattern = read(c.trace, f"blocks.{c.layer}.attn.hook_pattern")[c.head]
    row = pattern[c.position, : c.position + 1]
    weights = rounded(row)
    order = row.argsort(descending=True)[:5].tolist()
    return SelfAttentionStep(
        layer=c.layer,
        head=c.head,
        pattern=rounded(pattern),
        attends_most_to=[
            Attended(position=j, token=c.tokens[j].text, weight=weights[j]) for j in order
        ],
        attn_out=vector(c.at("{p}.hook_attn_out")),
    )


@builds("qkv")
def qkv(c: StepContext) -> QKVStep:
    q, k, v = (c.at(f"{{p}}.attn.hook_{n}") for n in "qkv")
    kv = kv_head(c.trace, c.layer, c.head)
    return QKVStep(
        input=vector(c.at("{p}.ln1.hook_out")),
        q=vector(q[c.head]),
        k=vector(k[kv]),
        v=vector(v[kv]),
        W_qkv=[c.model.config.n_embd, q.numel() + k.numel() + v.numel()],
        kv_head=kv,
        n_kv_head=k.shape[0],
    )


@builds("multi-head")
def multi_head(c: StepContext) -> MultiHeadStep:
    cfg = c.model.config
    return MultiHeadStep(
        n_head=cfg.n_head,
        d_head=cfg.d_head,
        q_shape=list(c.trace[f"blocks.{c.layer}.attn.hook_q"].shape),
        k_shape=list(c.trace[f"blocks.{c.layer}.attn.hook_k"].shape),
        q_norm_by_head=rounded(c.at("{p}.attn.hook_q").norm(dim=-1)),
        grouping=grouping(c.model, c.trace, c.layer, c.position),
    )


@builds("masked-attention")
def masked_attention(c: StepContext) -> MaskedAttentionStep:
    rows = score_rows(c.trace, c.layer, c.head, c.position)
    w = slice(max(0, c.position + 1 - WINDOW), c.position + 1)
    masked = read(c.trace, f"blocks.{c.layer}.attn.hook_attn_scores")[c.head]
    return MaskedAttentionStep(
        d_head=c.model.config.d_head,
        query_position=c.position,
        raw=rounded(rows["raw"]),
        scaled=rounded(rows["scaled"]),
        masked=rounded(rows["masked"]),
        softmax=rounded(rows["pattern"]),
        window_start=w.start,
        masked_window=rounded(masked[w, w]),
    )


@builds("attention-output")
def attention_output(c: StepContext) -> AttentionOutputStep:
    z = c.at("{p}.attn.hook_z")
    return AttentionOutputStep(
        z_by_head=[vector(zh) for zh in z],
        concat_shape=[z.numel()],
        head_result_norms=rounded(c.at("{p}.attn.hook_result").norm(dim=-1)),
        projected=vector(c.at("{p}.hook_attn_out")),
    )


# --- 13-17: MLP, logits, probabilities, sampling ------------------------------------------


class MLPStep(BaseModel):
    kind: Literal["mlp"] = "mlp"
    input: Vector
    pre_gelu: ActivationStats
    post_gelu: ActivationStats
    output: Vector
    d_mlp: int
    activation: str
    curve: Curve | None  # the activation function over the range of this position's inputs


class LogitsStep(BaseModel):
    norm: str  # the final norm: LayerNorm or RMSNorm
    tied: bool  # the unembedding is the token embedding W_E (else a separate lm_head)
    final_ln: Vector
    vocab_size: int
    top: list[TokenLogit]
    stats: ActivationStats


class ProbabilitiesStep(BaseModel):
    top: list[TokenProb]


class TemperatureStep(BaseModel):
    temperature: float
    at_1: list[TokenProb]
    at_t: list[TokenProb] | Literal["greedy"]


class SamplingStep(BaseModel):
    params: dict[str, Any]
    stages: dict[str, int]
    pool: list[PoolToken]
    pool_size: int


@builds("mlp")
def mlp(c: StepContext) -> MLPStep | SwiGLUStep:
    if design(c.model).gated:
        return swiglu_view(c.model, c.trace, c.layer, c.position)
    pre = c.at("{p}.mlp.hook_pre")
    return MLPStep(
        input=vector(c.at("{p}.ln2.hook_out")),
        pre_gelu=stats(pre),
        post_gelu=stats(c.at("{p}.mlp.hook_post")),
        output=vector(c.at("{p}.hook_mlp_out")),
        d_mlp=c.model.config.d_mlp,
        activation=c.model.config.activation,
        curve=activation_curve(c.model.config.activation, pre),
    )


@builds("logits")
def logits(c: StepContext) -> LogitsStep:
    return LogitsStep(
        norm=design(c.model).norm,
        tied=tied_unembedding(c.model),
        final_ln=vector(c.at("ln_final.hook_out")),
        vocab_size=c.logits.numel(),
        top=top_logits(c.model, c.logits, TOP),
        stats=stats(c.logits),
    )


@builds("probabilities")
def probabilities(c: StepContext) -> ProbabilitiesStep:
    return ProbabilitiesStep(top=top_probs(c.model, c.logits, 1.0, TOP))


@builds("temperature")
def temperature(c: StepContext) -> TemperatureStep:
    t = c.params.temperature
    return TemperatureStep(
        temperature=t,
        at_1=top_probs(c.model, c.logits, 1.0, TOP),
        at_t=top_probs(c.model, c.logits, t, TOP) if t > 0 else "greedy",
    )


@builds("sampling")
def sampling(c: StepContext) -> SamplingStep:
    pool = pool_view(c.model, c.logits, c.position, c.params)
    return SamplingStep(
        params=c.params.to_dict(), stages=pool.stages, pool=pool.top, pool_size=pool.size
    )


# --- 18-20: residuals, LayerNorm, dropout -------------------------------------------------


class ResidualStep(BaseModel):
    resid_pre: Vector
    attn_out: Vector
    resid_mid: Vector
    mlp_out: Vector
    resid_post: Vector
    identity_max_error: float


class DropoutStep(DropoutExample):
    inference: str
    before: list[float]


@builds("residual")
def residual(c: StepContext) -> ResidualStep:
    pre, attn, mid = (c.at(f"{{p}}.hook_{n}") for n in ("resid_pre", "attn_out", "resid_mid"))
    return ResidualStep(
        resid_pre=vector(pre),
        attn_out=vector(attn),
        resid_mid=vector(mid),
        mlp_out=vector(c.at("{p}.hook_mlp_out")),
        resid_post=vector(c.at("{p}.hook_resid_post")),
        identity_max_error=float((pre + attn - mid).abs().max()),
    )


@builds("layernorm")
def layernorm_step(c: StepContext) -> LayerNormView | RMSNormView:
    return norm_view(c.model, c.trace, c.position, c.norm, c.layer)


@builds("dropout")
def dropout(c: StepContext) -> DropoutStep:
    example = dropout_example(c.model, c.trace, c.layer, c.position)
    return DropoutStep(
        **example.model_dump(),
        inference="identity (dropout is off)",
        before=rounded(c.at("{p}.hook_attn_out")),
    )


def _check() -> None:
    missing = [key for key in STEPS_BY_KEY if key not in _BUILDERS]
    if missing:
        raise RuntimeError(f"explain.step_data builds no data for {missing}")


_check()
