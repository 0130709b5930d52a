"""Finding out which tokenizer a directory holds, and saving one to a directory."""

from __future__ import annotations

from os import PathLike
from pathlib import Path

from lmscope.errors import TokenizerError
from lmscope.tokenizers.base import Tokenizer
from lmscope.tokenizers.bpe_files import find_bpe_files
from lmscope.tokenizers.chars import CHARS_FILE, CharTokenizer
from lmscope.tokenizers.gpt2 import load_bpe
from lmscope.tokenizers.hf_files import TOKENIZER_CONFIG, read_config
from lmscope.tokenizers.hf_json import TOKENIZER_JSON, tokenizer_from_hf_json
from lmscope.tokenizers.spm_model import TOKENIZER_MODEL, read_sentencepiece_model


def load_tokenizer(directory: str | PathLike[str], *, name: str | None = None) -> Tokenizer:
    """Load the tokenizer saved in `directory`.

    Looks for, in order: tokenizer.json (Hugging Face: byte-level BPE such as GPT-2, Llama-3,
    Qwen2, SmolLM, or SentencePiece-style BPE such as Llama 2), tokenizer.model (SentencePiece's
    own BPE file), encoder.json + vocab.bpe (GPT-2), vocab.json + merges.txt (Hugging Face),
    chars.json (character vocabulary). BPE vocabularies get the tiktoken backend when it is
    installed and gives the same tokens.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise TokenizerError("error.tokenizer.no-folder", folder=str(directory))
    if (directory / TOKENIZER_JSON).is_file():
        return tokenizer_from_hf_json(directory / TOKENIZER_JSON, name=name)
    if (directory / TOKENIZER_MODEL).is_file():  # SentencePiece's own file, no tokenizer.json
        return sentencepiece_in(directory, name=name)
    if find_bpe_files(directory) is not None:
        return load_bpe(directory, name=name)
    if (directory / CHARS_FILE).is_file():
        return CharTokenizer.load(directory / CHARS_FILE)
    raise TokenizerError(
        "error.tokenizer.no-files",
        folder=str(directory),
        json=TOKENIZER_JSON,
        model=TOKENIZER_MODEL,
        chars=CHARS_FILE,
    )


def sentencepiece_in(directory: Path, *, name: str | None = None) -> Tokenizer:
    """A folder's tokenizer.model, with what its tokenizer_config.json says: whether text
    starts with the BOS (add_bos_token; Llama's tokenizer adds it unless told not to)."""
    add_bos = read_config(directory / TOKENIZER_CONFIG).get("add_bos_token", True)
    return read_sentencepiece_model(
        directory / TOKENIZER_MODEL, add_bos=add_bos is not False, name=name
    )


def save_tokenizer(tokenizer: Tokenizer, directory: str | PathLike[str]) -> Path:
    """Save `tokenizer` so that load_tokenizer(directory) gives it back; returns the path."""
    directory = Path(directory)
    tokenizer.save(directory)
    return directory
