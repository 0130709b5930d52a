"""The fast byte-level BPE tokenizer, and GPT-2's: the shipped files and Hugging Face's spelling.

`BPETokenizer` wraps any pure-Python `ByteLevelBPE` (GPT-2, trained, or read from a Hugging
Face tokenizer.json or GGUF fields) and answers encode/decode through tiktoken when it is
installed and gives the same tokens (tens of times faster), and through the reference
otherwise; pieces and explanations always come from the pure-Python reference, which it keeps
at `.reference`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from os import PathLike
from pathlib import Path

from lmscope.errors import TokenizerError
from lmscope.tokenizers.base import TokenExplanation, Tokenizer, check_ids, check_text
from lmscope.tokenizers.bpe import ByteLevelBPE
from lmscope.tokenizers.bpe_files import find_bpe_files, read_bpe_files
from lmscope.tokenizers.fast_ranks import fast_ranks
from lmscope.tokenizers.pretokenizers import PreTokenizer

try:  # tiktoken is optional: without it the pure-Python BPE does all the work.
    import tiktoken
except ImportError:  # pragma: no cover - exercised only where tiktoken is missing
    tiktoken = None  # type: ignore[assignment]  # the module, or None where it is missing

# Encoded both ways when the tiktoken backend is built; any difference means the vocabulary's
# regex or merges do something tiktoken does not, and the reference is used instead.
_PROBE = (
    "Hello, World! It's 2024: we'LL see 3.14159 and 12345 things.\n\n  Indented  \t\tcode(x)\r\n"
    "def f(a, b):\n    return a+b  # note\n"
    "我爱自然语言处理。数据可视化 ١٢٣ ² Ελληνικά русский CamelCaseWord don'T\u00a0x  1\n"
)


class BPETokenizer(Tokenizer):
    """A byte-level BPE with the fastest backend available ("tiktoken" or "python")."""

    def __init__(self, reference: ByteLevelBPE, *, backend: str = "auto") -> None:
        if backend not in ("auto", "tiktoken", "python"):
            raise TokenizerError("error.tokenizer.unknown-backend", backend=repr(backend))
        self.reference = reference
        self.name = reference.name
        self.vocab_size = reference.vocab_size
        self.eot_id = reference.eot_id
        self.bos_id = reference.bos_id
        self.eos_id = reference.eos_id
        self._fast = None if backend == "python" else _TiktokenBackend.build(reference)
        if backend == "tiktoken" and self._fast is None:
            raise TokenizerError("error.tokenizer.no-tiktoken")
        self.backend = "python" if self._fast is None else "tiktoken"

    @property
    def special_tokens(self) -> Mapping[str, int]:
        """Strings matched whole before pre-tokenization -> their ids."""
        return self.reference.special_tokens

    @property
    def pretokenizer(self) -> PreTokenizer:
        return self.reference.pretokenizer

    @property
    def add_bos(self) -> bool:
        """Whether the model expects bos_id before a text (encode does not add it)."""
        return self.reference.add_bos

    def encode(self, text: str, *, allow_special: bool = True) -> list[int]:
        if self._fast is not None:
            ids = self._fast.encode(check_text(text), allow_special)
            if ids is not None:
                return ids
        return self.reference.encode(text, allow_special=allow_special)

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        if self._fast is not None and self._fast.decodes:
            if hasattr(ids, "tolist"):
                ids = ids.tolist()  # a tensor or array
            elif not isinstance(ids, list | tuple):  # a generator is read once: check it here
                ids = check_ids(ids, self.vocab_size)
            try:
                if not ids or (min(ids) >= 0 and max(ids) < self.vocab_size):
                    return self._fast.encoding.decode_bytes(ids)
            except (KeyError, TypeError, OverflowError, ValueError):
                pass
            # A bad id: the reference checks every id and names the culprit in its error.
        return self.reference.decode_bytes(ids)

    def token_bytes(self, token_id: int) -> bytes:
        return self.reference.token_bytes(token_id)

    def explain(self, text: str, *, allow_special: bool = True) -> list[TokenExplanation]:
        return self.reference.explain(text, allow_special=allow_special)

    def save(self, directory: str | PathLike[str]) -> None:
        self.reference.save(directory)


class _TiktokenBackend:
    """tiktoken set up to give exactly the reference's tokens (see fast_ranks)."""

    def __init__(self, reference: ByteLevelBPE, encoding, ids: list[int] | None, skip: bytes):
        self.reference = reference
        self.encoding = encoding
        self._rank_ids = ids
        # Text holding a byte the vocabulary lacks goes to the reference, which drops it.
        self._unencodable = re.compile(b"[" + re.escape(skip) + b"]") if skip else None
        specials = list(reference.special_tokens)
        # tiktoken's own special-token split is only used when it cannot pick a different
        # token than the reference: no special starts with another, no normalizer, ranks = ids.
        self._direct = (
            ids is None
            and reference.pretokenizer.normalizer is None
            and not any(a != b and b.startswith(a) for a in specials for b in specials)
        )
        self.decodes = ids is None

    @classmethod
    def build(cls, reference: ByteLevelBPE) -> _TiktokenBackend | None:
        if tiktoken is None or reference.pattern is None:
            return None
        ranks = fast_ranks(
            reference.vocab,
            reference.merges,
            ignore_merges=reference.ignore_merges,
            vocab_size=reference.vocab_size,
        )
        if ranks is None:
            return None
        try:
            encoding = tiktoken.Encoding(
                reference.name,
                pat_str=reference.pattern,
                mergeable_ranks=ranks.ranks,
                special_tokens=dict(reference.special_tokens) if ranks.ids is None else {},
            )
        except ValueError:  # a regex tiktoken's engine does not take
            return None
        backend = cls(reference, encoding, ranks.ids, ranks.unencodable)
        probe = _PROBE + "".join(reference.special_tokens)
        return backend if backend.encode(probe, True) == reference.encode(probe) else None

    def encode(self, text: str, allow_special: bool) -> list[int] | None:
        """The reference's ids for text, or None when only the reference can say."""
        if self._unencodable is not None and self._unencodable.search(text.encode("utf-8")):
            return None
        if self._direct:
            if allow_special:
                return self.encoding.encode(text, allowed_special="all")
            return self.encoding.encode_ordinary(text)
        ids: list[int] = []
        table = self._rank_ids
        for segment, special_id in self.reference.segments(text, allow_special=allow_special):
            if special_id is not None:
                ids.append(special_id)
            elif table is None:
                ids.extend(self.encoding.encode_ordinary(segment))
            else:
                ids.extend([table[rank] for rank in self.encoding.encode_ordinary(segment)])
        return ids


def load_bpe(
    directory: str | PathLike[str], *, name: str | None = None, backend: str = "auto"
) -> BPETokenizer:
    """Load encoder.json + vocab.bpe (GPT-2) or vocab.json + merges.txt (Hugging Face)."""
    directory = Path(directory)
    paths = find_bpe_files(directory)
    if paths is None:
        raise TokenizerError("error.tokenizer.no-bpe-files", folder=str(directory))
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
