"""Typed request and response bodies of the JSON API; FastAPI turns them into /openapi.json.

Requests are strict (unknown fields are refused) and carry only text or token ids: the server
never receives a file path. Limits that depend on the loaded model (context length, layer and
head counts) are checked in the handlers, which answer 400 with a readable ``error``.
Masked attention scores (-inf) travel as ``null``; no response ever holds NaN or Infinity.
The response models of the steps live in ``lmscope.explain``, which builds them.
"""

from __future__ import annotations

import functools
import types
import typing
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from lmscope.errors import InvalidInputError
from lmscope.explain.attention import AttentionResponse
from lmscope.explain.block import DropoutExample, LayerNormView, LayerResponse
from lmscope.explain.catalogue import CatalogText
from lmscope.explain.embedding import EmbeddingResponse
from lmscope.explain.facts import ModelFacts
from lmscope.explain.logits import FinalResponse, LogitsView, PoolResponse, PoolToken
from lmscope.explain.summary import PositionPrediction, TraceResponse
from lmscope.explain.tokens import Merge, Token, TokenizerResponse
from lmscope.explain.values import ActivationStats, Histogram, Vector
from lmscope.web.examples import Example

MAX_TEXT_CHARS = 100_000
MAX_IDS = 100_000
MAX_GENERATE = 256


class Strict(BaseModel):
    """A request body: unknown fields refused, and no coercion between types (false is not 0,
    "0" is not 0, 1.5 is not 1), so what /openapi.json says is exactly what is accepted. JSON
    has one kind of number, and JSON Schema counts 3.0 as the integer 3: so does this."""

    # NaN and infinities are refused as what they are, not as "less than or equal to 100"
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _json_integers(cls, data):
        if not isinstance(data, dict):
            return data
        shapes = _integer_fields(cls)
        out = dict(data)
        for name, shape in shapes.items():
            if name not in out:
                continue
            value = out[name]
            if shape == "int":
                out[name] = _whole(value)
            elif shape == "list" and isinstance(value, list) and not _all_ints(value):
                out[name] = [_whole(v) for v in value]
        return out


def _all_ints(values: list) -> bool:
    return all(type(v) is int for v in values)  # the common case: one quick pass


def _whole(value):
    return int(value) if type(value) is float and value.is_integer() else value


def _shape(annotation) -> str | None:
    """ "int" for an integer field (optional or constrained), "list" for a list of them."""
    if annotation is int:
        return "int"
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        return _shape(args[0])
    if origin in (typing.Union, types.UnionType):
        shapes = {_shape(a) for a in args if a is not type(None)}
        return shapes.pop() if len(shapes) == 1 else None
    if origin is list and args and _shape(args[0]) == "int":
        return "list"
    return None


@functools.cache
def _integer_fields(model: type[BaseModel]) -> dict[str, str]:
    found = {name: _shape(f.annotation) for name, f in model.model_fields.items()}
    return {name: shape for name, shape in found.items() if shape}


# Bounded so that the schema's largest request has a finite size (see app.MAX_BODY); the
# model's vocabulary decides which ids exist.
MAX_TOKEN_ID = 2**31 - 1
TokenId = Annotated[int, Field(ge=0, le=MAX_TOKEN_ID)]
ONE_OF_TEXT_OR_IDS = {"oneOf": [{"required": ["text"]}, {"required": ["ids"]}]}


def left_out(schema: dict) -> None:
    """The schema of a field that may be left out but not sent as null (the null branch and
    the default go; ``not_null`` refuses null)."""
    branches = [s for s in schema.pop("anyOf", []) if s.get("type") != "null"]
    if branches:
        schema.update(branches[0])
    schema.pop("default", None)


# --- requests -----------------------------------------------------------------------------


class TextOrIds(Strict):
    """Text or token ids, exactly one of the two."""

    model_config = ConfigDict(json_schema_extra=ONE_OF_TEXT_OR_IDS)

    text: str | None = Field(
        None, min_length=1, max_length=MAX_TEXT_CHARS, json_schema_extra=left_out
    )
    ids: list[TokenId] | None = Field(
        None, min_length=1, max_length=MAX_IDS, json_schema_extra=left_out
    )

    @field_validator("text", "ids", mode="before")
    @classmethod
    def _not_null(cls, value):
        if value is None:
            raise InvalidInputError("error.web.null-field")
        return value

    @model_validator(mode="after")
    def _one_of(self):
        if (self.text is None) == (self.ids is None):
            raise InvalidInputError("error.web.text-or-ids")
        return self


class TraceRequest(TextOrIds):
    """A prompt as text or as token ids (exactly one of the two)."""

    model_config = ConfigDict(
        json_schema_extra={
            **ONE_OF_TEXT_OR_IDS,
            # the chat template wraps a text: chat needs text
            "if": {"properties": {"chat": {"const": True}}, "required": ["chat"]},
            "then": {"required": ["text"]},
        }
    )

    text: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_TEXT_CHARS,
        examples=["Data visualization"],
        json_schema_extra=left_out,
    )
    chat: bool = Field(
        False,
        description="wrap the text in the model's chat template first (GET /api/model: chat)",
    )

    @model_validator(mode="after")
    def _chat_wraps_text(self):
        if self.chat and self.text is None:
            raise InvalidInputError("error.web.chat-needs-text")
        return self


class IdsRequest(Strict):
    ids: list[TokenId] = Field(..., min_length=1, max_length=MAX_IDS, description="token ids")


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
    seed: int | None = Field(
        None,
        ge=0,
        le=2**53 - 1,
        description="null: a fresh random seed (a whole number JavaScript holds exactly)",
    )
    stop_at_eot: bool = True


# --- responses ----------------------------------------------------------------------------
# What a step shows is typed in lmscope.explain (the CLI renders the same models); the names
# below stay importable from here.


class ErrorResponse(BaseModel):
    error: str = Field(
        ...,
        description="one readable line saying what was wrong, in English unless the request "
        "asks for another language (?lang=zh, Accept-Language)",
    )
    code: str | None = Field(
        None, description="the catalog id of the message (error.…): the page says it in its words"
    )
    params: dict[str, Any] | None = Field(
        None,
        description="the message's values by name: numbers, text, or a message inside it as "
        "{code, params}",
    )


class StepInfo(BaseModel):
    number: int
    key: str
    texts: dict[str, CatalogText] = Field(
        ..., description="title and summary: each one's catalog id (they need no values)"
    )
    said: dict[str, str] | None = Field(
        None, description="title and summary rendered in the language asked for (?lang=)"
    )
    probes: list[str]


class ModelResponse(ModelFacts):
    steps: list[StepInfo]
    temperatures: list[float] = Field(
        ..., description="temperatures for which tail log-sum-exps are sent (exact client probs)"
    )
    top_n: int = Field(..., description="how many top logits a LogitsView carries")
    examples: list[Example] = Field(
        default_factory=list,
        description="the page's example prompts: which this model can read within its context",
    )


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
    code: str | None = Field(None, description="an error's catalog id (as ErrorResponse)")
    params: dict[str, Any] | None = Field(None, description="an error's values")


__all__ = [  # the requests and responses above, and the step responses built in explain
    "ActivationStats",
    "AttentionRequest",
    "AttentionResponse",
    "DropoutExample",
    "EmbeddingResponse",
    "ErrorResponse",
    "FinalResponse",
    "GenerateRequest",
    "GeneratedEvent",
    "Histogram",
    "IdsRequest",
    "LayerNormView",
    "LayerRequest",
    "LayerResponse",
    "LogitsView",
    "Merge",
    "ModelResponse",
    "PoolRequest",
    "PoolResponse",
    "PoolToken",
    "PositionPrediction",
    "PositionRequest",
    "Sampling",
    "StepInfo",
    "Strict",
    "TextOrIds",
    "Token",
    "TokenizerResponse",
    "TraceRequest",
    "TraceResponse",
    "Vector",
]
