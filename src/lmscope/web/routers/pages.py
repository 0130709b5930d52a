"""The explainer page, the offline API manual (FastAPI's own docs load from a CDN) and the
catalog's texts the pages speak (``/i18n/<lang>.json``, outside ``/api/`` so that the work
queue never holds it up: it answers at once while the model is busy)."""

from __future__ import annotations

from fastapi import APIRouter, Header, Request

from lmscope.web import bundle
from lmscope.web.pages import catalog_response, page

router = APIRouter(include_in_schema=False)


@router.api_route("/", methods=["GET", "HEAD"])
def index(request: Request):
    return page("index.html", request)


@router.api_route("/docs", methods=["GET", "HEAD"])
def docs():
    return page("api.html")


@router.api_route("/i18n/{lang}.json", methods=["GET", "HEAD"])
def catalog(lang: str, v: str | None = None, if_none_match: str | None = Header(None)):
    """One language's texts by catalog id (``en``, ``zh``, ``pseudo``); ``v``: the version
    the page names, which lets the browser keep the answer."""
    return catalog_response(lang, v, if_none_match)


@router.api_route("/bundle/{name}.{kind}", methods=["GET", "HEAD"])
def joined(name: str, kind: str, v: str | None = None, if_none_match: str | None = Header(None)):
    """A page's modules joined into one (``app+precision.js``: app.js, precision.js and what
    they import), or its style sheets (``style+flow.css``); ``v``: the version the page
    names, which lets the browser keep it."""
    return bundle.response(name, kind, v, if_none_match)
