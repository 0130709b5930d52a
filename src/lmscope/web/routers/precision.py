"""What the served precision costs: the served model's logits for a prompt against float32's,
measured on request (``POST /api/precision``). ``GET /api/model`` says the precision
(``dtype``); in bfloat16 or float16 the page offers this measurement beside it."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel, Field

from lmscope.web.errors import ERRORS
from lmscope.web.schemas import TextOrIds
from lmscope.web.served import Serving

router = APIRouter(tags=["model"])


class PrecisionRequest(TextOrIds):
    """The prompt as text or token ids (exactly one of the two)."""

    top_k: int = Field(5, ge=1, le=100, description="how many next tokens to compare")


class PrecisionResponse(BaseModel):
    """The served model against float32 on one prompt (``LanguageModel.precision_cost``)."""

    dtype: str = Field(..., description="the served precision: float32, bfloat16 or float16")
    reference: Literal["float32", "upcast"] = Field(
        ...,
        description="float32: the model loaded again in float32; upcast: these weights in "
        "float32, when the originals are not at hand",
    )
    tokens: int
    max_abs_delta_logit: float = Field(
        ..., description="largest |change| of any logit, any position"
    )
    max_abs_delta_last: float = Field(..., description="largest |change| after the last position")
    top_k: int
    top_ids: list[int] = Field(..., description="the served model's top-k after the last position")
    reference_top_ids: list[int] = Field(..., description="float32's top-k")
    same_top_k: bool = Field(..., description="the same tokens in the same order")
    same_top_k_set: bool = Field(..., description="the same tokens in any order")
    top1_changed_positions: int = Field(
        ..., description="positions whose most likely next token differs from float32's"
    )


@router.post("/api/precision", response_model=PrecisionResponse, responses=ERRORS)
async def precision(req: PrecisionRequest, served: Serving):
    """The served precision's cost on this prompt: every logit against float32's (the largest
    change) and the top-k next tokens after the last position (the same or not). Computed on
    request; in bfloat16 the first request loads the float32 model, which is then kept. A
    float32 server answers with no change."""
    ids = served.prompt_ids(req)
    model, costs = served.model, served.store.costs
    units = 2 * (costs.forward(len(ids)) + costs.logits(len(ids)))

    def compute():
        return model.precision_cost(list(ids), req.top_k).to_dict(), 1024

    found, _ = await served.store.obtain(("precision", ids, req.top_k), units, compute)
    return PrecisionResponse(**found)
