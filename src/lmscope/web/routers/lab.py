"""The "Why Transformers" page (``/why``) and its API (``/api/lab/...``): the lab's saved
results as JSON, and their plots. Nothing is re-run by the server; only known experiment names
and the plot files a result names, or their Chinese siblings, are served (see ``web.lab``)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse

from lmscope.web.errors import NOT_FOUND
from lmscope.web.lab import LabIndex
from lmscope.web.pages import page
from lmscope.web.served import ServingShared

router = APIRouter(tags=["lab"])
Source = Literal["shipped", "local"]


@router.api_route("/why", methods=["GET", "HEAD"], include_in_schema=False)
def why_page(request: Request):
    return page("why.html", request)


@router.get("/api/lab", response_model=LabIndex)
def lab_index(served: ServingShared):
    """The saved lab results: for each experiment, which sources exist (shipped with
    lmscope, or made on this machine), the hardware each was measured on, the languages its
    figures were drawn in, and the CLI commands that re-run it."""
    return served.lab.index()


@router.get("/api/lab/{name}", responses=NOT_FOUND)
def lab_result(name: str, served: ServingShared, source: Source = "shipped") -> dict:
    """One result file as saved (schema ``lmscope.lab.result/2``): tables, plots, explanations
    and verdicts, each text a catalog id with its values (``{"id", "values"}``, or a list of
    them) that the page says in its language; a file written before the catalog (``/1``) keeps
    ``{"en", "zh"}`` pairs, its headers sent as catalog texts. Its plots are named by their
    English files; the Chinese figure of ``x.png`` is ``x.zh.png`` (``/api/lab`` says which
    sources have them)."""
    return served.lab.read(name, source)


@router.get(
    "/api/lab/{name}/plot/{file}",
    response_class=FileResponse,
    responses={
        200: {"content": {"image/png": {}, "image/svg+xml": {}}, "description": "the plot"},
        **NOT_FOUND,
    },
)
def lab_plot(name: str, file: str, served: ServingShared, source: Source = "shipped"):
    """A plot (PNG or SVG) that the result names, or its Chinese sibling (``<stem>.zh.png``;
    the English file when the result has none)."""
    return FileResponse(served.lab.plot(name, source, file))
