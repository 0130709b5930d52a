"""The static pages the server sends (no build step, no CDN): the explainer, the API manual,
the char-RNN neurons page and "Why Transformers", all from ``static/``."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi.responses import FileResponse

STATIC = Path(str(files("lmscope.web") / "static"))


def page(name: str) -> FileResponse:
    return FileResponse(STATIC / name)
