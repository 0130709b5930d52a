"""Tokenizers from a GGUF file's tokenizer fields (`tokenizer.ggml.*`): byte-level BPE
vocabularies (model "gpt2") and SentencePiece's BPE (model "llama", see
``sentencepiece_from_gguf_fields``).

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
from lmscope.i18n import Message
from lmscope.tokenizers.base import Tokenizer
from lmscope.tokenizers.bpe import ByteLevelBPE
from lmscope.tokenizers.bpe_files import parse_merge
from lmscope.tokenizers.bytes_map import text_to_bytes
from lmscope.tokenizers.gpt2 import BPETokenizer
from lmscope.tokenizers.pretokenizers import gguf_pre
from lmscope.tokenizers.spm_bpe import SentencePieceBPE, merges_from_scores

PREFIX = "tokenizer.ggml."

# llama.cpp's token types that are matched whole before pre-tokenization (UNKNOWN too in a
# SentencePiece vocabulary, whose "<unk>" transformers also keeps whole).
UNKNOWN, CONTROL, USER_DEFINED = 2, 3, 4


def tokenizer_from_gguf_fields(
    fields: Mapping[str, object], *, name: str | None = None, backend: str = "auto"
) -> Tokenizer:
    """The tokenizer a GGUF file's `tokenizer.ggml.*` fields describe: model "gpt2" (a
    byte-level BPE) or "llama" (SentencePiece's BPE over characters)."""
    plain = {key.removeprefix(PREFIX): value for key, value in fields.items()}
    if plain.get("model") == "llama":
        return sentencepiece_from_gguf_fields(plain, name=name)
    return BPETokenizer(reference_from_gguf_fields(plain, name=name), backend=backend)


def sentencepiece_from_gguf_fields(
    fields: Mapping[str, object], *, name: str | None = None
) -> SentencePieceBPE:
    """A "llama" vocabulary (Llama 2, Mistral, TinyLlama GGUF files): tokens with scores,
    merges rebuilt from the scores (or the file's own, when it lists them), as transformers
    reads such a file. UNKNOWN, CONTROL and USER_DEFINED tokens are matched whole; "<0x0A>"-style
    tokens are the byte fallback. Spaces are placed as llama.cpp and SentencePiece itself place
    them (and Llama 2's own tokenizer.json): a "▁" before every piece of text, unless
    add_space_prefix is off. transformers' GGUF reader differs there: it adds no "▁" before
    text that starts with a space or follows a special token, and ignores add_space_prefix."""
    tokens = _strings(fields.get("tokens"), "tokens")
    kinds = _ints(fields.get("token_type"), "token_type") if "token_type" in fields else []
    if kinds and len(kinds) != len(tokens):
        raise TokenizerError(
            "error.tokenizer.gguf-types-count", tokens=str(len(tokens)), types=str(len(kinds))
        )
    listed = _listed(fields["merges"], "merges") if fields.get("merges") is not None else []
    if listed:
        merges = [_merge_texts(item, rank) for rank, item in enumerate(listed)]
    else:
        scores = _floats(fields.get("scores"), "scores")
        if len(scores) != len(tokens):
            raise TokenizerError(
                "error.tokenizer.gguf-scores-count",
                tokens=str(len(tokens)),
                scores=str(len(scores)),
            )
        merges = merges_from_scores(tokens, scores)
    vocab = {token: token_id for token_id, token in enumerate(tokens)}
    specials = {
        token: token_id
        for token_id, (token, kind) in enumerate(zip(tokens, kinds, strict=False))
        if kind in (UNKNOWN, CONTROL, USER_DEFINED)  # (no token_type field: none)
    }
    # SentencePiece's dummy prefix, as llama.cpp adds it: a "▁" before every piece of text
    # between special tokens, even one that starts with a space (" Hello" is "▁▁Hello").
    prefix = bool(fields.get("add_space_prefix", True))
    return SentencePieceBPE(
        vocab,
        merges,
        special_tokens=specials,
        name=name,
        prefix="always" if prefix else "never",
        prefix_after_space=prefix,
        decode_strip=1 if prefix else 0,
        unk_id=_token_id(fields, "unknown_token_id"),
        bos_id=_token_id(fields, "bos_token_id"),
        eos_id=_token_id(fields, "eos_token_id"),
        # llama.cpp adds BOS to a SentencePiece vocabulary whose file does not say otherwise
        add_bos=bool(fields.get("add_bos_token", True)),
    )


def _merge_texts(item: object, rank: int) -> tuple[str, str]:
    halves = item.split(" ") if isinstance(item, str) else None
    if halves is None or len(halves) != 2 or not all(halves):
        raise TokenizerError("error.tokenizer.gguf-bad-merge", rank=str(rank), got=repr(item))
    return halves[0], halves[1]


def reference_from_gguf_fields(
    fields: Mapping[str, object], *, name: str | None = None
) -> ByteLevelBPE:
    """The pure-Python reference BPE of those fields."""
    fields = {key.removeprefix(PREFIX): value for key, value in fields.items()}
    model = fields.get("model")
    if model != "gpt2":
        raise TokenizerError("error.tokenizer.gguf-model", model=repr(model))
    if not fields.get("pre"):
        raise TokenizerError("error.tokenizer.gguf-no-pre")
    pre = gguf_pre(str(fields["pre"]))
    tokens = _strings(fields.get("tokens"), "tokens")
    kinds = _ints(fields.get("token_type"), "token_type") if "token_type" in fields else []
    if kinds and len(kinds) != len(tokens):
        raise TokenizerError(
            "error.tokenizer.gguf-types-count", tokens=str(len(tokens)), types=str(len(kinds))
        )
    if "merges" not in fields:
        raise TokenizerError("error.tokenizer.gguf-no-merges")
    merges = [
        parse_merge(item, Message("error.tokenizer.part.gguf-merge", rank=str(rank)))
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
        raise TokenizerError("error.tokenizer.gguf-not-list", field=what, got=f"{value!r:.60}")
    return list(value)


def _strings(value: object, what: str) -> list[str]:
    items = _listed(value, what)
    if not items or not all(isinstance(item, str) for item in items):
        raise TokenizerError("error.tokenizer.gguf-not-texts", field=what)
    return items


def _ints(value: object, what: str) -> list[int]:
    try:
        return [operator.index(item) for item in _listed(value, what)]
    except TypeError:
        raise TokenizerError("error.tokenizer.gguf-not-ints", field=what) from None


def _floats(value: object, what: str) -> list[float]:
    items = _listed(value, what)
    if not all(isinstance(item, int | float) and not isinstance(item, bool) for item in items):
        raise TokenizerError("error.tokenizer.gguf-not-numbers", field=what)
    return [float(item) for item in items]


def _token_id(fields: Mapping[str, object], key: str) -> int | None:
    value = fields.get(key)
    if value is None:
        return None
    try:
        return operator.index(value)  # type: ignore[arg-type]  # not an index: TypeError
    except TypeError:
        raise TokenizerError("error.tokenizer.gguf-not-id", field=key, got=repr(value)) from None
