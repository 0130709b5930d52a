"""Byte-level BPE vocabularies from a GGUF file's tokenizer fields (`tokenizer.ggml.*`).

The fields come as one dict, keys without the "tokenizer.ggml." prefix (with it is accepted
too): {"model": "gpt2", "pre": "smollm", "tokens": [...], "merges": ["Ġ t", ...],
"token_type": [...], "bos_token_id": 1, "eos_token_id": 2, ...}. As llama.cpp does, tokens of
type CONTROL (3) or USER_DEFINED (4) are matched whole in the text, `pre` picks the
pre-tokenizer (and whether a pre-token found whole in the vocabulary skips merging), and bytes
the vocabulary lacks are dropped.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence

from lmscope.errors import TokenizerError
from lmscope.tokenizers.bpe import ByteLevelBPE
from lmscope.tokenizers.bpe_files import parse_merge
from lmscope.tokenizers.bytes_map import text_to_bytes
from lmscope.tokenizers.gpt2 import BPETokenizer
from lmscope.tokenizers.pretokenizers import gguf_pre

PREFIX = "tokenizer.ggml."

# llama.cpp's token types that are matched whole before pre-tokenization.
CONTROL, USER_DEFINED = 3, 4


def tokenizer_from_gguf_fields(
    fields: Mapping[str, object], *, name: str | None = None, backend: str = "auto"
) -> BPETokenizer:
    """The tokenizer a GGUF file's `tokenizer.ggml.*` fields describe (model "gpt2")."""
    return BPETokenizer(reference_from_gguf_fields(fields, name=name), backend=backend)


def reference_from_gguf_fields(
    fields: Mapping[str, object], *, name: str | None = None
) -> ByteLevelBPE:
    """The pure-Python reference BPE of those fields."""
    fields = {key.removeprefix(PREFIX): value for key, value in fields.items()}
    model = fields.get("model")
    if model != "gpt2":
        raise TokenizerError(
            f"GGUF tokenizer model {model!r} is not a byte-level BPE; lmscope reads 'gpt2' "
            "vocabularies ('llama' is SentencePiece)"
        )
    if not fields.get("pre"):
        raise TokenizerError(
            "the GGUF tokenizer names no pre-tokenizer (tokenizer.ggml.pre), so how it cuts "
            "text is unknown"
        )
    pre = gguf_pre(str(fields["pre"]))
    tokens = _strings(fields.get("tokens"), "tokens")
    kinds = _ints(fields.get("token_type"), "token_type") if "token_type" in fields else []
    if kinds and len(kinds) != len(tokens):
        raise TokenizerError(
            f"the GGUF tokenizer has {len(tokens)} tokens but {len(kinds)} token types"
        )
    if "merges" not in fields:
        raise TokenizerError("the GGUF tokenizer has no merges (tokenizer.ggml.merges)")
    merges = [
        parse_merge(item, f"GGUF merge {rank}")
        for rank, item in enumerate(_listed(fields["merges"], "merges"))
    ]
    vocab, specials, extra = _split_tokens(tokens, kinds)
    add_bos = fields.get("add_bos_token", pre.add_bos)
    return ByteLevelBPE(
        vocab,
        merges,
        special_tokens=specials,
        name=name,
        pattern=pre.pretokenizer,
        ignore_merges=pre.ignore_merges,
        bos_id=_token_id(fields, "bos_token_id") if pre.has_bos else None,
        eos_id=_token_id(fields, "eos_token_id"),
        add_bos=bool(add_bos),
        allow_missing_bytes=True,
        extra_ids=extra,
    )


def _split_tokens(
    tokens: Sequence[str], kinds: Sequence[int]
) -> tuple[dict[bytes, int], dict[str, int], dict[int, bytes]]:
    """vocab (bytes -> id), specials (text -> id), and ids whose bytes a later id took over
    (they still decode). Later ids win, as in Hugging Face's vocabulary dict."""
    vocab: dict[bytes, int] = {}
    specials: dict[str, int] = {}
    extra: dict[int, bytes] = {}
    for token_id, token in enumerate(tokens):
        kind = kinds[token_id] if kinds else 1
        if kind in (CONTROL, USER_DEFINED):
            earlier = specials.get(token)
            specials[token] = token_id
            raw = token.encode("utf-8")
        else:
            raw = _spelled(token)
            earlier = vocab.get(raw)
            vocab[raw] = token_id
        if earlier is not None:
            extra[earlier] = raw
    return vocab, specials, extra


def _spelled(token: str) -> bytes:
    """A token's bytes from GPT-2's byte-character spelling; a token spelled otherwise (a
    mislabelled control token) stands for its UTF-8 bytes."""
    try:
        return text_to_bytes(token)
    except TokenizerError:
        return token.encode("utf-8")


def _listed(value: object, what: str) -> list:
    if hasattr(value, "tolist"):
        value = value.tolist()  # a numpy array from a GGUF reader
    if not isinstance(value, list | tuple):
        raise TokenizerError(f"GGUF tokenizer field {what} should be a list, got {value!r:.60}")
    return list(value)


def _strings(value: object, what: str) -> list[str]:
    items = _listed(value, what)
    if not items or not all(isinstance(item, str) for item in items):
        raise TokenizerError(f"GGUF tokenizer field {what} should be a non-empty list of texts")
    return items


def _ints(value: object, what: str) -> list[int]:
    try:
        return [operator.index(item) for item in _listed(value, what)]
    except TypeError:
        raise TokenizerError(f"GGUF tokenizer field {what} should hold integers") from None


def _token_id(fields: Mapping[str, object], key: str) -> int | None:
    value = fields.get(key)
    if value is None:
        return None
    try:
        return operator.index(value)
    except TypeError:
        raise TokenizerError(f"GGUF tokenizer field {key} should be an id, got {value!r}") from None
