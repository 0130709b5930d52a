"""Requests of the page's pictures (``web.routers.pictures``); their answers are typed in
``lmscope.explain.pictures`` and ``lmscope.explain.neighbours``."""

from __future__ import annotations

from pydantic import Field

from lmscope.explain.neighbours import NEIGHBOURS
from lmscope.web.schemas import IdsRequest


class LinesRequest(IdsRequest):
    layer: int = Field(..., ge=0)
    position: int | None = Field(None, ge=0, description="the selected query; default: the last")
    start: int | None = Field(None, ge=0, description="first position shown; default: around it")


class FlowRequest(IdsRequest):
    position: int | None = Field(None, ge=0, description="the position followed; default: last")


class NeighboursRequest(IdsRequest):
    position: int = Field(..., ge=0, description="the token whose neighbours are asked for")
    k: int = Field(NEIGHBOURS, ge=1, le=50)
