"""Every user-facing text, once, in one catalog per language.

``catalog/<lang>.json`` maps stable message ids to texts in the ICU message syntax
(``message_format``): ``{name}`` fills in a value, ``{n, plural, one {...} other {...}}``
picks a form by a number. ``text(id, **values)`` renders one in the current language;
``Message`` keeps an id and its values and renders when shown, so an error raised in one
language can be read in another (the CLI, the JSON API and Python each show it in theirs).

The language: ``set_language`` (``lmscope.set_language("zh")``), else ``$LMSCOPE_LANG``
(``zh``, ``zh_CN.UTF-8``), else the system's locale where lmscope speaks its language
(``LANG=zh_CN.UTF-8``, read as gettext reads it), else English. ``using(lang)`` sets it for
one block of work (a command, a web request) without touching the others. Adding a language
is one catalog file and one line in ``LANGUAGES``; ``pseudo`` is made from the English
catalog (every letter accented, each text bracketed and a third longer), so a test can see
any text that does not come from the catalog."""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from importlib import resources

from babel import Locale
from babel.core import get_global

from lmscope.i18n import message_format
from lmscope.i18n.pseudo import pseudo_catalog

# code -> the language's own name for itself; "pseudo" has no file: it is made from "en"
LANGUAGES: dict[str, str] = {"en": "English", "zh": "中文", "pseudo": "[Ƥşéûđö]"}
SOURCE = "en"  # the language every id is written in first, and the fallback
ENV = "LMSCOPE_LANG"
# the locale's variables, strongest first, as gettext reads them; $LANGUAGE (a list, zh_CN:en)
# comes before them all unless the locale is C
LOCALE_VARS = ("LC_ALL", "LC_MESSAGES", "LANG")
PLAIN_LOCALES = ("C", "POSIX")

_chosen: str | None = None  # set_language's choice, for the whole process
_context: ContextVar[str | None] = ContextVar("lmscope_language", default=None)


class UnknownLanguageError(ValueError):
    """A language lmscope has no catalog for."""


def _unknown(name: str) -> UnknownLanguageError:
    """The refusal of a language lmscope has no catalog for, in the language in use."""
    known = ", ".join(LANGUAGES)
    return UnknownLanguageError(text("error.i18n.unknown-language", name=repr(name), known=known))


def parse_language(name: str) -> str:
    """``zh``, ``zh_CN.UTF-8``, ``zh-Hans``, ``EN`` -> a code in LANGUAGES; else an error."""
    code = _known_code(name)
    if code is None:
        raise _unknown(name)
    return code


def _known_code(name: str) -> str | None:
    code = name.strip().split(".")[0].replace("-", "_").split("_")[0].lower()
    return code if code in LANGUAGES else None


def page_tag(code: str) -> str:
    """The tag a web page's ``lang`` attribute gives a language: its likely region from CLDR
    (zh-CN: browsers choose Chinese glyph forms by it); the pseudo-language is en-XA."""
    if code == "pseudo":
        return "en-XA"
    likely = Locale.parse(get_global("likely_subtags").get(code, code))
    return "-".join(part for part in (likely.language, likely.territory) if part)


def system_language() -> str | None:
    """The language of the system's locale when lmscope speaks it (``LANG=zh_CN.UTF-8``: zh;
    ``LANGUAGE=fr:zh``: zh); None for the C locale or a language with no catalog."""
    locale = next((v for v in (os.environ.get(n, "").strip() for n in LOCALE_VARS) if v), "")
    if not locale or locale.split(".")[0] in PLAIN_LOCALES:
        return None
    wanted = os.environ.get("LANGUAGE", "").strip()
    for name in wanted.split(":") if wanted else [locale]:
        code = _known_code(name) if name.strip() else None
        if code is not None and code != "pseudo":  # a test language, never a locale's
            return code
    return None


def set_language(name: str | None) -> str:
    """Speak ``name`` from now on, in this process (None: back to $LMSCOPE_LANG, the system's
    locale or English); returns the language now in use."""
    global _chosen
    _chosen = None if name is None else parse_language(name)
    return language()


def language() -> str:
    """The language texts are rendered in now."""
    here = _context.get()
    if here is not None:
        return here
    if _chosen is not None:
        return _chosen
    env = os.environ.get(ENV, "").strip()
    if env:  # a bad $LMSCOPE_LANG: the CLI refuses it in one line; a library speaks English
        return _known_code(env) or SOURCE
    return system_language() or SOURCE


def speak(name: str) -> str:
    """Render in ``name`` for the rest of this thread's or task's work (a command line)."""
    lang = parse_language(name)
    _context.set(lang)
    return lang


@contextlib.contextmanager
def using(name: str) -> Iterator[str]:
    """Render in ``name`` inside the block, in this thread or task only."""
    token = _context.set(parse_language(name))
    try:
        yield _context.get() or SOURCE
    finally:
        _context.reset(token)


@functools.cache
def catalog(lang: str) -> Mapping[str, str]:
    """One language's texts by id."""
    if lang == "pseudo":
        return pseudo_catalog(catalog(SOURCE))
    if lang not in LANGUAGES:
        raise _unknown(lang)
    raw = (resources.files("lmscope.i18n") / "catalog" / f"{lang}.json").read_text("utf-8")
    return json.loads(raw)


def has(message_id: str) -> bool:
    return message_id in catalog(SOURCE)


def text(message_id: str, lang: str | None = None, /, **values: object) -> str:
    """The text of ``message_id`` in ``lang`` (default: the current language), filled in.
    An id a translation lacks falls back to English; an id nobody has is a KeyError."""
    lang = lang or language()
    # a value that is a message itself (a part of a sentence, an error inside another: a
    # Message or an LmscopeError) is said in the same language as the sentence around it
    values = {key: _said_in(value, lang) for key, value in values.items()}
    texts = catalog(lang)
    template = texts.get(message_id)
    if template is None:
        template = catalog(SOURCE)[message_id]
        lang = SOURCE
    return message_format.render(template, values, _plural_rule(lang), _number)


def _said_in(value: object, lang: str) -> object:
    render = getattr(value, "render", None)
    if callable(render) and isinstance(value, Message | Exception):
        return render(lang)
    return value


@functools.cache
def _plural_rule(lang: str) -> Callable[[float], str]:
    """The language's CLDR plural rule (Babel's; the page uses the browser's Intl.PluralRules,
    from the same CLDR data): English one/other, Chinese other only. Pseudo is English."""
    return Locale.parse(SOURCE if lang == "pseudo" else lang).plural_form


def _number(value: object) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


class Message:
    """A message id with its values, rendered in whatever language is current when shown."""

    __slots__ = ("id", "values")

    def __init__(self, message_id: str, /, **values: object):
        if not has(message_id):
            raise KeyError(f"no message {message_id!r} in the catalog")
        self.id = message_id
        self.values = values

    def render(self, lang: str | None = None) -> str:
        return text(self.id, lang, **self.values)

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        return f"Message({self.id!r}, {self.values!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Message) and (self.id, self.values) == (other.id, other.values)

    def __hash__(self) -> int:
        return hash(self.id)


__all__ = [
    "LANGUAGES",
    "Message",
    "UnknownLanguageError",
    "catalog",
    "language",
    "parse_language",
    "set_language",
    "speak",
    "text",
    "using",
]
