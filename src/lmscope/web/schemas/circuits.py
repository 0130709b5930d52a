"""Request and response bodies of the circuits endpoints: induction heads, activation patching
and direct logit attribution on the served model (``lmscope.interpret.circuits``).

The responses are the library's ``to_json()`` shapes (``docs/circuits.md``), with what the page
needs besides: the pattern of one chosen head for induction. The same rules as the other
endpoints hold: strict requests, bounded sizes, no NaN or Infinity in a response (None).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints, field_validator

from lmscope.web.schemas import Strict, TokenId

# The bounds a served model's work stays within (a class shares one CPU): a patching grid for
# a 12-token prompt pair on SmolLM2 is 660 patched runs, about 8 s of one CPU thread; its work
# grows with the square of the prompt's length.
MAX_INDUCTION_LENGTH = 100  # random tokens in each copy (the attention patterns are kept)
MAX_PATCH_TOKENS = 24  # tokens of each prompt to patch
MAX_ATTRIBUTE_TOKENS = 256
MAX_PROMPT_CHARS = 2000
MAX_ANSWER_CHARS = 64
MAX_SEED = 2**31 - 1

Prompt = Annotated[str, StringConstraints(min_length=1, max_length=MAX_PROMPT_CHARS)]
AnswerText = Annotated[str, StringConstraints(min_length=1, max_length=MAX_ANSWER_CHARS)]
# a token given as the text of exactly one token (" Paris", with its space) or as its id
Answer = AnswerText | TokenId


# --- requests -----------------------------------------------------------------------------


def whole(value):
    """An answer sent as 957.0 is the id 957, as JSON Schema counts it (``Strict`` does this for
    integer fields; an answer is text or an integer)."""
    return int(value) if type(value) is float and value.is_integer() else value


class InductionRequest(Strict):
    length: int = Field(
        50, ge=2, le=MAX_INDUCTION_LENGTH, description="random tokens in each of the two copies"
    )
    seed: int = Field(0, ge=0, le=MAX_SEED, description="seed of the random tokens")
    layer: int | None = Field(
        None, ge=0, description="the head whose pattern is sent; default: the top induction head"
    )
    head: int | None = Field(None, ge=0)


class PatchRequest(Strict):
    clean: Prompt = Field(..., description="the prompt the model answers right")
    corrupt: Prompt = Field(..., description="a prompt of the same token length")
    right: Answer = Field(..., description="the right answer: one token, or its id")
    wrong: Answer = Field(..., description="the wrong answer: one token, or its id")

    _whole = field_validator("right", "wrong", mode="before")(whole)


class AttributeRequest(Strict):
    text: Prompt
    token: Answer = Field(..., description="the token whose logit is split: one token, or its id")
    versus: Answer | None = Field(None, description="split token - versus instead")
    position: int | None = Field(None, ge=0, description="whose next token; default: the last")

    _whole = field_validator("token", "versus", mode="before")(whole)


# --- responses ----------------------------------------------------------------------------


class HeadScore(BaseModel):
    head: str = Field(..., description="L{layer}H{head}")
    score: float


class InductionResponse(BaseModel):
    ids: list[int] = Field(..., description="the token ids run: [BOS] + T random ids + the same")
    tokens: list[str]
    length: int
    seed: int
    bos: bool = Field(..., description="whether a BOS opens the sequence")
    scores: list[list[float]] = Field(..., description="induction score, [layer][head]")
    previous_token: list[list[float]] = Field(..., description="previous-token score")
    loss: list[float | None] = Field(..., description="loss[i]: nats of predicting ids[i + 1]")
    loss_first_copy: float | None
    loss_second_copy: float | None
    top_induction: list[HeadScore]
    top_previous_token: list[HeadScore]
    layer: int = Field(..., description="the head whose pattern follows")
    head: int
    pattern: list[list[float]] = Field(
        ..., description="its attention, [query][key], keys 0..query (the causal part)"
    )


class Answered(BaseModel):
    id: int
    token: str


class SiteGrid(BaseModel):
    rows: list[int] = Field(..., description="layers")
    cols: list[int | str] = Field(..., description='positions, heads, or ["all"]')
    values: list[list[float | None]] = Field(..., description="fraction of the difference restored")
    diffs: list[list[float | None]] = Field(..., description="the patched runs' logit differences")


class PatchResponse(BaseModel):
    clean_ids: list[int]
    corrupt_ids: list[int]
    clean_tokens: list[str]
    corrupt_tokens: list[str]
    right: Answered
    wrong: Answered
    clean_diff: float | None
    corrupt_diff: float | None
    sites: dict[str, SiteGrid] = Field(..., description="resid_pre, attn_head, mlp_out")


class NamedToken(BaseModel):
    id: int
    text: str


class AttributeResponse(BaseModel):
    ids: list[int]
    tokens: list[str]
    position: int
    token: NamedToken
    versus: NamedToken | None
    logit: float | None = Field(..., description="the model's logit (or logit difference)")
    contributions: dict[str, float | None] = Field(..., description="embed, L{l}H{h}, mlp{l}")
    remainder: dict[str, float | None] = Field(..., description="constant terms (biases)")
    total: float | None = Field(..., description="contributions and remainder added up")
    heads: list[list[float | None]] = Field(..., description="[layer][head] contributions")
    mlps: list[float | None]


class CircuitExample(BaseModel):
    key: str = Field(..., description="names the example's label in the catalog")
    clean: str
    corrupt: str
    right: str
    wrong: str
    tokens: int = Field(..., description="each prompt's length in the served model's tokens")


class CircuitExamples(BaseModel):
    examples: list[CircuitExample] = Field(
        ..., description="the ready-made pairs that fit the served model"
    )
    max_patch_tokens: int
    max_attribute_tokens: int
    max_induction_length: int
