"""The interface every lmscope tokenizer offers, and the small records it returns.

The model code, the CLI and the web app only talk to `Tokenizer`, so a GPT-2 BPE, a trained
BPE and a character vocabulary are interchangeable everywhere.
"""

from __future__ import annotations

import codecs
import operator
import re
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from types import MappingProxyType
from typing import Generic, NamedTuple, Protocol, TypeVar

from lmscope.errors import InvalidInputError, TokenizerError

EOT_TEXT = "<|endoftext|>"


def _hex_escape(err: UnicodeError) -> tuple[str, int]:
    # Bytes that are not (yet) valid UTF-8, e.g. half of a Chinese character, shown as <0xE4>.
    if not isinstance(err, UnicodeDecodeError):
        raise err
    bad = err.object[err.start : err.end]
    return "".join(f"<0x{b:02X}>" for b in bad), err.end


codecs.register_error("lmscope.hex", _hex_escape)


def readable_bytes(raw: bytes) -> str:
    """Show token bytes to a person: valid UTF-8 as text, stray bytes of a partial
    character as <0xE4> per byte."""
    return raw.decode("utf-8", errors="lmscope.hex")


@dataclass(frozen=True)
class TokenPiece:
    """One token as a person sees it: `text` is readable, `raw` the exact bytes."""

    id: int
    text: str
    raw: bytes


class MergeStep(NamedTuple):
    """One BPE merge: `left` + `right` became `result`; lower `rank` merges first."""

    left: bytes
    right: bytes
    rank: int
    result: bytes


@dataclass(frozen=True)
class TokenExplanation:
    """How one token came out of the text: the pre-tokenizer chunk it belongs to, and the
    merges (from single bytes up, in the order applied) that built it."""

    id: int
    piece: TokenPiece
    pretoken: str
    merges: list[MergeStep] = field(default_factory=list)


def check_text(text: object) -> str:
    """Refuse what cannot be tokenized, with one clear line instead of a crash deep inside."""
    if not isinstance(text, str):
        raise InvalidInputError("error.tokenizer.text-type", type=type(text).__name__)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        bad = text[err.start : err.end]
        raise TokenizerError(
            "error.tokenizer.lone-surrogate", char=repr(bad), position=str(err.start)
        ) from None
    return text


def check_ids(ids: Sequence[int], vocab_size: int) -> list[int]:
    """Normalise ids (numpy and torch integers included) and refuse ones out of the vocabulary."""
    if hasattr(ids, "tolist"):
        ids = ids.tolist()  # a tensor or array: one conversion instead of one per element
    try:
        ids = list(ids)  # a generator is read once, by both checks below
        clean = [operator.index(i) for i in ids]
    except TypeError:
        raise InvalidInputError("error.tokenizer.ids-not-integers") from None
    if any(isinstance(i, bool) for i in ids):  # a bool is no id, though operator.index takes it
        raise InvalidInputError("error.tokenizer.ids-not-bools")
    for i in clean:
        if not 0 <= i < vocab_size:
            raise TokenizerError(
                "error.tokenizer.id-out-of-range", id=str(i), last=str(vocab_size - 1)
            )
    return clean


class Tokenizer(ABC):
    """Shared interface: text <-> ids, plus readable pieces and merge explanations."""

    name: str
    vocab_size: int
    eot_id: int | None
    # What the pieces are made of, for the texts that explain them: "byte-bpe" (GPT-2, Llama
    # 3, Qwen2, SmolLM2), "sentencepiece-bpe" (Llama 2, Mistral v0.1) or "chars".
    kind: str = "byte-bpe"
    # The model's beginning- and end-of-sequence tokens where the vocabulary names them.
    bos_id: int | None = None
    eos_id: int | None = None

    @abstractmethod
    def encode(self, text: str, *, allow_special: bool = True) -> list[int]:
        """Text -> token ids. With allow_special, a literal "<|endoftext|>" becomes eot_id."""

    @abstractmethod
    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        """Token ids -> the exact bytes they stand for."""

    @abstractmethod
    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of one token id (TokenizerError when the id is unknown)."""

    @abstractmethod
    def explain(self, text: str, *, allow_special: bool = True) -> list[TokenExplanation]:
        """One TokenExplanation per token of `text`, in order."""

    @abstractmethod
    def save(self, directory: str | PathLike[str]) -> None:
        """Write the vocabulary files so `load_tokenizer(directory)` reads them back."""

    def decode(self, ids: Sequence[int]) -> str:
        """Token ids -> text; bytes that are not valid UTF-8 become U+FFFD."""
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    def piece(self, token_id: int) -> TokenPiece:
        """One token id -> its readable TokenPiece."""
        (token_id,) = check_ids([token_id], self.vocab_size)
        raw = self.token_bytes(token_id)
        return TokenPiece(token_id, readable_bytes(raw), raw)

    def pieces(self, ids: Sequence[int]) -> list[TokenPiece]:
        """Token ids -> readable TokenPieces, one each."""
        return [self.piece(i) for i in check_ids(ids, self.vocab_size)]

    def __len__(self) -> int:
        return self.vocab_size

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} vocab_size={self.vocab_size}>"


Piece = TypeVar("Piece", bytes, str)  # what a BPE's vocabulary spells its tokens as


class TableTokenizer(Tokenizer, Generic[Piece]):
    """A tokenizer whose every id stands for fixed bytes, kept in one table
    (``_id_to_bytes``, filled by the subclass through ``_keep_table``): both BPEs, whose
    vocabulary and merges spell a token as a ``Piece``."""

    _id_to_bytes: dict[int, bytes]
    _vocab: dict[Piece, int]
    _merges: list[tuple[Piece, Piece]]
    _special_tokens: dict[str, int]

    def _keep_table(
        self, table: dict[int, bytes], bos_id: int | None, eos_id: int | None, unk_id: int | None
    ) -> None:
        """Keep ``table`` (id -> bytes) and the model's bos/eos/unk ids, each one it holds."""
        self._id_to_bytes = table
        self.vocab_size = max(table) + 1
        for label, token_id in (("bos", bos_id), ("eos", eos_id), ("unk", unk_id)):
            if token_id is not None and token_id not in table:
                raise TokenizerError(
                    "error.tokenizer.special-not-in-vocab", label=label, id=str(token_id)
                )
        self.bos_id, self.eos_id, self.unk_id = bos_id, eos_id, unk_id

    # -- read-only views used by the tiktoken backend, training, saving and the UI ----------

    @property
    def vocab(self) -> Mapping[Piece, int]:
        """Token -> id, the token as the vocabulary spells it (bytes, or SentencePiece text
        such as "▁the"); special tokens only where the vocabulary lists them too."""
        return MappingProxyType(self._vocab)

    @property
    def merges(self) -> Sequence[tuple[Piece, Piece]]:
        """The merge pairs, earliest (rank 0) first."""
        return tuple(self._merges)

    @property
    def special_tokens(self) -> Mapping[str, int]:
        return MappingProxyType(self._special_tokens)

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return b"".join(self.token_bytes(i) for i in check_ids(ids, self.vocab_size))

    def token_bytes(self, token_id: int) -> bytes:
        try:
            return self._id_to_bytes[token_id]
        except (KeyError, TypeError):
            raise TokenizerError(
                "error.tokenizer.id-not-in-vocab",
                id=repr(token_id),
                name=self.name,
                last=str(self.vocab_size - 1),
            ) from None


class SavedBPE(Protocol[Piece]):
    """What the tokenizer.json writers (``hf_files``, ``spm_files``) read of either lmscope BPE.
    Named here, so that the writers need not import the tokenizers that call them to save."""

    bos_id: int | None
    eos_id: int | None
    unk_id: int | None
    add_bos: bool

    @property
    def vocab(self) -> Mapping[Piece, int]: ...
    @property
    def merges(self) -> Sequence[tuple[Piece, Piece]]: ...
    @property
    def special_tokens(self) -> Mapping[str, int]: ...


class Splitting(Protocol):
    """What a tokenizer.json says of a byte-level BPE's pre-tokenizer."""

    @property
    def steps(self) -> Sequence[str]: ...
    @property
    def normalizer(self) -> str | None: ...


class SavedByteBPE(SavedBPE[bytes], Protocol):
    """What ``hf_files.write_hf_json`` reads of a byte-level BPE (``bpe.ByteLevelBPE``)."""

    ignore_merges: bool

    @property
    def pretokenizer(self) -> Splitting: ...


class SavedSentencePieceBPE(SavedBPE[str], Protocol):
    """What ``spm_files.write_spm_json`` reads of a SentencePiece BPE (``spm_bpe``)."""

    prefix: str
    prefix_after_space: bool
    split_words: bool
    decode_strip: int
    fuse_unk: bool
    byte_fallback: bool


def check_merges(
    merges: Sequence[tuple[Piece, Piece]], vocab: Mapping[Piece, int], error: str
) -> None:
    """Refuse a merge whose result has no id (``error``: the catalog key that says so)."""
    for rank, (left, right) in enumerate(merges):
        if left + right not in vocab:
            raise TokenizerError(error, rank=str(rank), left=repr(left), right=repr(right))


def special_splitter(specials: Mapping[str, int]) -> re.Pattern[str] | None:
    """One regex that finds the special tokens in a text (None when there are none)."""
    if not specials:
        return None
    # Longest first, so one special token that starts another cannot cut it short.
    names = sorted(specials, key=len, reverse=True)
    return re.compile("(" + "|".join(re.escape(name) for name in names) + ")")


def cut_specials(
    text: str, splitter: re.Pattern[str] | None, specials: Mapping[str, int]
) -> Iterator[tuple[str, int, int | None]]:
    """(piece, where it starts in text, its special id or None for plain text), in order; no
    empty plain pieces. With no splitter the whole text is one plain piece."""
    if splitter is None:
        if text:
            yield text, 0, None
        return
    start = 0
    # A capturing split alternates plain text (even indexes) and special tokens (odd).
    for index, segment in enumerate(splitter.split(text)):
        if index % 2:
            yield segment, start, specials[segment]
        elif segment:
            yield segment, start, None
        start += len(segment)
