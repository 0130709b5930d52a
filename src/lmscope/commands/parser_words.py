"""The option parser's own words in the language asked for (``--lang``, $LMSCOPE_LANG): its error
lines and the layout of ``--help``.

The parsers' texts (descriptions, option help, group titles, epilogs) are catalog ids, rendered
when the parser is built (``commands/*.py``). argparse adds words of its own: ``usage:``, the
headings ``positional arguments`` and ``options``, ``-h``'s and ``--version``'s help, and its
error messages (``argument --temperature/-t: invalid float value: 'abc'``). Their English is
argparse's; the catalog has each as a ``parser.…`` id whose English text is argparse's words (a
message's values as placeholders), so one catalog text both recognises argparse's line and says
it in another language. Option names, values and the usage block stay as typed: they are what the
user types. A line no catalog text matches stays English (lmscope's own option checks raise
catalog errors, ``commands.common.OptionError``, which never reach argparse). English help is
argparse's own, byte for byte; in Chinese the lines wrap by columns (a Chinese character takes
two).
"""

from __future__ import annotations

import argparse
import difflib
import functools
import re

from lmscope import i18n
from lmscope.commands.wrapping import wrap_cells
from lmscope.i18n import message_format

# argparse's own words in --help: their English catalog text is argparse's (Python 3.10+)
_HELP_WORDS = (
    "parser.heading.positional",
    "parser.heading.options",
    "parser.help",
    "parser.version",
)
# argparse's error messages, tried in this order (the first whose English matches says it)
_ERRORS = (
    "parser.error.invalid-value",
    "parser.error.invalid-choice",
    "parser.error.expected-one",
    "parser.error.expected-at-most-one",
    "parser.error.expected-at-least-one",
    "parser.error.expected-1",
    "parser.error.expected-n",
    "parser.error.required",
    "parser.error.one-required",
    "parser.error.unrecognized",
    "parser.error.not-allowed",
    "parser.error.ignored-value",
    "parser.error.ambiguous",
    "parser.error.unexpected-option",
    "parser.error.cannot-open",
)
# the type in "invalid TYPE value", by the name argparse gives the type function
_TYPES = {
    "int": "parser.type.int",
    "float": "parser.type.float",
    "str": "parser.type.str",
    "Path": "parser.type.path",
}


# --- error lines -----------------------------------------------------------------------------
def parser_message_in(message: str, lang: str) -> str:
    """argparse's ``message`` in ``lang``: said by the catalog where its English matches, else
    as it is."""
    if lang == "en":
        return message
    values = _match("parser.error.argument", message)
    if values is not None:
        said = _said(str(values["message"]), lang)
        return i18n.text("parser.error.argument", lang, name=values["name"], message=said)
    return _said(message, lang)


def _said(message: str, lang: str) -> str:
    for message_id in _ERRORS:
        values = _match(message_id, message)
        if values is not None:
            if "type" in values:
                values["type"] = _type_words(str(values["type"]), lang)
            return i18n.text(message_id, lang, **values)
    return message


def _type_words(name: str, lang: str) -> str:
    """A type function's name as the kind of value it reads: int as 整数; another class as
    itself (Fraction); a function's name (parse, seed_value) says nothing to a user: 值."""
    if name in _TYPES:
        return i18n.text(_TYPES[name], lang)
    if name[:1].isupper():
        return i18n.text("parser.type.class", lang, name=name)
    return i18n.text("parser.type.function", lang)


def _match(message_id: str, message: str) -> dict[str, object] | None:
    """The values that make ``message_id``'s English text ``message``; None when none do."""
    for pattern in _patterns(message_id):
        found = pattern.fullmatch(message)
        if found:
            return dict(found.groupdict())
    return None


@functools.cache
def _patterns(message_id: str) -> tuple[re.Pattern[str], ...]:
    """``message_id``'s English text as patterns: a placeholder matches any text, a plural's
    ``#`` a number; one pattern per plural form."""

    def variants(parts: list[message_format.Part], count: str | None) -> list[str]:
        out = [""]
        for part in parts:
            if isinstance(part, message_format.Text):
                out = [o + re.escape(part.text) for o in out]
            elif isinstance(part, message_format.Number):
                out = [o + rf"(?P<{count}>\d+)" for o in out]
            elif isinstance(part, message_format.Value):
                out = [o + rf"(?P<{part.name}>.+?)" for o in out]
            else:
                forms = [v for body in part.forms.values() for v in variants(body, part.name)]
                out = [o + form for o in out for form in forms]
        return out

    english = message_format.parse(i18n.catalog(i18n.SOURCE)[message_id])
    return tuple(re.compile(p, re.S) for p in variants(english, None))


# --- words a command does not take ------------------------------------------------------------
_NUMBER = re.compile(r"-\d+(\.\d*)?")  # a negative value, not an option


def unrecognized(parser: argparse.ArgumentParser, extras: list[str]) -> str:
    """Why ``parser`` refuses ``extras``, in the current language: an option it does not have,
    with the one most like it (``--layr``: ``--layer``), else argparse's "unrecognized
    arguments" line."""
    typed = [w.split("=", 1)[0] for w in extras if w.startswith("-") and not _NUMBER.fullmatch(w)]
    if not typed:
        return i18n.text("parser.error.unrecognized", names=" ".join(extras))
    meant = closest_option(typed[0], list(parser._option_string_actions))
    if meant is None:
        return i18n.text("parser.error.unknown-option", option=typed[0], command=parser.prog)
    return i18n.text("parser.error.unknown-option-close", option=typed[0], close=meant)


def closest_option(typed: str, options: list[str]) -> str | None:
    """The long option ``typed`` most likely meant: one it begins with (``--top`` for
    ``--top-k``), else the closest in spelling; None when none is close."""
    longs = [o for o in options if o.startswith("--") and o != "--help"]
    begun = [o for o in longs if typed.startswith(o)]
    if begun:
        return max(begun, key=len)
    close = difflib.get_close_matches(typed, longs, n=1, cutoff=0.75)
    return close[0] if close else None


# --- --help (Chinese lines wrap where Chinese may break: commands.wrapping) -------------------
def argparse_words(text: str, lang: str) -> str:
    """One of argparse's own words in --help (a heading, -h's help) in ``lang``; any other
    text as it is (the parsers' own are in the language already)."""
    for message_id in _HELP_WORDS:
        if text == i18n.text(message_id, i18n.SOURCE):
            return i18n.text(message_id, lang)
    return text


def help_in(
    formatter_class: type[argparse.HelpFormatter], lang: str
) -> type[argparse.HelpFormatter]:
    """``formatter_class`` saying argparse's own words in ``lang``, wrapping by columns."""

    class HelpInLang(formatter_class):  # type: ignore[valid-type,misc]
        def _format_usage(self, usage, actions, groups, prefix):
            if prefix is not None:
                return super()._format_usage(usage, actions, groups, prefix)
            # "usage:" is as wide as "用法：" (six columns), so wrapped lines stay aligned
            english = i18n.text("parser.usage", i18n.SOURCE)
            text = super()._format_usage(usage, actions, groups, english)
            return text.replace(english, i18n.text("parser.usage", lang), 1)

        def start_section(self, heading):
            heading = heading and argparse_words(heading, lang)
            super().start_section(heading)
            self._headings = {*getattr(self, "_headings", ()), heading}

        def format_help(self):
            # argparse ends a heading with ':'; Chinese punctuation is full-width
            text = super().format_help()
            for heading in getattr(self, "_headings", ()):
                if heading:
                    ended = i18n.text("parser.heading", lang, heading=heading).replace("\\", r"\\")
                    text = re.sub(rf"(?m)^(\s*){re.escape(heading)}:$", rf"\g<1>{ended}", text)
            return text

        def _get_help_string(self, action):
            return argparse_words(super()._get_help_string(action), lang)

        def _split_lines(self, text, width):
            return wrap_cells(text, width)

        def _fill_text(self, text, width, indent):
            return "\n".join(indent + line for line in wrap_cells(text, width - len(indent)))

    return HelpInLang
