"""The explainer page and the offline API manual (FastAPI's own docs load from a CDN)."""

from __future__ import annotations

from fastapi import APIRouter

from lmscope.web.pages import page

router = APIRouter(include_in_schema=False)


@router.api_route("/", methods=["GET", "HEAD"])
def index():
    return page("index.html")


@router.api_route("/docs", methods=["GET", "HEAD"])
def docs():
    return page("api.html")
