"""Writing a SentencePiece-style BPE as a tokenizer.json (Metaspace, or Llama 2's Prepend +
Replace normalizer where the tokenizer prefixes even text that starts with a space), which
Hugging Face's `tokenizers` and ``spm_json`` read back to the same tokens."""

from __future__ import annotations

from pathlib import Path

from lmscope.tokenizers.base import SavedSentencePieceBPE
from lmscope.tokenizers.hf_files import TOKENIZER_JSON, tokenizer_json, write_tokenizer_files

SPACE = "\u2581"  # "▁": how SentencePiece spells a space inside its tokens


def write_spm_json(bpe: SavedSentencePieceBPE, directory: Path) -> None:
    """Write ``bpe`` as tokenizer.json (+ its bos/eos in tokenizer_config.json, keeping what
    else that file holds)."""
    text_of = {token_id: text for text, token_id in bpe.vocab.items()}
    text_of.update({token_id: text for text, token_id in bpe.special_tokens.items()})
    if bpe.prefix_after_space:
        normalizer = {
            "type": "Sequence",
            "normalizers": [
                {"type": "Prepend", "prepend": SPACE},
                {"type": "Replace", "pattern": {"String": " "}, "content": SPACE},
            ],
        }
        pre_tokenizer = None
    else:
        normalizer = None
        pre_tokenizer = {
            "type": "Metaspace",
            "replacement": SPACE,
            "prepend_scheme": bpe.prefix,
            "split": bpe.split_words,
        }
    decoders: list[dict] = [
        {"type": "Replace", "pattern": {"String": SPACE}, "content": " "},
        {"type": "ByteFallback"},
        {"type": "Fuse"},
    ]
    if bpe.decode_strip:
        decoders.append({"type": "Strip", "content": " ", "start": bpe.decode_strip, "stop": 0})
    data = tokenizer_json(
        bpe,
        text_of,
        normalizer=normalizer,
        pre_tokenizer=pre_tokenizer,
        decoder={"type": "Sequence", "decoders": decoders},
        model={
            "fuse_unk": bpe.fuse_unk,
            "byte_fallback": bpe.byte_fallback,
            "ignore_merges": False,
            "vocab": dict(sorted(bpe.vocab.items(), key=lambda item: item[1])),
            "merges": [[left, right] for left, right in bpe.merges],
        },
    )
    named = {"bos_token": bpe.bos_id, "eos_token": bpe.eos_id, "unk_token": bpe.unk_id}
    config = {key: text_of[i] for key, i in named.items() if i is not None}
    write_tokenizer_files(
        directory / TOKENIZER_JSON, data, {**config, "add_bos_token": bpe.add_bos}
    )
