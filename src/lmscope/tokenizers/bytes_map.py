"""GPT-2's reversible map between the 256 byte values and 256 printable Unicode characters.

GPT-2's files (encoder.json, vocab.bpe) store tokens as text. Raw bytes such as a space or a
newline would break the whitespace-separated merges file, so each byte is first swapped for a
visible character: printable Latin-1 bytes stand for themselves and the rest are moved up to
U+0100 and beyond (a space becomes "Ġ", a newline "Ċ").
"""

from __future__ import annotations

from functools import cache

from lmscope.errors import TokenizerError


@cache
def byte_to_unicode() -> dict[int, str]:
    """Map each byte value 0..255 to the character GPT-2 uses for it in its files."""
    # Bytes that already print as a single visible character keep their own code point.
    visible = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    mapping = {b: chr(b) for b in visible}
    # The others (controls, space, soft hyphen...) get the next free code points above 255.
    spare = 0
    for b in range(256):
        if b not in mapping:
            mapping[b] = chr(256 + spare)
            spare += 1
    return mapping


@cache
def unicode_to_byte() -> dict[str, int]:
    """The inverse of byte_to_unicode: file character -> byte value."""
    return {char: b for b, char in byte_to_unicode().items()}


def bytes_to_text(raw: bytes) -> str:
    """Spell token bytes the way GPT-2's files do (b" the" -> "Ġthe")."""
    table = byte_to_unicode()
    return "".join(table[b] for b in raw)


@cache
def _to_latin1() -> dict[int, str]:
    """str.translate's table from GPT-2's file characters to the Latin-1 characters of their
    bytes; every other character below U+0100 goes to one that Latin-1 cannot encode, so no
    character outside the map passes as itself."""
    table = {code: "\uffff" for code in range(256)}
    table.update({ord(char): chr(b) for char, b in unicode_to_byte().items()})
    return table


def text_to_bytes(text: str) -> bytes:
    """Turn a token as written in GPT-2's files back into its bytes ("Ġthe" -> b" the")."""
    try:  # in C: a vocabulary's 100,000 tokens and merges are read at every load
        return text.translate(_to_latin1()).encode("latin-1")
    except UnicodeEncodeError as err:
        raise TokenizerError(
            "error.tokenizer.not-byte-char", token=repr(text), char=repr(text[err.start])
        ) from None
