"""The pages the server sends (no build step, no CDN). The explainer, the char-RNN neurons page
and "Why Transformers" share one head and header: ``templates/base.html`` (and the text box of
``templates/prompt_box.html``), rendered once per process and language on first request and
kept, in the language the page's script will choose (``page_language``), so that its first
paint is not in another; the API manual is a plain file in ``static/``. Both carry an ETag and
Last-Modified, as a file does.

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
from fastapi import Request
from fastapi.responses import FileResponse, Response

from lmscope import i18n
from lmscope.web import bundle
from lmscope.web.error_codes import accepted_language
from lmscope.web.errors import NotFound

STATIC = Path(str(files("lmscope.web") / "static"))
TEMPLATES = Path(str(files("lmscope.web") / "templates"))
# the reader's choice of language on a page, which catalog.js keeps in localStorage and here
COOKIE = "lmscope.lang"
MENU = tuple(code for code in i18n.LANGUAGES if code != "pseudo")  # the toggle's languages


def page(name: str, request: Request | None = None) -> Response:
    if (TEMPLATES / name).is_file():
        lang = page_language(request) if request is not None else i18n.SOURCE
        body, headers = rendered(name, lang)
        return Response(body, media_type="text/html", headers=headers)
    return FileResponse(STATIC / name)


def page_language(request: Request) -> str:
    """The language a page is sent in, chosen as its script chooses: ``?lang=`` (the
    pseudo-language too), else the reader's choice on the page (the cookie), else the first of
    the browser's languages lmscope speaks (``Accept-Language``), else English."""
    asked = request.query_params.get("lang", "")
    if asked in i18n.LANGUAGES:
        return asked
    saved = request.cookies.get(COOKIE, "")
    if saved in MENU:
        return saved
    browser = accepted_language(request.headers.get("accept-language", ""))
    return browser if browser in MENU else i18n.SOURCE


def toggle_language(lang: str) -> str:
    """The language a page's toggle offers: the menu's next (catalog.js nextLang)."""
    return MENU[(MENU.index(lang) + 1) % len(MENU)] if lang in MENU else MENU[0]


@functools.cache
def rendered(name: str, lang: str = i18n.SOURCE) -> tuple[bytes, dict[str, str]]:
    """A template's page in ``lang`` as bytes, with the validators a FileResponse would send
    and the request headers its language was chosen by (``Vary``)."""
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
    # the page's words in its language (its script says them again if the reader switches)
    environment.globals["say"] = lambda message_id, said_in=lang: i18n.text(message_id, said_in)
    toggle = toggle_language(lang)
    environment.globals["page_tag"] = i18n.page_tag(lang)
    environment.globals["toggle"] = toggle
    environment.globals["toggle_tag"] = i18n.page_tag(toggle)
    # the page's modules as one request (web/bundle.py)
    environment.globals["bundle"] = bundle.address
    body = environment.get_template(name).render().encode("utf-8")
    newest = max(path.stat().st_mtime for path in TEMPLATES.glob("*.html"))
    return body, {
        "etag": f'"{hashlib.md5(body, usedforsecurity=False).hexdigest()}"',
        "last-modified": formatdate(newest, usegmt=True),
        "vary": "Accept-Language, Cookie",
        "content-language": i18n.page_tag(lang),
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
