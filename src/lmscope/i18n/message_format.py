"""The subset of ICU MessageFormat the catalogs use: ``{name}`` fills in a value, and
``{count, plural, one {# token} other {# tokens}}`` picks a form by a number (``#`` is the
number, written with thousands separators), ``=0 {...}`` an exact one. Translators' tools
(Weblate, Crowdin, Lokalise) read the same syntax in JSON catalogs. One simplification: an
apostrophe is only an apostrophe (``tensor '{name}'`` fills the name in), and ``'{'`` and
``'}'`` are literal braces; ICU's other quoting is not used.

A text writes a space on each side of a placeholder (``头 {value} 不存在``), which Chinese
wants beside a number or a Latin word; where the value filled in starts or ends with a Chinese
character or full-width mark, the text's space between the two is left out (``{method} 在``:
``LSTM 在``, ``朴素注意力在``). The value itself is never changed."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

# CJK symbols and punctuation, the ideographs (with extension A) and the full-width forms
_WIDE = re.compile("[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")


class MessageFormatError(ValueError):
    """A catalog text that is not valid message syntax (a bug in a catalog, not user input)."""


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Value:
    name: str


@dataclass(frozen=True)
class Number:
    """``#`` inside a plural form: the count it was chosen by."""


@dataclass(frozen=True)
class Plural:
    name: str
    forms: dict[str, list[Part]]


Part = Text | Value | Number | Plural


def parse(text: str) -> list[Part]:
    return _parse(text, 0, top=True)[0]


def serialize(parts: list[Part]) -> str:
    """The text ``parse`` read ``parts`` from (braces in text written as ``'{'``/``'}'``)."""
    out: list[str] = []
    for part in parts:
        if isinstance(part, Text):
            out.append(part.text.replace("{", "'{'").replace("}", "'}'"))
        elif isinstance(part, Number):
            out.append("#")
        elif isinstance(part, Value):
            out.append(f"{{{part.name}}}")
        else:
            forms = " ".join(f"{form} {{{serialize(body)}}}" for form, body in part.forms.items())
            out.append(f"{{{part.name}, plural, {forms}}}")
    return "".join(out)


def _parse(text: str, i: int, top: bool) -> tuple[list[Part], int]:
    parts: list[Part] = []
    literal: list[str] = []
    while i < len(text):
        c = text[i]
        if text.startswith(("'{'", "'}'"), i):
            literal.append(text[i + 1])  # a literal brace; any other apostrophe is just one
            i += 3
            continue
        if c == "{":
            if literal:
                parts.append(Text("".join(literal)))
                literal = []
            part, i = _argument(text, i + 1)
            parts.append(part)
            continue
        if c == "}":
            if top:
                raise MessageFormatError(f"unmatched '}}' in {text!r}")
            break
        if c == "#" and not top:
            if literal:
                parts.append(Text("".join(literal)))
                literal = []
            parts.append(Number())
            i += 1
            continue
        literal.append(c)
        i += 1
    if literal:
        parts.append(Text("".join(literal)))
    return parts, i


def _argument(text: str, i: int) -> tuple[Part, int]:
    close = _find_any(text, i, ",}")
    name = text[i:close].strip()
    if not name.isidentifier():
        raise MessageFormatError(f"bad placeholder {name!r} in {text!r}")
    if text[close] == "}":
        return Value(name), close + 1
    comma = _find_any(text, close + 1, ",}")
    kind = text[close + 1 : comma].strip()
    if kind != "plural" or text[comma] != ",":
        raise MessageFormatError(f"only {{name}} and {{name, plural, ...}} are used: {text!r}")
    forms: dict[str, list[Part]] = {}
    i = comma + 1
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            raise MessageFormatError(f"unclosed plural in {text!r}")
        if text[i] == "}":
            break
        brace = text.find("{", i)
        if brace < 0:
            raise MessageFormatError(f"plural form without text in {text!r}")
        selector = text[i:brace].strip()
        body, i = _parse(text, brace + 1, top=False)
        if i >= len(text) or text[i] != "}":
            raise MessageFormatError(f"unclosed plural form in {text!r}")
        forms[selector] = body
        i += 1
    if "other" not in forms:
        raise MessageFormatError(f"a plural needs an 'other' form: {text!r}")
    return Plural(name, forms), i + 1


def _find_any(text: str, i: int, chars: str) -> int:
    positions = [p for p in (text.find(c, i) for c in chars) if p >= 0]
    if not positions:
        raise MessageFormatError(f"unclosed placeholder in {text!r}")
    return min(positions)


def placeholders(text: str) -> set[str]:
    """The names a text fills in, plural counts included."""
    found: set[str] = set()

    def walk(parts: list[Part]) -> None:
        for part in parts:
            if isinstance(part, Value | Plural):
                found.add(part.name)
            if isinstance(part, Plural):
                for body in part.forms.values():
                    walk(body)

    walk(parse(text))
    return found


def render(
    text: str,
    values: Mapping[str, object],
    plural_form: Callable[[float], str],
    number: Callable[[object], str],
) -> str:
    """``text`` with its placeholders filled from ``values``; a missing value is an error."""
    out: list[tuple[str, bool]] = []  # (piece, whether it is a value filled in)

    def walk(parts: list[Part], count: object = None) -> None:
        for part in parts:
            if isinstance(part, Text):
                out.append((part.text, False))
            elif isinstance(part, Number):
                out.append((number(count), True))
            else:
                if part.name not in values:
                    raise MessageFormatError(f"no value for {{{part.name}}} in {text!r}")
                value = values[part.name]
                if isinstance(part, Value):
                    out.append((number(value) if _is_number(value) else str(value), True))
                    continue
                exact = f"={value}"
                form = exact if exact in part.forms else plural_form(float(value))  # type: ignore[arg-type]
                walk(part.forms.get(form, part.forms["other"]), value)

    walk(parse(text))
    return "".join(_close_wide_gaps(out))


def _close_wide_gaps(pieces: list[tuple[str, bool]]) -> list[str]:
    """The pieces, less a text's space between a Chinese character and a value beside it
    that starts or ends with one (see the module's note)."""
    said = [piece for piece, _ in pieces]
    for i, (piece, is_value) in enumerate(pieces):
        if not is_value or not piece:
            continue
        if i > 0 and not pieces[i - 1][1] and _WIDE.match(piece[0]):
            before = said[i - 1]
            if len(before) >= 2 and before[-1] == " " and _WIDE.match(before[-2]):
                said[i - 1] = before[:-1]
        if i + 1 < len(pieces) and not pieces[i + 1][1] and _WIDE.match(piece[-1]):
            after = said[i + 1]
            if len(after) >= 2 and after[0] == " " and _WIDE.match(after[1]):
                said[i + 1] = after[1:]
    return said


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
