"""Tokenizers: byte-level BPE (GPT-2's, and Llama-3 / Qwen2 / SmolLM vocabularies from Hugging
Face tokenizer.json files or GGUF fields; tiktoken-fast, with a pure-Python reference that
explains its merges), SentencePiece-style BPE over characters (Llama 2, Mistral v0.1,
TinyLlama), BPE training, and a character vocabulary, behind one interface."""

from lmscope.tokenizers.base import (
    EOT_TEXT,
    MergeStep,
    TokenExplanation,
    Tokenizer,
    TokenPiece,
    readable_bytes,
)
from lmscope.tokenizers.bpe import GPT2_PATTERN, ByteLevelBPE
from lmscope.tokenizers.chars import CharTokenizer
from lmscope.tokenizers.gguf_fields import tokenizer_from_gguf_fields
from lmscope.tokenizers.gpt2 import BPETokenizer, gpt2_files_dir, gpt2_tokenizer, load_bpe
from lmscope.tokenizers.hf_files import chat_template_in
from lmscope.tokenizers.hf_json import tokenizer_from_hf_json
from lmscope.tokenizers.loading import load_tokenizer, save_tokenizer
from lmscope.tokenizers.pretokenizers import PreTokenizer
from lmscope.tokenizers.spm_bpe import SentencePieceBPE
from lmscope.tokenizers.training import train_bpe

__all__ = [
    "EOT_TEXT",
    "GPT2_PATTERN",
    "BPETokenizer",
    "ByteLevelBPE",
    "CharTokenizer",
    "MergeStep",
    "PreTokenizer",
    "SentencePieceBPE",
    "TokenExplanation",
    "TokenPiece",
    "Tokenizer",
    "chat_template_in",
    "gpt2_files_dir",
    "gpt2_tokenizer",
    "load_bpe",
    "load_tokenizer",
    "readable_bytes",
    "save_tokenizer",
    "tokenizer_from_gguf_fields",
    "tokenizer_from_hf_json",
    "train_bpe",
]
