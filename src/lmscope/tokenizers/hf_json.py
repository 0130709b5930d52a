"""Hugging Face `tokenizer.json` files of BPE models: byte-level ones (GPT-2, Llama-3, Qwen2,
SmolLM...) read into lmscope's own byte-level BPE, and SentencePiece-style ones (Llama 2, Mistral
v0.1, TinyLlama: characters, "▁" for spaces, byte fallback) handed to ``spm_json``.

What is read: the vocabulary and merges ("a b" strings or [a, b] lists), `ignore_merges`, the
added tokens (matched whole before pre-tokenization), the pre-tokenizer (Split with a regex,
Digits, ByteLevel, and Sequences of them) and an NFC normalizer. The model's bos/eos tokens come
from a tokenizer_config.json beside the file, or the post-processor's template. Anything that
would tokenize differently from what lmscope runs is refused with one TokenizerError line:
other models (Unigram, WordPiece), normalizers that rewrite the text,
added tokens that strip spaces, and pre-tokenizers it does not know.
"""

from __future__ import annotations

from collections.abc import Mapping
from os import PathLike
from pathlib import Path

import regex

from lmscope.errors import TokenizerError
from lmscope.i18n import Message
from lmscope.tokenizers.base import Tokenizer
from lmscope.tokenizers.bpe import ByteLevelBPE
from lmscope.tokenizers.bpe_files import parse_merge, parse_vocab
from lmscope.tokenizers.bytes_map import bytes_to_text
from lmscope.tokenizers.gpt2 import BPETokenizer
from lmscope.tokenizers.hf_files import TOKENIZER_CONFIG, TOKENIZER_JSON, read_config
from lmscope.tokenizers.json_files import file_in, read_json, steps_of
from lmscope.tokenizers.pretokenizers import (
    DIGIT_PATTERN,
    DIGITS_PATTERN,
    GPT2_PATTERN,
    NORMALIZERS,
    PreTokenizer,
    pretokenizer_from_steps,
)
from lmscope.tokenizers.spm_bpe import SentencePieceBPE
from lmscope.tokenizers.spm_json import is_sentencepiece_style, read_spm_json


def tokenizer_from_hf_json(
    path: str | PathLike[str], *, name: str | None = None, backend: str = "auto"
) -> Tokenizer:
    """Load a Hugging Face tokenizer.json (or a folder holding one): a byte-level BPE, or a
    SentencePiece-style BPE over characters (Llama 2, Mistral v0.1, TinyLlama)."""
    bpe = read_hf_json(path, name=name)
    return BPETokenizer(bpe, backend=backend) if isinstance(bpe, ByteLevelBPE) else bpe


def read_hf_json(
    path: str | PathLike[str], *, name: str | None = None
) -> ByteLevelBPE | SentencePieceBPE:
    """The pure-Python BPE a tokenizer.json describes."""
    path = file_in(path, TOKENIZER_JSON)
    data = read_json(path, Message("error.tokenizer.part.tokenizer-file"))
    try:
        return _build(data, path, name)
    except TokenizerError as err:
        if err.render("en").startswith(str(path)):  # it names the file already
            raise err from None
        raise TokenizerError("error.tokenizer.in-file", file=str(path), why=err) from None


def _build(data: object, path: Path, name: str | None) -> ByteLevelBPE | SentencePieceBPE:
    if not isinstance(data, dict) or not isinstance(data.get("model"), dict):
        raise TokenizerError("error.tokenizer.hf-no-model")
    model = data["model"]
    kind = model.get("type", "BPE" if "merges" in model else None)
    if kind != "BPE":
        raise TokenizerError("error.tokenizer.hf-not-bpe", kind=repr(kind))
    added = _added_tokens(data.get("added_tokens") or [])
    config_path = path.parent / TOKENIZER_CONFIG
    if is_sentencepiece_style(data):
        return read_spm_json(data, added, lambda ids: _bos_eos(data, config_path, ids), name)
    _check_model(model)
    # A model vocabulary may list the added tokens too; those stay text (their spelling need
    # not be byte-level).
    where = Message("error.tokenizer.part.model-vocab")
    vocab, _ = parse_vocab(model.get("vocab"), where, specials=set(added))
    merges = model.get("merges")
    if not isinstance(merges, list):
        raise TokenizerError("error.tokenizer.no-merges")
    pairs = [
        parse_merge(item, Message("error.tokenizer.part.merge", rank=str(rank)))
        for rank, item in enumerate(merges)
    ]
    pretokenizer = _pretokenizer(data.get("pre_tokenizer"), _normalizer(data.get("normalizer")))
    ids = _ids_by_text(vocab, added)
    bos, eos, add_bos = _bos_eos(data, config_path, ids)
    return ByteLevelBPE(
        vocab,
        pairs,
        special_tokens=added,
        name=name,
        pattern=pretokenizer,
        ignore_merges=bool(model.get("ignore_merges", False)),
        bos_id=bos,
        eos_id=eos,
        unk_id=ids.get(model["unk_token"]) if isinstance(model.get("unk_token"), str) else None,
        add_bos=add_bos,
        allow_missing_bytes=True,  # as Hugging Face does: such bytes are dropped (or unk)
    )


def _check_model(model: dict) -> None:
    if model.get("byte_fallback"):
        raise TokenizerError("error.tokenizer.hf-byte-fallback")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            raise TokenizerError("error.tokenizer.model-option", key=key, value=repr(model[key]))
    if model.get("dropout"):
        raise TokenizerError("error.tokenizer.dropout")


def _added_tokens(entries: object) -> dict[str, int]:
    if not isinstance(entries, list):
        raise TokenizerError("error.tokenizer.added-not-list")
    added: dict[str, int] = {}
    for entry in entries:
        content = entry.get("content") if isinstance(entry, dict) else None
        token_id = entry.get("id") if isinstance(entry, dict) else None
        if not isinstance(content, str) or not content or not isinstance(token_id, int):
            raise TokenizerError("error.tokenizer.added-entry", entry=repr(entry))
        stripping = [key for key in ("lstrip", "rstrip", "single_word") if entry.get(key)]
        if stripping:
            raise TokenizerError(
                "error.tokenizer.added-stripping", token=repr(content), keys=", ".join(stripping)
            )
        added[content] = token_id
    return added


def _normalizer(spec: object) -> str | None:
    kinds = [step.get("type") for step in steps_of(spec, "normalizer", "normalizers")]
    if not kinds:
        return None
    if len(kinds) == 1 and kinds[0] in NORMALIZERS:
        return kinds[0]
    raise TokenizerError(
        "error.tokenizer.hf-normalizer",
        kinds=" + ".join(map(str, kinds)),
        known=", ".join(NORMALIZERS),
    )


def _pretokenizer(spec: object, normalizer: str | None) -> PreTokenizer:
    steps: list[str] = []
    byte_level = False
    for step in steps_of(spec, "pre_tokenizer", "pretokenizers"):
        kind = step.get("type")
        if byte_level:
            raise TokenizerError("error.tokenizer.pre-after-byte-level", kind=repr(kind))
        if kind == "ByteLevel":
            if step.get("add_prefix_space"):
                raise TokenizerError("error.tokenizer.add-prefix-space")
            if step.get("use_regex", True):
                steps.append(GPT2_PATTERN)
            byte_level = True
        elif kind == "Split":
            steps.append(_split_pattern(step))
        elif kind == "Digits":
            steps.append(DIGIT_PATTERN if step.get("individual_digits") else DIGITS_PATTERN)
        else:
            raise TokenizerError("error.tokenizer.pre-unsupported", kind=repr(kind))
    if not byte_level:
        raise TokenizerError("error.tokenizer.no-byte-level")
    return pretokenizer_from_steps(tuple(steps), normalizer)


def _split_pattern(step: dict) -> str:
    behavior = str(step.get("behavior", "")).lower()
    if behavior != "isolated" or step.get("invert"):
        if step.get("invert"):
            raise TokenizerError(
                "error.tokenizer.split-behavior-invert", behavior=repr(step.get("behavior"))
            )
        raise TokenizerError("error.tokenizer.split-behavior", behavior=repr(step.get("behavior")))
    pattern = step.get("pattern")
    if isinstance(pattern, dict) and isinstance(pattern.get("Regex"), str):
        return pattern["Regex"]
    if isinstance(pattern, dict) and isinstance(pattern.get("String"), str):
        return regex.escape(pattern["String"])
    raise TokenizerError("error.tokenizer.split-pattern", pattern=repr(pattern))


def _ids_by_text(vocab: Mapping[bytes, int], added: Mapping[str, int]) -> dict[str, int]:
    """Token text -> id as Hugging Face spells tokens (byte-level text, or added tokens)."""
    ids = {bytes_to_text(raw): token_id for raw, token_id in vocab.items()}
    ids.update(added)
    return ids


def _bos_eos(
    data: dict, config_path: Path, ids: Mapping[str, int]
) -> tuple[int | None, int | None, bool]:
    """bos id, eos id and whether a bos goes first: from tokenizer_config.json if it is there,
    else from the post-processor's template (Llama-3 puts <|begin_of_text|> there)."""
    template_bos = _template_bos(data.get("post_processor"))
    config = read_config(config_path)
    names = {key: _token_text(config.get(key)) for key in ("bos_token", "eos_token")}
    bos_name = names["bos_token"] or template_bos
    add_bos = config.get("add_bos_token")
    if not isinstance(add_bos, bool):
        add_bos = template_bos is not None
    return ids.get(bos_name or ""), ids.get(names["eos_token"] or ""), add_bos


def _template_bos(processor: object) -> str | None:
    for step in steps_of(processor, "post_processor", "processors"):
        if step.get("type") != "TemplateProcessing":
            continue
        single = step.get("single") or []
        head = single[0] if single and isinstance(single[0], dict) else {}
        special = head.get("SpecialToken")
        if isinstance(special, dict) and isinstance(special.get("id"), str):
            return special["id"]
    return None


def _token_text(value: object) -> str | None:
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else None
