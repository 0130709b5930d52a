"""Byte-level BPE written out in plain Python: the reference that explains every merge.

Encoding follows GPT-2: special tokens are cut out whole, the rest is cut into pre-tokens by
the pre-tokenizer (GPT-2's regex, Llama-3's, Qwen2's, SmolLM's digits + GPT-2...), each
pre-token's UTF-8 bytes start as single-byte tokens, and the adjacent pair with the lowest merge
rank is merged (every occurrence at once) until no listed pair is left. With `ignore_merges`
(Llama-3) a pre-token that is itself in the vocabulary is one token without merging.
"""

from __future__ import annotations

import functools
import heapq
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import pairwise
from os import PathLike
from pathlib import Path
from typing import TypeVar

from lmscope.errors import TokenizerError
from lmscope.tokenizers.base import (
    EOT_TEXT,
    MergeStep,
    TableTokenizer,
    TokenExplanation,
    TokenPiece,
    check_merges,
    check_text,
    cut_specials,
    readable_bytes,
    special_splitter,
)
from lmscope.tokenizers.bpe_files import KNOWN_SPECIALS, write_bpe_files
from lmscope.tokenizers.hf_files import write_hf_json
from lmscope.tokenizers.pretokenizers import (
    GPT2,
    GPT2_PATTERN,
    PreTokenizer,
    pretokenizer_from_steps,
)

__all__ = ["GPT2_PATTERN", "GPT2_VOCAB_SIZE", "ByteLevelBPE", "default_name"]

GPT2_VOCAB_SIZE = 50257

_NOT_MERGEABLE = float("inf")

_Item = TypeVar("_Item")  # what a walk over the chunks collects: ids, chunks, explanations

# Stands in for a byte the vocabulary lacks when unk_id is set: never merges, encodes as unk_id.
_UNKNOWN_BYTE = b""


def default_name(vocab_size: int) -> str:
    """'gpt2' for GPT-2's vocabulary size, otherwise 'bpe-<size>'."""
    return "gpt2" if vocab_size == GPT2_VOCAB_SIZE else f"bpe-{vocab_size}"


class ByteLevelBPE(TableTokenizer[bytes]):
    """Pure-Python byte-level BPE with a per-pre-token cache.

    vocab maps token bytes to ids, merges lists the (left, right) pairs earliest first: a pair's
    index is its rank. special_tokens maps strings matched whole before pre-tokenization, such
    as "<|endoftext|>" or "<|im_start|>", to their ids (a special token may also be in vocab
    under the same id). `pattern` is a regex or a PreTokenizer.

    All 256 single bytes must be in vocab unless allow_missing_bytes: then a byte the vocabulary
    lacks is dropped (Hugging Face and llama.cpp do the same) or, with unk_id, becomes unk_id.
    extra_ids are ids that decode to the given bytes but are never produced by encoding.
    """

    def __init__(
        self,
        vocab: Mapping[bytes, int],
        merges: Sequence[tuple[bytes, bytes]],
        *,
        special_tokens: Mapping[str, int] | None = None,
        name: str | None = None,
        pattern: str | PreTokenizer = GPT2_PATTERN,
        cache_size: int = 1 << 16,
        ignore_merges: bool = False,
        bos_id: int | None = None,
        eos_id: int | None = None,
        unk_id: int | None = None,
        add_bos: bool = False,
        allow_missing_bytes: bool = False,
        extra_ids: Mapping[int, bytes] | None = None,
    ) -> None:
        self._vocab = dict(vocab)
        self._merges = [(bytes(left), bytes(right)) for left, right in merges]
        self._special_tokens = dict(special_tokens or {})
        self._ranks = {pair: rank for rank, pair in enumerate(self._merges)}
        table = _id_table(self._vocab, self._special_tokens, extra_ids or {})
        self.missing_bytes = _check_consistent(self._vocab, self._merges, allow_missing_bytes)
        self._keep_table(table, bos_id, eos_id, unk_id)
        self.add_bos = add_bos
        # The token that ends a text: the model's end-of-sequence token, else <|endoftext|>.
        self.eot_id = eos_id if eos_id is not None else self._special_tokens.get(EOT_TEXT)
        self.ignore_merges = ignore_merges
        self.name = name or default_name(self.vocab_size)
        if not isinstance(pattern, PreTokenizer):
            pattern = pretokenizer_from_steps((pattern,))
        self.pretokenizer = pattern
        # One regex cutting text like the pre-tokenizer (what tiktoken needs), or None.
        self.pattern = self.pretokenizer.single_pattern
        self._special_splitter = special_splitter(self._special_tokens)
        self._byte_parts = _byte_parts(self._vocab, unk_id)
        # Natural text repeats the same words, so caching whole pre-tokens skips most merging.
        self._encode_chunk = functools.lru_cache(maxsize=cache_size)(self._encode_chunk_uncached)

    @property
    def reference(self) -> ByteLevelBPE:
        """This object: it already is the reference implementation."""
        return self

    def clear_cache(self) -> None:
        """Forget cached pre-tokens (benchmarks use it to time a cold start)."""
        self._encode_chunk.cache_clear()

    # -- Tokenizer interface ----------------------------------------------------------------

    def encode(self, text: str, *, allow_special: bool = True) -> list[int]:
        return self._by_chunk(text, allow_special, lambda _, i: i, self._encode_chunk)

    def pretokenize(self, text: str, *, allow_special: bool = True) -> list[str]:
        """The chunks BPE works on separately (special tokens stay whole)."""
        return self._by_chunk(text, allow_special, lambda segment, _: segment, lambda c: (c,))

    def explain(self, text: str, *, allow_special: bool = True) -> list[TokenExplanation]:
        def special(segment: str, special_id: int) -> TokenExplanation:
            return TokenExplanation(special_id, self.piece(special_id), segment)

        return self._by_chunk(text, allow_special, special, self._explain_chunk)

    def _by_chunk(
        self,
        text: str,
        allow_special: bool,
        special: Callable[[str, int], _Item],
        chunk: Callable[[str], Iterable[_Item]],
    ) -> list[_Item]:
        """The one walk encode, pretokenize and explain share: text checked, cut around special
        tokens (each one item, ``special(segment, id)``), the plain text pre-tokenized and each
        chunk's items, ``chunk(piece)``, in order."""
        check_text(text)
        items: list[_Item] = []
        for segment, special_id in self.segments(text, allow_special=allow_special):
            if special_id is not None:
                items.append(special(segment, special_id))
            else:
                for piece in self.pretokenizer.split(segment):
                    items.extend(chunk(piece))
        return items

    def save(self, directory: str | PathLike[str]) -> None:
        """GPT-2's encoder.json + vocab.bpe when they can say everything, else tokenizer.json."""
        if self._fits_gpt2_files():
            write_bpe_files(Path(directory), self._vocab, self._merges, self._special_tokens)
            return
        write_hf_json(self, Path(directory) / "tokenizer.json")

    def _fits_gpt2_files(self) -> bool:
        """Whether encoder.json + vocab.bpe, which hold only a vocabulary, merges and
        <|endoftext|>, give this tokenizer back."""
        specials = self._special_tokens
        return (
            self.pretokenizer.steps == GPT2.steps
            and self.pretokenizer.normalizer is None
            and not (self.ignore_merges or self.missing_bytes or self.add_bos)
            and (self.bos_id, self.eos_id, self.unk_id) == (None, None, None)
            and set(specials) <= set(KNOWN_SPECIALS)
            and not any(text.encode("utf-8") in self._vocab for text in specials)
            and set(self._id_to_bytes) == {*self._vocab.values(), *specials.values()}
        )

    # -- the BPE itself ------------------------------------------------------------------------

    def segments(
        self, text: str, *, allow_special: bool = True
    ) -> Iterator[tuple[str, int | None]]:
        """Cut text around special tokens: yields (special text, id), or (plain text, None)
        with the plain text already normalized."""
        splitter = self._special_splitter if allow_special else None
        for segment, _, special_id in cut_specials(text, splitter, self._special_tokens):
            if special_id is not None:
                yield segment, special_id
            else:
                yield self.pretokenizer.normalize(segment), None

    def _encode_chunk_uncached(self, chunk: str) -> tuple[int, ...]:
        raw = chunk.encode("utf-8")
        if self.ignore_merges and raw in self._vocab:
            return (self._vocab[raw],)
        parts, _ = self._apply_merges(raw, trace=False)
        return tuple(self._part_id(part) for part in parts)

    def _part_id(self, part: bytes) -> int:
        if part != _UNKNOWN_BYTE:
            return self._vocab[part]
        assert self.unk_id is not None  # the stand-in is only used with an unk_id
        return self.unk_id

    def _explain_chunk(self, chunk: str) -> list[TokenExplanation]:
        raw = chunk.encode("utf-8")
        parts, histories = self._apply_merges(raw, trace=True)
        if self.ignore_merges and raw in self._vocab and parts != [raw]:
            # Taken whole from the vocabulary; the merges alone would not have built it.
            parts, histories = [raw], [[]]
        explained = []
        for part, history in zip(parts, histories, strict=True):
            token_id = self._part_id(part)
            raw = self._id_to_bytes[token_id]
            piece = TokenPiece(token_id, readable_bytes(raw), raw)
            explained.append(TokenExplanation(token_id, piece, chunk, history))
        return explained

    def _apply_merges(
        self, raw: bytes, *, trace: bool
    ) -> tuple[list[bytes], list[list[MergeStep]]]:
        """Merge the lowest-ranked adjacent pair until none is listed.

        With trace, also returns for every final part the merges that built it.
        """
        if self._byte_parts is None:
            parts = [raw[i : i + 1] for i in range(len(raw))]
        else:  # some bytes are not in the vocabulary: dropped, or the unknown-byte stand-in
            parts = [part for b in raw if (part := self._byte_parts[b]) is not None]
        histories: list[list[MergeStep]] = [[] for _ in parts] if trace else []
        ranks = self._ranks
        while len(parts) > 1:
            best = min(pairwise(parts), key=lambda pair: ranks.get(pair, _NOT_MERGEABLE))
            rank = ranks.get(best)
            if rank is None:
                break
            parts, histories = _merge_pair(parts, histories, best, rank)
        return parts, histories


def _byte_parts(vocab: Mapping[bytes, int], unk_id: int | None) -> list[bytes | None] | None:
    """Per byte value, the part it starts as; None when every byte is in the vocabulary."""
    singles = [bytes((b,)) for b in range(256)]
    if all(single in vocab for single in singles):
        return None
    missing = None if unk_id is None else _UNKNOWN_BYTE
    return [single if single in vocab else missing for single in singles]


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


def _id_table(
    vocab: Mapping[bytes, int], specials: Mapping[str, int], extra: Mapping[int, bytes]
) -> dict[int, bytes]:
    """id -> bytes for every token, refusing two different tokens that share an id."""
    table: dict[int, bytes] = {}
    entries = [
        *vocab.items(),
        *((text.encode("utf-8"), i) for text, i in specials.items()),
        *((raw, i) for i, raw in extra.items()),
    ]
    for raw, token_id in entries:
        if table.get(token_id, raw) != raw:
            raise TokenizerError(
                "error.tokenizer.shared-id",
                first=repr(table[token_id]),
                second=repr(raw),
                id=str(token_id),
            )
        table[token_id] = raw
    if not table:
        raise TokenizerError("error.tokenizer.empty-vocab")
    return table


def _check_consistent(
    vocab: Mapping[bytes, int], merges: Sequence[tuple[bytes, bytes]], allow_missing_bytes: bool
) -> bytes:
    """Every merge result must have an id, and every byte too unless allow_missing_bytes;
    returns the byte values the vocabulary lacks."""
    missing_bytes = bytes(b for b in range(256) if bytes((b,)) not in vocab)
    if missing_bytes and not allow_missing_bytes:
        raise TokenizerError(
            "error.tokenizer.missing-bytes",
            n=str(len(missing_bytes)),
            first=repr(missing_bytes[:1]),
        )
    check_merges(merges, vocab, "error.tokenizer.merge-unknown-files")
    return missing_bytes
