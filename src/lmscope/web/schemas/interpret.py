"""Request and response bodies of the research endpoints: logit lens, ablation, compare.

Kept apart from the explainer's (the package's ``__init__``) so each side reads on its own.
The same rules hold: strict requests, bounded sizes, and no NaN or Infinity in a response
(None instead).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints

from lmscope.explain.tokens import Token, TokenProb
from lmscope.web.schemas import IdsRequest, TextOrIds, left_out

LENS_MAX_POSITIONS = 32  # columns of one logit-lens answer; the page moves the window
LENS_MAX_K = 10
MAX_ABLATIONS = 4096  # more than every head of the largest GPT-2 (48 x 25)
MAX_COMPARE_CHARS = 4000  # same default as `lmscope compare --max-chars`
HEADS_MAX_WINDOW = 32

Spec = Annotated[str, StringConstraints(min_length=1, max_length=32)]


# --- requests -----------------------------------------------------------------------------


class LensRequest(IdsRequest):
    position: int | None = Field(
        None, ge=0, description="position the window is placed around; default: the last"
    )
    start: int | None = Field(None, ge=0, description="first position shown; default: around it")
    size: int = Field(16, ge=1, le=LENS_MAX_POSITIONS, description="positions shown")
    k: int = Field(5, ge=1, le=LENS_MAX_K, description="top tokens per cell")


class HeadsRequest(IdsRequest):
    position: int | None = Field(None, ge=0, description="last query row; default: the last")
    size: int = Field(HEADS_MAX_WINDOW, ge=1, le=HEADS_MAX_WINDOW)


class AblateRequest(IdsRequest):
    ablate: list[Spec] = Field(
        default_factory=list,
        max_length=MAX_ABLATIONS,
        description="specs: L5H3 (a head), L5H* (a layer's heads), attn5, mlp5, attn*, mlp*",
        examples=[["L0H1", "mlp1"]],
    )
    mode: Literal["zero", "mean"] = "zero"
    position: int | None = Field(None, ge=0, description="whose prediction; default: the last")
    k: int = Field(10, ge=1, le=50)


class CompareRequest(TextOrIds):
    """The text to score, as text or as the served model's token ids (decoded first)."""

    model: str = Field(..., max_length=500, description="one of GET /api/compare/models")
    text: str | None = Field(
        None, min_length=1, max_length=MAX_COMPARE_CHARS, json_schema_extra=left_out
    )


# --- responses ----------------------------------------------------------------------------


class LensCell(BaseModel):
    top: list[TokenProb] = Field(..., description="top-k at this stage, most likely first")
    final_rank: int = Field(..., description="rank of the model's final prediction (0 = top)")
    final_prob: float = Field(..., description="its probability at this stage")


class LensResponse(BaseModel):
    stages: list[str] = Field(..., description='"embed", then "block 0" ... "block N-1"')
    n_tokens: int
    start: int
    positions: list[int]
    tokens: list[Token] = Field(..., description="the input token at each shown position")
    next: list[Token | None] = Field(..., description="the token that follows, if any")
    final: list[Token] = Field(..., description="the model's real top prediction (last row)")
    cells: list[list[LensCell]] = Field(..., description="[stage][position]")


class HeadsResponse(BaseModel):
    position: int
    start: int
    size: int
    layers: list[list[str]] = Field(
        ..., description="[layer][head]: the window's attention pattern as bytes 0..255, base64"
    )


class AblationChange(BaseModel):
    id: int
    token: str
    before: float
    after: float
    change: float


class AblateResponse(BaseModel):
    ablations: list[str] = Field(..., description="the parsed specs, one per head or sublayer")
    mode: str
    position: int
    before: list[TokenProb]
    after: list[TokenProb]
    diff: list[AblationChange]
    kl: float | None = Field(..., description="KL(before || after), nats; null if infinite")


class CompareModels(BaseModel):
    model: str = Field(..., description="the served model (A)")
    models: list[str] = Field(..., description="models this server may compare with (B)")


class CompareResponse(BaseModel):
    unit: Literal["token", "character"]
    names: list[str]
    pieces: list[str]
    loss_a: list[float | None]
    loss_b: list[float | None]
    diff: list[float | None] = Field(..., description="loss_b - loss_a, nats")
    mean_a: float | None
    mean_b: float | None
    note: str
