"""Characters that byte-level tokens share: a byte-level BPE works on UTF-8 bytes, so one
character (我 is E6 88 91) may be split over several tokens, each holding bytes that are no
character on their own. ``char_spans`` finds those runs of tokens and the text they form
together, so a page or a terminal can label the chips with the character.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field


class CharSpan(BaseModel):
    """Tokens ``start``..``end`` (positions, inclusive) whose bytes only form text together."""

    start: int
    end: int
    text: str = Field(..., description="the characters these tokens' bytes form together")
    complete: bool = Field(..., description="false: the bytes stop inside a character")


def _char_length(lead: int) -> int:
    """Bytes of the UTF-8 character starting with ``lead`` (1 for a byte that starts none)."""
    if 0xC2 <= lead < 0xE0:
        return 2
    if 0xE0 <= lead < 0xF0:
        return 3
    return 4 if 0xF0 <= lead < 0xF5 else 1


def _crossings(raw: bytes, owner: list[int]) -> list[tuple[int, int]]:
    """(first token, last token) of every character whose bytes lie in more than one token."""
    out, b = [], 0
    while b < len(raw):
        size = _char_length(raw[b])
        tail = raw[b + 1 : b + size]
        if size > 1 and not all(0x80 <= x < 0xC0 for x in tail):
            size = 1  # a lead byte without its continuation: a stray byte, no character
        last = min(b + size, len(raw)) - 1
        if owner[last] != owner[b]:
            out.append((owner[b], owner[last]))
        b += size
    return out


def char_spans(pieces: Sequence[bytes]) -> list[CharSpan]:
    """The runs of tokens (each token's bytes in ``pieces``) that share a character."""
    raw = b"".join(pieces)
    owner = [i for i, piece in enumerate(pieces) for _ in piece]
    merged: list[list[int]] = []
    for first, last in _crossings(raw, owner):
        if merged and first <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], last)
        else:
            merged.append([first, last])
    spans = []
    for first, last in merged:
        data = b"".join(pieces[first : last + 1])
        try:
            text, complete = data.decode("utf-8"), True
        except UnicodeDecodeError:
            text, complete = data.decode("utf-8", errors="replace"), False
        spans.append(CharSpan(start=first, end=last, text=text, complete=complete))
    return spans


def trace_char_spans(model, ids: Sequence[int]) -> list[CharSpan]:
    """``char_spans`` of a model's token ids (none without a tokenizer)."""
    tok = model.tokenizer
    if tok is None:
        return []
    return char_spans([tok.token_bytes(int(i)) for i in ids])
