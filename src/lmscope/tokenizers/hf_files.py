"""Hugging Face ``tokenizer.json`` files: their names, and writing one for a byte-level BPE
(read back by Hugging Face's ``tokenizers`` and by ``lmscope.tokenizers.hf_json``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from lmscope.tokenizers.base import SavedBPE, SavedByteBPE
from lmscope.tokenizers.bytes_map import bytes_to_text

TOKENIZER_JSON = "tokenizer.json"
TOKENIZER_CONFIG = "tokenizer_config.json"
CHAT_TEMPLATE_FILE = "chat_template.jinja"  # where newer repositories keep the template


def read_config(path: Path) -> dict:
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}  # optional: without it there is just no bos/eos
    return config if isinstance(config, dict) else {}


def chat_template_in(directory: Path) -> str | None:
    """A model folder's chat template: chat_template.jinja, else tokenizer_config.json's
    ``chat_template`` (one text, or a list of named ones, of which "default"); None if none."""
    try:
        return (directory / CHAT_TEMPLATE_FILE).read_text(encoding="utf-8") or None
    except (OSError, UnicodeDecodeError):
        pass
    template = read_config(directory / TOKENIZER_CONFIG).get("chat_template")
    if isinstance(template, list):
        named = {t.get("name"): t.get("template") for t in template if isinstance(t, dict)}
        template = named.get("default")
    return template if isinstance(template, str) and template else None


def write_hf_json(bpe: SavedByteBPE, path: Path) -> None:
    """Write `bpe` as a tokenizer.json that Hugging Face's `tokenizers` and read_hf_json load
    back (bos/eos go into tokenizer_config.json beside it, keeping what else it holds)."""
    text_of = {token_id: bytes_to_text(raw) for raw, token_id in bpe.vocab.items()}
    text_of.update({token_id: text for text, token_id in bpe.special_tokens.items()})
    ids_of = {text: token_id for token_id, text in sorted(text_of.items())}
    splits = [
        {"type": "Split", "pattern": {"Regex": step}, "behavior": "Isolated", "invert": False}
        for step in bpe.pretokenizer.steps
    ]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True}
    data = tokenizer_json(
        bpe,
        text_of,
        normalizer={"type": bpe.pretokenizer.normalizer} if bpe.pretokenizer.normalizer else None,
        pre_tokenizer={
            "type": "Sequence",
            "pretokenizers": [*splits, {**byte_level, "use_regex": False}],
        },
        decoder={**byte_level, "use_regex": True},
        model={
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": bpe.ignore_merges,
            # Hugging Face keeps an added token's id only when the model vocabulary lists it.
            "vocab": ids_of,
            "merges": [[bytes_to_text(left), bytes_to_text(right)] for left, right in bpe.merges],
        },
    )
    named = {"bos_token": bpe.bos_id, "eos_token": bpe.eos_id}
    write_tokenizer_files(
        path, data, {key: text_of[i] for key, i in named.items() if i is not None}
    )


def tokenizer_json(
    bpe: SavedBPE[bytes] | SavedBPE[str],
    text_of: Mapping[int, str],
    *,
    normalizer: dict | None,
    pre_tokenizer: dict | None,
    decoder: dict,
    model: dict,
) -> dict:
    """The tokenizer.json of either lmscope BPE: its special tokens as added tokens, a
    post-processor putting the BOS first when it adds one, and a BPE model whose own fields
    (``model``) follow the common ones; ``text_of`` spells every id as the file does."""
    return {
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
        "decoder": decoder,
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None if bpe.unk_id is None else text_of[bpe.unk_id],
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            **model,
        },
    }


def write_tokenizer_files(path: Path, data: dict, config: dict) -> None:
    """Write ``data`` as the tokenizer.json at ``path``, and ``config`` into the
    tokenizer_config.json beside it, keeping what else that file holds (none written when
    ``config`` is empty)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    if config:
        config_path = path.parent / TOKENIZER_CONFIG
        kept = read_config(config_path)
        kept.update(config)
        config_path.write_text(json.dumps(kept, ensure_ascii=False, indent=1), "utf-8")


def bos_template(bos: str, bos_id: int) -> dict:
    """Hugging Face's post-processor that puts `bos` before every text."""
    token = {"SpecialToken": {"id": bos, "type_id": 0}}
    return {
        "type": "TemplateProcessing",
        "single": [token, {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [
            token,
            {"Sequence": {"id": "A", "type_id": 0}},
            token,
            {"Sequence": {"id": "B", "type_id": 0}},
        ],
        "special_tokens": {bos: {"id": bos, "ids": [bos_id], "tokens": [bos]}},
    }
