"""Reading tokenizer.json files of SentencePiece-style BPE models (Llama 2, Mistral v0.1,
TinyLlama): how their normalizer / pre-tokenizer / decoder say where spaces go, read into
``SentencePieceBPE`` (``spm_files`` writes them back).

Two spellings are read. Older conversions put the space handling in the normalizer
(Prepend "▁", then Replace " " with "▁") and have no pre-tokenizer; newer ones use a Metaspace
pre-tokenizer (replacement "▁", prepend_scheme always / first / never, optionally split into
words). Anything else that rewrites the text is refused with one TokenizerError line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from lmscope.errors import TokenizerError
from lmscope.i18n import Message
from lmscope.tokenizers.bpe_files import split_merge
from lmscope.tokenizers.json_files import steps_of
from lmscope.tokenizers.spm_bpe import SentencePieceBPE
from lmscope.tokenizers.spm_files import SPACE

BosEos = Callable[[Mapping[str, int]], tuple[int | None, int | None, bool]]


def is_sentencepiece_style(data: dict) -> bool:
    """Whether a tokenizer.json describes a BPE over characters with "▁" for spaces."""
    pre_tokenizer = steps_of(data.get("pre_tokenizer"), "pre_tokenizer", "pretokenizers")
    kinds = {step.get("type") for step in pre_tokenizer}
    spaces = [
        step
        for step in steps_of(data.get("normalizer"), "normalizer", "normalizers")
        if step.get("type") == "Prepend" or step.get("pattern") == {"String": " "}
    ]
    if "ByteLevel" in kinds:
        return False
    return "Metaspace" in kinds or bool(spaces) or bool(data["model"].get("byte_fallback"))


def read_spm_json(
    data: dict, added: Mapping[str, int], bos_eos: BosEos, name: str | None
) -> SentencePieceBPE:
    """The SentencePieceBPE a parsed tokenizer.json describes; ``added`` are its added
    tokens (text -> id), ``bos_eos`` finds bos id, eos id and whether bos goes first."""
    model = data["model"]
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            raise TokenizerError("error.tokenizer.model-option", key=key, value=repr(model[key]))
    if model.get("dropout"):
        raise TokenizerError("error.tokenizer.dropout")
    if model.get("ignore_merges"):
        raise TokenizerError("error.tokenizer.spm-ignore-merges")
    vocab = _vocab(model.get("vocab"))
    merges = [
        split_merge(item, Message("error.tokenizer.part.merge", rank=str(rank)))
        for rank, item in enumerate(_merges_list(model))
    ]
    spaces = _spaces(data.get("normalizer"), data.get("pre_tokenizer"))
    ids = {**vocab, **added}
    bos, eos, add_bos = bos_eos(ids)
    unk = model.get("unk_token")
    return SentencePieceBPE(
        vocab,
        merges,
        special_tokens=added,
        name=name,
        byte_fallback=bool(model.get("byte_fallback")),
        fuse_unk=bool(model.get("fuse_unk")),
        decode_strip=_decode_strip(data.get("decoder")),
        unk_id=ids.get(unk) if isinstance(unk, str) else None,
        bos_id=bos,
        eos_id=eos,
        add_bos=add_bos,
        **spaces,
    )


def _vocab(value: object) -> dict[str, int]:
    if not isinstance(value, dict) or not value:
        raise TokenizerError("error.tokenizer.no-vocab")
    if not all(isinstance(k, str) and isinstance(v, int) for k, v in value.items()):
        raise TokenizerError("error.tokenizer.vocab-types")
    return dict(value)


def _merges_list(model: dict) -> list:
    merges = model.get("merges")
    if not isinstance(merges, list):
        raise TokenizerError("error.tokenizer.no-merges")
    return merges


def _spaces(normalizer: object, pre_tokenizer: object) -> dict:
    """prefix, prefix_after_space and split_words from where the file handles spaces."""
    prefix, replaced, options = "never", False, {}
    for step in steps_of(normalizer, "normalizer", "normalizers"):
        kind = step.get("type")
        if kind == "Prepend" and step.get("prepend") == SPACE and not replaced:
            prefix, options = "always", {"prefix_after_space": True}
        elif kind == "Replace" and step.get("pattern") == {"String": " "}:
            if step.get("content") != SPACE:
                raise TokenizerError("error.tokenizer.spm-replace", step=f"{step!r:.60}")
            replaced = True
        else:
            raise TokenizerError("error.tokenizer.spm-normalizer", kind=repr(kind))
    for step in steps_of(pre_tokenizer, "pre_tokenizer", "pretokenizers"):
        if step.get("type") != "Metaspace" or replaced:
            raise TokenizerError("error.tokenizer.spm-pre", kind=repr(step.get("type")))
        if step.get("replacement", SPACE) != SPACE:
            raise TokenizerError(
                "error.tokenizer.metaspace-replacement", got=repr(step.get("replacement"))
            )
        prefix = _prepend_scheme(step)
        options = {"split_words": bool(step.get("split", True))}
        replaced = True
    if not replaced:
        raise TokenizerError("error.tokenizer.spm-no-spaces")
    return {"prefix": prefix, **options}


def _prepend_scheme(metaspace: dict) -> str:
    scheme = metaspace.get("prepend_scheme")
    if scheme is None:  # files older than prepend_scheme say add_prefix_space
        return "always" if metaspace.get("add_prefix_space", True) else "never"
    if scheme not in ("always", "first", "never"):
        raise TokenizerError("error.tokenizer.metaspace-scheme", scheme=repr(scheme))
    return scheme


def _decode_strip(decoder: object) -> int:
    """How many leading spaces the decoder strips (its Strip step's start)."""
    for step in steps_of(decoder, "decoder", "decoders"):
        if step.get("type") == "Strip" and step.get("content") == " ":
            return int(step.get("start", 0))
    return 0
