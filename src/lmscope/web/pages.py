"""The pages the server sends (no build step, no CDN). The explainer, the char-RNN neurons page
and "Why Transformers" share one head and header: ``templates/base.html`` (and the text box of
``templates/prompt_box.html``), rendered once per process on first request and kept; the API
manual is a plain file in ``static/``. Both carry an ETag and Last-Modified, as a file does."""

from __future__ import annotations

import functools
import hashlib
from email.utils import formatdate
from importlib.resources import files
from pathlib import Path

import jinja2
from fastapi.responses import FileResponse, Response

STATIC = Path(str(files("lmscope.web") / "static"))
TEMPLATES = Path(str(files("lmscope.web") / "templates"))


def page(name: str) -> Response:
    if (TEMPLATES / name).is_file():
        body, headers = rendered(name)
        return Response(body, media_type="text/html", headers=headers)
    return FileResponse(STATIC / name)


@functools.cache
def rendered(name: str) -> tuple[bytes, dict[str, str]]:
    """A template's page as bytes, with the validators a FileResponse would send."""
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        trim_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    body = environment.get_template(name).render().encode("utf-8")
    newest = max(path.stat().st_mtime for path in TEMPLATES.glob("*.html"))
    return body, {
        "etag": f'"{hashlib.md5(body, usedforsecurity=False).hexdigest()}"',
        "last-modified": formatdate(newest, usegmt=True),
    }
