"""Typed request and response bodies of the JSON API; FastAPI turns them into /openapi.json.

Requests are strict (unknown fields are refused) and carry only text or token ids: the server
never receives a file path. Limits that depend on the loaded model (context length, layer and
head counts) are checked in the handlers, which answer 400 with a readable ``error``.
Masked attention scores (-inf) travel as ``null``; no response ever holds NaN or Infinity.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

MAX_TEXT_CHARS = 100_000
MAX_IDS = 100_000
MAX_GENERATE = 256

Number = float | None  # None where the model's value is -inf (a masked score)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- requests -----------------------------------------------------------------------------


class TraceRequest(Strict):
    """A prompt as text or as token ids (exactly one of the two)."""

    text: str | None = Field(None, max_length=MAX_TEXT_CHARS, examples=["Data visualization"])
    ids: list[int] | None = Field(None, max_length=MAX_IDS)

    @model_validator(mode="after")
    def _one_of(self):
        if (self.text is None) == (self.ids is None):
            raise ValueError("send exactly one of 'text' or 'ids'")
        return self


class IdsRequest(Strict):
    ids: list[int] = Field(..., min_length=1, max_length=MAX_IDS, description="token ids")


class PositionRequest(IdsRequest):
    position: int = Field(..., ge=0, description="0-based index into ids")


class LayerRequest(PositionRequest):
    layer: int = Field(..., ge=0)


class AttentionRequest(PositionRequest):
    layer: int = Field(..., ge=0)
    head: int = Field(..., ge=0)
    start: int | None = Field(
        None, ge=0, description="first position of the square window; default: around position"
    )


class Sampling(Strict):
    """The same controls as lmscope.engine.sampling.SamplingParams."""

    temperature: float = Field(1.0, ge=0.0, le=100.0)
    top_k: int | None = Field(None, ge=0, description="0 or null: off")
    top_p: float | None = Field(None, gt=0.0, le=1.0, description="null: off")
    min_p: float | None = Field(None, ge=0.0, le=1.0, description="null: off")
    greedy: bool = False


class PoolRequest(PositionRequest):
    sampling: Sampling = Field(default_factory=Sampling)


class GenerateRequest(IdsRequest):
    n: int = Field(1, ge=1, le=MAX_GENERATE, description="how many tokens to append")
    sampling: Sampling = Field(default_factory=Sampling)
    seed: int | None = Field(None, ge=0, lt=2**63, description="null: a fresh random seed")
    stop_at_eot: bool = True


# --- responses ----------------------------------------------------------------------------


class ErrorResponse(BaseModel):
    error: str = Field(..., description="one readable line saying what was wrong")


class StepInfo(BaseModel):
    number: int
    key: str
    title: str
    summary: str
    probes: list[str]


class ModelResponse(BaseModel):
    name: str
    source: str
    n_layer: int
    n_head: int
    d_model: int
    d_head: int
    d_mlp: int
    vocab_size: int
    n_ctx: int
    n_params: int
    tokenizer: str | None
    activation: str
    dropout: float
    layer_norm_eps: float
    tied_unembedding: bool = True
    steps: list[StepInfo]
    temperatures: list[float] = Field(
        ..., description="temperatures for which tail log-sum-exps are sent (exact client probs)"
    )
    top_n: int = Field(..., description="how many top logits a LogitsView carries")


class Token(BaseModel):
    position: int
    id: int
    text: str = Field(..., description="readable piece; stray UTF-8 bytes shown as <0xE4>")


class PositionPrediction(BaseModel):
    top_ids: list[int]
    top_probs: list[float]
    next_prob: float | None = Field(..., description="prob of the token that actually follows")
    entropy: float = Field(..., description="nats")


class LogitsView(BaseModel):
    """Enough to compute exact sampling probabilities in the browser: the top logits, and for
    each temperature T the log-sum-exp of logit/T over every other token (the tail)."""

    position: int
    ids: list[int] = Field(..., description="top tokens, most likely first (ties: lowest id)")
    logits: list[float]
    tail_count: int
    tail_lse: list[Number] = Field(..., description="logsumexp(tail / T), one per temperature")
    temperatures: list[float]
    lse: float = Field(..., description="logsumexp of all logits at T = 1")


class TraceResponse(BaseModel):
    model: str
    n_ctx: int
    tokens: list[Token]
    predictions: list[PositionPrediction]
    next: LogitsView = Field(..., description="the last position's logits")
    resid_norms: list[list[float]] = Field(
        ..., description="[layer + 1][position]: |embedding|, then |resid_post| of each block"
    )
    vocab: dict[str, str] = Field(..., description="id -> text for every id mentioned")
    cached: bool


class Vector(BaseModel):
    values: list[float]
    norm: float
    mean: float
    std: float


class LayerNormView(BaseModel):
    input: Vector
    mean: float
    std: float = Field(..., description="sqrt(var + eps), the probe hook_scale")
    normalized: Vector
    gamma: list[float]
    beta: list[float]
    output: Vector
    eps: float


class EmbeddingResponse(BaseModel):
    position: int
    token: Token
    token_embedding: Vector
    position_embedding: Vector
    sum: Vector
    embedding_matrix: list[int]
    position_matrix: list[int]
    position_cosine_previous: list[float]


class Merge(BaseModel):
    left: str
    right: str
    rank: int
    result: str


class TokenizerResponse(BaseModel):
    position: int
    token: Token
    pretoken: str | None
    merges: list[Merge]
    note: str | None = None


class Histogram(BaseModel):
    edges: list[float]
    counts: list[int]


class ActivationStats(BaseModel):
    mean: float
    std: float
    min: float
    max: float
    fraction_positive: float
    histogram: Histogram


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
    ln1: LayerNormView
    q: list[list[float]] = Field(..., description="[head][d_head] at this position")
    k: list[list[float]]
    v: list[list[float]]
    z: list[list[float]] = Field(..., description="[head][d_head]: attention-weighted values")
    head_results: list[Vector] = Field(..., description="z_h @ W_O[h] per head, bias excluded")
    attn_bias: list[float]
    attn_out: Vector
    resid_mid: Vector
    ln2: LayerNormView
    mlp_pre: Vector
    mlp_post: Vector
    mlp_pre_stats: ActivationStats
    mlp_post_stats: ActivationStats
    mlp_out: Vector
    resid_post: Vector
    activation: str
    dropout: DropoutExample


class AttentionResponse(BaseModel):
    layer: int
    head: int
    position: int
    d_head: int
    scale: float = Field(..., description="1 / sqrt(d_head)")
    start: int = Field(..., description="first position of the square window")
    size: int
    raw: list[list[Number]] = Field(..., description="QK^T in the window")
    scaled: list[list[Number]]
    masked: list[list[Number]] = Field(..., description="scaled, future keys -inf (null)")
    pattern: list[list[Number]] = Field(..., description="softmax of masked, row by row")
    row: dict[str, list[Number]] = Field(
        ..., description="the query position's full row for raw/scaled/masked/pattern"
    )
    q: list[list[float]] = Field(..., description="[window][d_head] for this head")
    k: list[list[float]]
    v: list[list[float]]
    heads: list[str] = Field(
        ..., description="per head: the window's pattern as bytes 0..255, base64"
    )


class FinalResponse(BaseModel):
    position: int
    ln_final: LayerNormView
    logits: LogitsView
    logit_stats: ActivationStats
    vocab: dict[str, str]


class PoolToken(BaseModel):
    id: int
    text: str
    prob: float = Field(..., description="renormalised over the pool")
    tempered_prob: float
    model_prob: float


class PoolResponse(BaseModel):
    position: int
    stages: dict[str, int]
    size: int
    top: list[PoolToken]


class GeneratedEvent(BaseModel):
    """One line of the /api/generate stream (application/x-ndjson)."""

    type: Literal["token", "done", "error"]
    id: int | None = None
    text: str | None = None
    position: int | None = None
    prob: float | None = None
    model_prob: float | None = None
    pool_size: int | None = None
    seed: int | None = None
    reason: str | None = None
    error: str | None = None
