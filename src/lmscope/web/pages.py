"""The pages the server sends (no build step, no CDN). The explainer, the char-RNN neurons page
and "Why Transformers" share one head and header: ``templates/base.html`` (and the text box of
``templates/prompt_box.html``), rendered once per process on first request and kept; the API
manual is a plain file in ``static/``. Both carry an ETag and Last-Modified, as a file does.

The page's words are the catalog's (``lmscope.i18n``): ``/i18n/<lang>.json`` serves one
language's texts by id, with an ETag; the pages name the catalogs' version in a
``<meta name="lmscope-catalog">``, and a request that asks for that version may be kept by the
browser for good (a new version is a new address)."""

from __future__ import annotations

import functools
import hashlib
import json
from email.utils import formatdate
from importlib.resources import files
from pathlib import Path

import jinja2
from fastapi.responses import FileResponse, Response

from lmscope import i18n
from lmscope.web import bundle
from lmscope.web.errors import NotFound

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
    environment.globals["catalog_version"] = catalog_version()
    # the languages the page offers and their tags: i18n.LANGUAGES, so a new one needs no JS
    environment.globals["languages"] = {code: i18n.page_tag(code) for code in i18n.LANGUAGES}
    # the page's words, in English until its script says them in the reader's language
    environment.globals["say"] = lambda message_id, lang=i18n.SOURCE: i18n.text(message_id, lang)
    # the page's modules as one request (web/bundle.py)
    environment.globals["bundle"] = bundle.address
    body = environment.get_template(name).render().encode("utf-8")
    newest = max(path.stat().st_mtime for path in TEMPLATES.glob("*.html"))
    return body, {
        "etag": f'"{hashlib.md5(body, usedforsecurity=False).hexdigest()}"',
        "last-modified": formatdate(newest, usegmt=True),
    }


@functools.cache
def catalog_body(lang: str) -> tuple[bytes, str]:
    """One language's catalog as compact JSON (ids sorted) and its ETag."""
    texts = i18n.catalog(lang)
    body = json.dumps(texts, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    data = body.encode("utf-8")
    return data, f'"{hashlib.md5(data, usedforsecurity=False).hexdigest()}"'


@functools.cache
def catalog_version() -> str:
    """One version for every language's texts (pseudo is made from English)."""
    tags = "".join(catalog_body(lang)[1] for lang in i18n.LANGUAGES)
    return hashlib.md5(tags.encode(), usedforsecurity=False).hexdigest()[:12]


def catalog_response(lang: str, version: str | None, if_none_match: str | None) -> Response:
    """``/i18n/<lang>.json``: 304 when the browser has it; kept for good when the address
    names the current version (the pages do), else checked again each time."""
    if lang not in i18n.LANGUAGES:
        known = ", ".join(i18n.LANGUAGES)
        raise NotFound("error.page.no-such-language", lang=lang, known=known)
    body, etag = catalog_body(lang)
    cache = "public, max-age=31536000, immutable" if version == catalog_version() else "no-cache"
    headers = {"etag": etag, "cache-control": cache}
    if if_none_match is not None and etag in {tag.strip() for tag in if_none_match.split(",")}:
        return Response(status_code=304, headers=headers)
    return Response(body, media_type="application/json", headers=headers)
