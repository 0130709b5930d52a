"""The pseudo-language: the English catalog with every letter accented, each text in
brackets and a third longer, placeholders and plural syntax kept. Rendered anywhere, a Latin
word outside brackets is a text that did not come from the catalog, and the longer texts
show where a layout breaks when a translation runs long."""

from __future__ import annotations

from collections.abc import Mapping

from lmscope.i18n.message_format import Part, Plural, Text, parse, serialize

ACCENTED = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "àƀçđéƒĝĥîĵķĺɱñöþǫŕšţûṽŵẋýžÀƁÇĐÉƑĜĤÎĴĶĹṀÑÖÞǪŔŠŢÛṼŴẊÝŽ",
)
OPEN, CLOSE = "⟦", "⟧"


def pseudo_text(text: str) -> str:
    """One English text in the pseudo-language: the message parser finds what is text, so
    names and plural syntax stay as they are."""
    parts = parse(text)
    letters = sum(c.isalpha() for c in _words(parts))
    padding = "~" * max(1, letters // 3) if letters else ""
    return f"{OPEN}{serialize(_accented(parts))}{padding}{CLOSE}"


def _accented(parts: list[Part]) -> list[Part]:
    out: list[Part] = []
    for part in parts:
        if isinstance(part, Text):
            out.append(Text(part.text.translate(ACCENTED)))
        elif isinstance(part, Plural):
            forms = {form: _accented(body) for form, body in part.forms.items()}
            out.append(Plural(part.name, forms))
        else:
            out.append(part)
    return out


def _words(parts: list[Part]) -> str:
    """All the text of a message, every plural form's included."""
    pieces: list[str] = []
    for part in parts:
        if isinstance(part, Text):
            pieces.append(part.text)
        elif isinstance(part, Plural):
            pieces.extend(_words(body) for body in part.forms.values())
    return "".join(pieces)


def pseudo_catalog(source: Mapping[str, str]) -> dict[str, str]:
    return {key: pseudo_text(value) for key, value in source.items()}
