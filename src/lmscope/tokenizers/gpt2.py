"""GPT-2's tokenizer: the shipped files, Hugging Face's spelling of them, and tiktoken speed.

`BPETokenizer` answers encode/decode through tiktoken when it is installed (tens of times
faster) and through the pure-Python `ByteLevelBPE` otherwise; pieces and explanations always
come from the pure-Python reference, which it keeps at `.reference`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from importlib import resources
from itertools import pairwise
from os import PathLike
from pathlib import Path

from lmscope.errors import TokenizerError
from lmscope.tokenizers.base import TokenExplanation, Tokenizer, check_text
from lmscope.tokenizers.bpe import ByteLevelBPE
from lmscope.tokenizers.bpe_files import find_bpe_files, read_bpe_files

try:  # tiktoken is optional: without it the pure-Python BPE does all the work.
    import tiktoken
except ImportError:  # pragma: no cover - exercised only where tiktoken is missing
    tiktoken = None


class BPETokenizer(Tokenizer):
    """A byte-level BPE with the fastest backend available ("tiktoken" or "python")."""

    def __init__(self, reference: ByteLevelBPE, *, backend: str = "auto") -> None:
        if backend not in ("auto", "tiktoken", "python"):
            raise TokenizerError(f"unknown backend {backend!r}; use 'auto', 'tiktoken' or 'python'")
        self.reference = reference
        self.name = reference.name
        self.vocab_size = reference.vocab_size
        self.eot_id = reference.eot_id
        self._encoding = None if backend == "python" else _tiktoken_encoding(reference)
        if backend == "tiktoken" and self._encoding is None:
            raise TokenizerError(
                "the tiktoken backend was asked for but tiktoken is not installed or cannot "
                "represent this vocabulary; use backend='auto'"
            )
        self.backend = "python" if self._encoding is None else "tiktoken"

    def encode(self, text: str, *, allow_special: bool = True) -> list[int]:
        if self._encoding is None:
            return self.reference.encode(text, allow_special=allow_special)
        check_text(text)
        if allow_special:
            return self._encoding.encode(text, allowed_special="all")
        return self._encoding.encode_ordinary(text)

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        if self._encoding is None:
            return self.reference.decode_bytes(ids)
        if hasattr(ids, "tolist"):
            ids = ids.tolist()  # a tensor or array
        try:
            return self._encoding.decode_bytes(ids)
        except (KeyError, TypeError, OverflowError):
            # A bad id: the reference checks every id and names the culprit in its error.
            return self.reference.decode_bytes(ids)

    def token_bytes(self, token_id: int) -> bytes:
        return self.reference.token_bytes(token_id)

    def explain(self, text: str, *, allow_special: bool = True) -> list[TokenExplanation]:
        return self.reference.explain(text, allow_special=allow_special)

    def save(self, directory: str | PathLike[str]) -> None:
        self.reference.save(directory)


def _tiktoken_encoding(bpe: ByteLevelBPE) -> tiktoken.Encoding | None:
    """Build a tiktoken Encoding offline from the reference tables, or None if unsafe.

    tiktoken merges by the id of the joined bytes, so it only matches the reference when
    ids follow merge order and every multi-byte token comes from a merge.
    """
    if tiktoken is None or not _ids_follow_merge_order(bpe):
        return None
    return tiktoken.Encoding(
        bpe.name,
        pat_str=bpe.pattern,
        mergeable_ranks=dict(bpe.vocab),
        special_tokens=dict(bpe.special_tokens),
    )


def _ids_follow_merge_order(bpe: ByteLevelBPE) -> bool:
    merged_ids = [bpe.vocab[left + right] for left, right in bpe.merges]
    increasing = all(a < b for a, b in pairwise(merged_ids))
    multi_byte = sum(1 for raw in bpe.vocab if len(raw) > 1)
    return increasing and multi_byte == len(merged_ids)


def load_bpe(
    directory: str | PathLike[str], *, name: str | None = None, backend: str = "auto"
) -> BPETokenizer:
    """Load encoder.json + vocab.bpe (GPT-2) or vocab.json + merges.txt (Hugging Face)."""
    directory = Path(directory)
    paths = find_bpe_files(directory)
    if paths is None:
        raise TokenizerError(
            f"{directory} has neither encoder.json + vocab.bpe nor vocab.json + merges.txt"
        )
    files = read_bpe_files(*paths)
    reference = ByteLevelBPE(
        files.vocab, files.merges, special_tokens=files.special_tokens, name=name
    )
    return BPETokenizer(reference, backend=backend)


def gpt2_files_dir() -> Path:
    """Where the shipped GPT-2 encoder.json and vocab.bpe live."""
    return Path(str(resources.files("lmscope") / "assets" / "gpt2-tokenizer"))


@cache
def gpt2_tokenizer() -> BPETokenizer:
    """GPT-2's tokenizer from the shipped files, loaded once (tiktoken backend if installed).

    Its pure-Python reference is `gpt2_tokenizer().reference`.
    """
    return load_bpe(gpt2_files_dir(), name="gpt2")
