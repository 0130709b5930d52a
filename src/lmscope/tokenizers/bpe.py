"""Byte-level BPE written out in plain Python: the reference that explains every merge.

Encoding follows GPT-2: the text is cut into pre-tokens by a regex, each pre-token's UTF-8
bytes start as single-byte tokens, and the adjacent pair with the lowest merge rank is merged
(every occurrence at once) until no listed pair is left.
"""

from __future__ import annotations

import functools
import heapq
import re
from collections.abc import Iterator, Mapping, Sequence
from itertools import pairwise
from os import PathLike
from pathlib import Path
from types import MappingProxyType

import regex

from lmscope.errors import TokenizerError
from lmscope.tokenizers.base import (
    MergeStep,
    TokenExplanation,
    Tokenizer,
    TokenPiece,
    check_ids,
    check_text,
    readable_bytes,
)
from lmscope.tokenizers.bpe_files import write_bpe_files

# GPT-2's pre-tokenizer: English contractions, letter runs, digit runs, other symbols, and
# whitespace (a run keeps its last space for the word after it).
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

GPT2_VOCAB_SIZE = 50257

_NOT_MERGEABLE = float("inf")


def default_name(vocab_size: int) -> str:
    """'gpt2' for GPT-2's vocabulary size, otherwise 'bpe-<size>'."""
    return "gpt2" if vocab_size == GPT2_VOCAB_SIZE else f"bpe-{vocab_size}"


class ByteLevelBPE(Tokenizer):
    """Pure-Python byte-level BPE with a per-pre-token cache.

    vocab maps token bytes to ids (all 256 single bytes must be there), merges lists the
    (left, right) pairs earliest first: a pair's index is its rank. special_tokens maps
    control strings such as "<|endoftext|>" to their ids.
    """

    def __init__(
        self,
        vocab: Mapping[bytes, int],
        merges: Sequence[tuple[bytes, bytes]],
        *,
        special_tokens: Mapping[str, int] | None = None,
        name: str | None = None,
        pattern: str = GPT2_PATTERN,
        cache_size: int = 1 << 16,
    ) -> None:
        self._vocab = dict(vocab)
        self._merges = [(bytes(left), bytes(right)) for left, right in merges]
        self._special_tokens = dict(special_tokens or {})
        self._ranks = {pair: rank for rank, pair in enumerate(self._merges)}
        self._id_to_bytes = _id_table(self._vocab, self._special_tokens)
        _check_consistent(self._vocab, self._merges)
        self.vocab_size = max(self._id_to_bytes) + 1
        self.eot_id = self._special_tokens.get("<|endoftext|>")
        self.name = name or default_name(self.vocab_size)
        self.pattern = pattern
        self._pretokenizer = regex.compile(pattern)
        self._special_splitter = _special_splitter(self._special_tokens)
        # Natural text repeats the same words, so caching whole pre-tokens skips most merging.
        self._encode_chunk = functools.lru_cache(maxsize=cache_size)(self._encode_chunk_uncached)

    # -- read-only views used by the tiktoken backend, training and the UI ----------------

    @property
    def vocab(self) -> Mapping[bytes, int]:
        """Token bytes -> id, special tokens excluded."""
        return MappingProxyType(self._vocab)

    @property
    def merges(self) -> Sequence[tuple[bytes, bytes]]:
        """The merge pairs, earliest (rank 0) first."""
        return tuple(self._merges)

    @property
    def special_tokens(self) -> Mapping[str, int]:
        return MappingProxyType(self._special_tokens)

    @property
    def reference(self) -> ByteLevelBPE:
        """This object: it already is the reference implementation."""
        return self

    def clear_cache(self) -> None:
        """Forget cached pre-tokens (benchmarks use it to time a cold start)."""
        self._encode_chunk.cache_clear()

    # -- Tokenizer interface ----------------------------------------------------------------

    def encode(self, text: str, *, allow_special: bool = True) -> list[int]:
        check_text(text)
        ids: list[int] = []
        for segment, special_id in self._segments(text, allow_special):
            if special_id is not None:
                ids.append(special_id)
                continue
            for chunk in self._pretokenizer.findall(segment):
                ids.extend(self._encode_chunk(chunk))
        return ids

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        return b"".join(self.token_bytes(i) for i in check_ids(ids, self.vocab_size))

    def token_bytes(self, token_id: int) -> bytes:
        try:
            return self._id_to_bytes[token_id]
        except (KeyError, TypeError):
            raise TokenizerError(
                f"token id {token_id!r} is not in the {self.name} vocabulary "
                f"(ids run 0..{self.vocab_size - 1})"
            ) from None

    def pretokenize(self, text: str, *, allow_special: bool = True) -> list[str]:
        """The chunks BPE works on separately (special tokens stay whole)."""
        check_text(text)
        chunks: list[str] = []
        for segment, special_id in self._segments(text, allow_special):
            if special_id is not None:
                chunks.append(segment)
            else:
                chunks.extend(self._pretokenizer.findall(segment))
        return chunks

    def explain(self, text: str, *, allow_special: bool = True) -> list[TokenExplanation]:
        check_text(text)
        explained: list[TokenExplanation] = []
        for segment, special_id in self._segments(text, allow_special):
            if special_id is not None:
                explained.append(TokenExplanation(special_id, self.piece(special_id), segment))
                continue
            for chunk in self._pretokenizer.findall(segment):
                explained.extend(self._explain_chunk(chunk))
        return explained

    def save(self, directory: str | PathLike[str]) -> None:
        write_bpe_files(Path(directory), self._vocab, self._merges, self._special_tokens)

    # -- the BPE itself ------------------------------------------------------------------------

    def _segments(self, text: str, allow_special: bool) -> Iterator[tuple[str, int | None]]:
        """Cut text around special tokens: yields (special text, id) or (plain text, None)."""
        if not allow_special or self._special_splitter is None:
            yield text, None
            return
        # A capturing split alternates plain text (even indexes) and special tokens (odd).
        for index, segment in enumerate(self._special_splitter.split(text)):
            if index % 2:
                yield segment, self._special_tokens[segment]
            elif segment:
                yield segment, None

    def _encode_chunk_uncached(self, chunk: str) -> tuple[int, ...]:
        parts, _ = self._apply_merges(chunk.encode("utf-8"), trace=False)
        return tuple(self._vocab[part] for part in parts)

    def _explain_chunk(self, chunk: str) -> list[TokenExplanation]:
        parts, histories = self._apply_merges(chunk.encode("utf-8"), trace=True)
        explained = []
        for part, history in zip(parts, histories, strict=True):
            token_id = self._vocab[part]
            piece = TokenPiece(token_id, readable_bytes(part), part)
            explained.append(TokenExplanation(token_id, piece, chunk, history))
        return explained

    def _apply_merges(
        self, raw: bytes, *, trace: bool
    ) -> tuple[list[bytes], list[list[MergeStep]]]:
        """Merge the lowest-ranked adjacent pair until none is listed.

        With trace, also returns for every final part the merges that built it.
        """
        parts = [raw[i : i + 1] for i in range(len(raw))]
        histories: list[list[MergeStep]] = [[] for _ in parts] if trace else []
        ranks = self._ranks
        while len(parts) > 1:
            best = min(pairwise(parts), key=lambda pair: ranks.get(pair, _NOT_MERGEABLE))
            rank = ranks.get(best)
            if rank is None:
                break
            parts, histories = _merge_pair(parts, histories, best, rank)
        return parts, histories


def _merge_pair(
    parts: list[bytes],
    histories: list[list[MergeStep]],
    pair: tuple[bytes, bytes],
    rank: int,
) -> tuple[list[bytes], list[list[MergeStep]]]:
    """Merge every non-overlapping occurrence of `pair`, scanning left to right."""
    left, right = pair
    merged = left + right
    new_parts: list[bytes] = []
    new_histories: list[list[MergeStep]] = []
    i = 0
    while i < len(parts):
        if parts[i] == left and i + 1 < len(parts) and parts[i + 1] == right:
            new_parts.append(merged)
            if histories:
                # Sub-merges always have lower ranks, so rank order is the order applied.
                steps = heapq.merge(histories[i], histories[i + 1], key=lambda step: step.rank)
                new_histories.append([*steps, MergeStep(left, right, rank, merged)])
            i += 2
        else:
            new_parts.append(parts[i])
            if histories:
                new_histories.append(histories[i])
            i += 1
    return new_parts, new_histories


def _id_table(vocab: Mapping[bytes, int], specials: Mapping[str, int]) -> dict[int, bytes]:
    """id -> bytes for every token, refusing two tokens that share an id."""
    table: dict[int, bytes] = {}
    entries = [*vocab.items(), *((text.encode("utf-8"), i) for text, i in specials.items())]
    for raw, token_id in entries:
        if token_id in table:
            raise TokenizerError(
                f"tokens {table[token_id]!r} and {raw!r} share id {token_id}; "
                "the vocabulary is corrupt"
            )
        table[token_id] = raw
    if not table:
        raise TokenizerError("the BPE vocabulary is empty")
    return table


def _check_consistent(vocab: Mapping[bytes, int], merges: Sequence[tuple[bytes, bytes]]) -> None:
    """Every byte and every merge result must have an id, or some text could not be encoded."""
    missing_bytes = [b for b in range(256) if bytes((b,)) not in vocab]
    if missing_bytes:
        raise TokenizerError(
            f"the BPE vocabulary lacks {len(missing_bytes)} of the 256 single-byte tokens "
            f"(first: {bytes(missing_bytes[:1])!r}); it is not a byte-level vocabulary"
        )
    for rank, (left, right) in enumerate(merges):
        if left + right not in vocab:
            raise TokenizerError(
                f"merge {rank} ({left!r} + {right!r}) makes a token the vocabulary does not "
                "have; the vocabulary and merges files do not belong together"
            )


def _special_splitter(specials: Mapping[str, int]) -> re.Pattern[str] | None:
    if not specials:
        return None
    # Longest first, so one special token that starts another cannot cut it short.
    names = sorted(specials, key=len, reverse=True)
    return re.compile("(" + "|".join(re.escape(name) for name in names) + ")")
