"""Tokenizers: GPT-2's byte-level BPE (tiktoken-fast, with a pure-Python reference that
explains its merges), BPE training, and a character vocabulary, behind one interface."""

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
from lmscope.tokenizers.gpt2 import BPETokenizer, gpt2_files_dir, gpt2_tokenizer, load_bpe
from lmscope.tokenizers.loading import load_tokenizer, save_tokenizer
from lmscope.tokenizers.training import train_bpe

__all__ = [
    "EOT_TEXT",
    "GPT2_PATTERN",
    "BPETokenizer",
    "ByteLevelBPE",
    "CharTokenizer",
    "MergeStep",
    "TokenExplanation",
    "TokenPiece",
    "Tokenizer",
    "gpt2_files_dir",
    "gpt2_tokenizer",
    "load_bpe",
    "load_tokenizer",
    "readable_bytes",
    "save_tokenizer",
    "train_bpe",
]
