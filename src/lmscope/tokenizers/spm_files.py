"""Writing a SentencePiece-style BPE as a tokenizer.json (Metaspace, or Llama 2's Prepend +
Replace normalizer where the tokenizer prefixes even text that starts with a space), which
Hugging Face's `tokenizers` and ``spm_json`` read back to the same tokens."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from lmscope.tokenizers.hf_files import TOKENIZER_CONFIG, TOKENIZER_JSON, bos_template, read_config

if TYPE_CHECKING:  # only for the annotation: the tokenizer imports this module to save
    from lmscope.tokenizers.spm_bpe import SentencePieceBPE

SPACE = "\u2581"  # "▁": how SentencePiece spells a space inside its tokens


def write_spm_json(bpe: SentencePieceBPE, directory: Path) -> None:
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
    data = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": token_id,
                "content": text,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
            for text, token_id in sorted(bpe.special_tokens.items(), key=lambda item: item[1])
        ],
        "normalizer": normalizer,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": (
            bos_template(text_of[bpe.bos_id], bpe.bos_id)
            if bpe.add_bos and bpe.bos_id is not None
            else None
        ),
        "decoder": {"type": "Sequence", "decoders": decoders},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None if bpe.unk_id is None else text_of[bpe.unk_id],
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": bpe.fuse_unk,
            "byte_fallback": bpe.byte_fallback,
            "ignore_merges": False,
            "vocab": dict(sorted(bpe.vocab.items(), key=lambda item: item[1])),
            "merges": [[left, right] for left, right in bpe.merges],
        },
    }
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / TOKENIZER_JSON
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    config_path = directory / TOKENIZER_CONFIG
    config = read_config(config_path)
    named = {"bos_token": bpe.bos_id, "eos_token": bpe.eos_id, "unk_token": bpe.unk_id}
    config.update({key: text_of[i] for key, i in named.items() if i is not None})
    config["add_bos_token"] = bpe.add_bos
    config_path.write_text(json.dumps(config, ensure_ascii=False, indent=1), "utf-8")
