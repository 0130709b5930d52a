"""SentencePiece's own ``tokenizer.model`` files (the protobuf a SentencePiece trainer writes),
read into ``SentencePieceBPE`` for repositories that ship no tokenizer.json (Vicuna and other
Llama 2 fine-tunes uploaded with the slow tokenizer only).

Only what a BPE model needs is read: each piece with its score and type, the trainer's model
type, byte_fallback and special ids, and the normalizer's name and dummy prefix. The protobuf
wire format is read directly (varints, fixed 32/64-bit fields and length-delimited fields), so
no protobuf package is needed. Merges come from the scores, as for a GGUF "llama" vocabulary
(llama.cpp converts this very file into one). Unigram models, and normalizers that rewrite
the text (nmt_nfkc...), are refused in one line.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

from lmscope.errors import TokenizerError
from lmscope.tokenizers.spm_bpe import SentencePieceBPE, merges_from_scores

TOKENIZER_MODEL = "tokenizer.model"

# SentencePiece's piece types (sentencepiece_model.proto)
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
MODEL_TYPES = {1: "Unigram", 2: "BPE", 3: "word", 4: "char"}

_VARINT, _FIXED64, _LENGTH, _FIXED32 = 0, 1, 2, 5


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data):
            raise TokenizerError("error.tokenizer.spm-ends-in-number")
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if not byte & 0x80:
            return value, at
        shift += 7
        if shift > 63:
            raise TokenizerError("error.tokenizer.spm-bad-number")


def _fields(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of one protobuf message: an int for varints, bytes for
    fixed-size and length-delimited fields."""
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == _VARINT:
            value, at = _varint(data, at)
        elif wire == _FIXED32:
            value, at = data[at : at + 4], at + 4
        elif wire == _FIXED64:
            value, at = data[at : at + 8], at + 8
        elif wire == _LENGTH:
            size, at = _varint(data, at)
            value, at = data[at : at + size], at + size
        else:
            raise TokenizerError("error.tokenizer.spm-wire-type", wire=str(wire))
        if at > len(data):
            raise TokenizerError("error.tokenizer.spm-ends-in-field")
        yield number, wire, value


def _piece(data: bytes) -> tuple[str, float, int]:
    text, score, kind = None, 0.0, NORMAL
    for number, _, value in _fields(data):
        if number == 1:
            text = bytes(value).decode("utf-8")
        elif number == 2:
            # a fixed32 field: bytes (a malformed file raises struct.error, reported by the caller)
            (score,) = struct.unpack("<f", value)  # type: ignore[arg-type]
        elif number == 3:
            kind = int(value)
    if not text:
        raise TokenizerError("error.tokenizer.spm-piece-no-text")
    return text, score, kind


def _signed(value: int) -> int:
    """An int32 field's value (negative numbers come as 64-bit two's complement)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def read_sentencepiece_model(
    path: Path, *, add_bos: bool = True, name: str | None = None
) -> SentencePieceBPE:
    """The BPE a SentencePiece ``tokenizer.model`` describes; ``add_bos``: whether text starts
    with its BOS (a tokenizer_config.json's add_bos_token; Llama's tokenizer adds it)."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise TokenizerError(
            "error.tokenizer.spm-cannot-read", file=str(path), why=str(err)
        ) from None
    try:
        return _build(data, add_bos, name)
    except (UnicodeDecodeError, struct.error):
        raise TokenizerError("error.tokenizer.spm-not-model", file=str(path)) from None
    except TokenizerError as err:
        raise TokenizerError("error.tokenizer.in-file", file=str(path), why=err) from None


def _build(data: bytes, add_bos: bool, name: str | None) -> SentencePieceBPE:
    pieces: list[tuple[str, float, int]] = []
    trainer: dict[int, int] = {}
    normalizer: dict[int, int | bytes] = {}
    for number, wire, value in _fields(data):
        # the ignores below: a length-delimited (_LENGTH) field's value is bytes
        if number == 1 and wire == _LENGTH:
            pieces.append(_piece(value))  # type: ignore[arg-type]
        elif number == 2 and wire == _LENGTH:
            trainer = {n: int(v) for n, w, v in _fields(value) if w == _VARINT}  # type: ignore[arg-type]
        elif number == 3 and wire == _LENGTH:
            normalizer = {n: v for n, _, v in _fields(value)}  # type: ignore[arg-type]
    if not pieces:
        raise TokenizerError("error.tokenizer.spm-no-pieces")
    model_type = trainer.get(3, 1)  # Unigram unless the trainer says otherwise
    if model_type != 2:
        raise TokenizerError(
            "error.tokenizer.spm-model-type", type=str(MODEL_TYPES.get(model_type, model_type))
        )
    rule = bytes(normalizer.get(1, b"")).decode("utf-8")
    if rule not in ("", "identity"):
        raise TokenizerError("error.tokenizer.spm-normalizes", rule=repr(rule))
    if normalizer.get(4, 1):  # remove_extra_whitespaces (on unless the file says otherwise)
        raise TokenizerError("error.tokenizer.spm-extra-whitespace")
    tokens = [text for text, _, _ in pieces]
    specials = {
        text: i
        for i, (text, _, kind) in enumerate(pieces)
        if kind in (UNKNOWN, CONTROL, USER_DEFINED)
    }
    prefix = bool(normalizer.get(3, 1))  # add_dummy_prefix
    ids = {key: _signed(trainer.get(field, default)) for key, field, default in _SPECIAL_IDS}
    return SentencePieceBPE(
        {text: i for i, text in enumerate(tokens)},
        merges_from_scores(tokens, [score for _, score, _ in pieces]),
        special_tokens=specials,
        name=name,
        prefix="always" if prefix else "never",
        prefix_after_space=prefix,
        byte_fallback=bool(trainer.get(35, 0)),
        decode_strip=1 if prefix else 0,
        unk_id=ids["unk"] if 0 <= ids["unk"] < len(tokens) else None,
        bos_id=ids["bos"] if 0 <= ids["bos"] < len(tokens) else None,
        eos_id=ids["eos"] if 0 <= ids["eos"] < len(tokens) else None,
        add_bos=add_bos,
    )


# (name, TrainerSpec field, SentencePiece's default): unk_id, bos_id, eos_id
_SPECIAL_IDS = (("unk", 40, 0), ("bos", 41, 1), ("eos", 42, 2))
