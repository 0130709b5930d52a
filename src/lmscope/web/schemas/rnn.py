"""Request and response bodies of the char-RNN endpoints (``/api/rnn/...``).

A request names a served model by the name ``GET /api/rnn/models`` lists, never by a path:
the server loads its char models once, at start (``lmscope serve --rnn MODEL``).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from lmscope.web.schemas import Strict

MAX_TEXT = 3000  # characters one activation request reads (every gate of every unit is kept)
MIN_FIND_TEXT = 200  # a finder run on typed text needs at least this many characters
MAX_FIND_TEXT = 20_000
MAX_SAMPLE = 2000

ModelName = Field(
    None, max_length=200, description="a name from GET /api/rnn/models; default: the first"
)


class ActivationsRequest(Strict):
    model: str | None = ModelName
    text: str = Field(..., max_length=MAX_TEXT, description="the text to read")
    layer: int = Field(0, ge=0)
    unit: int = Field(0, ge=0)
    kind: str | None = Field(
        None, max_length=1, description="h, c, i, f, g, o (LSTM), r, z, n (GRU); default c/h"
    )


class CellsRequest(Strict):
    model: str | None = ModelName
    text: str | None = Field(
        None,
        max_length=MAX_FIND_TEXT,
        description=f"search this text (at least {MIN_FIND_TEXT} characters); default: a sample "
        "of the model's training corpus",
    )
    top: int = Field(3, ge=1, le=10)


class SampleRequest(Strict):
    model: str | None = ModelName
    prompt: str = Field("\n", min_length=1, max_length=MAX_TEXT)
    n: int = Field(200, ge=1, le=MAX_SAMPLE, description="characters to sample")
    temperature: float = Field(0.8, ge=0, le=5, description="0 means greedy")
    seed: int | None = Field(None, ge=0, le=2**53 - 1)


class RNNModelFacts(BaseModel):
    name: str
    arch: str
    layers: int
    hidden: int
    embed: int
    vocab_size: int
    n_params: int
    kinds: list[str]
    gates: list[str]  # the gates the page shows (LSTM i f o, GRU r z)
    default_kind: str
    corpus: str | None  # what the finder reads by default
    features: str = "prose"  # the finder's feature set for this model: prose or code


class RNNModels(BaseModel):
    models: list[RNNModelFacts]


class Prediction(BaseModel):
    char: str
    prob: float


class ActivationsResponse(BaseModel):
    model: str
    layer: int
    unit: int
    kind: str
    text: str
    slots: list[int | None] = Field(
        ..., description="per character of text: its step, or null when it was skipped"
    )
    values: list[float] = Field(..., description="the unit's value after each step")
    gates: dict[str, list[float]] = Field(..., description="the unit's gates after each step")
    top: list[list[Prediction]] = Field(..., description="top-5 next characters after each step")
    next_prob: list[float | None]
    skipped: list[str]
    note: str | None


class UnitScoreBody(BaseModel):
    kind: str
    layer: int
    unit: int
    r: float | None
    r_select: float | None
    threshold: float | None = None
    direction: str | None = None
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    f1_select: float | None = None


class FeatureBody(BaseModel):
    name: str
    kind: str
    description: dict[str, str]
    stats: dict
    best: list[UnitScoreBody]
    strongest_r: UnitScoreBody | None
    note: str | None
    note_data: dict | None


class CellsResponse(BaseModel):
    model: str
    source: str
    chars_read: int
    chars_skipped: int
    select_chars: int
    heldout_chars: int
    features: list[FeatureBody]


class SampleResponse(BaseModel):
    model: str
    prompt: str
    sample: str
    seed: int
    temperature: float


class TimelineSample(BaseModel):
    iteration: int
    train_loss: float | None
    val_loss: float | None
    text: str


class TimelineResponse(BaseModel):
    """The samples a model kept while it trained: the same prime and seed at each iteration
    listed, so only the weights differ between them (``timeline.json`` in its folder)."""

    model: str
    arch: str | None = None
    corpus: str | None = None
    prime: str | None = None
    seed: int | None = None
    length: int | None = None
    samples: list[TimelineSample]
