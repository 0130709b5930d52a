"""The pseudo-language: the English catalog with every letter accented, each text in
brackets and a third longer, placeholders and plural syntax kept. Rendered anywhere, a Latin
word outside brackets is a text that did not come from the catalog, and the longer texts
show where a layout breaks when a translation runs long."""

from __future__ import annotations

from collections.abc import Mapping

ACCENTED = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "àƀçđéƒĝĥîĵķĺɱñöþǫŕšţûṽŵẋýžÀƁÇĐÉƑĜĤÎĴĶĹṀÑÖÞǪŔŠŢÛṼŴẊÝŽ",
)
OPEN, CLOSE = "⟦", "⟧"


def pseudo_text(text: str) -> str:
    """One English text in the pseudo-language."""
    out: list[str] = []
    i = 0
    in_name = [False]  # a stack per open brace: True where it holds a name, not text
    letters = 0
    while i < len(text):
        c = text[i]
        if c == "{":
            # a brace right after a plural selector opens text; otherwise it opens a name
            in_name.append(not _opens_plural_body(text, i))
            out.append(c)
        elif c == "}":
            in_name.pop()
            out.append(c)
        elif in_name[-1]:
            out.append(c)
        elif text.startswith(("'{'", "'}'"), i):
            out.append(text[i : i + 3])  # a literal brace stays as it is
            i += 2
        else:
            out.append(c.translate(ACCENTED))
            letters += c.isalpha()
        i += 1
    padding = "~" * max(1, letters // 3) if letters else ""
    return f"{OPEN}{''.join(out)}{padding}{CLOSE}"


def _opens_plural_body(text: str, brace: int) -> bool:
    """Whether the '{' at ``brace`` follows a plural selector (other, one, =0)."""
    before = text[:brace].rstrip()
    word = before.split()[-1] if before.split() else ""
    word = word.split("}")[-1].split(",")[-1]
    exact = word.startswith("=") and word[1:].isdigit()  # "=0", not the "=" of "r = {r}"
    return word in {"zero", "one", "two", "few", "many", "other"} or exact


def pseudo_catalog(source: Mapping[str, str]) -> dict[str, str]:
    return {key: pseudo_text(value) for key, value in source.items()}
