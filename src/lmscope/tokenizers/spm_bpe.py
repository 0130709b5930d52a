"""SentencePiece-style BPE: merges over characters, as Llama 2, Mistral v0.1, TinyLlama and
other SentencePiece-trained vocabularies tokenize.

Unlike GPT-2's byte-level BPE, the pieces start as Unicode characters, not bytes, and a
space is spelled "▁" (U+2581) inside tokens, so "▁the" is " the". A character the vocabulary
lacks falls back to its UTF-8 bytes, one "<0xE4>"-style token each (byte_fallback), or to the
unknown token. Before merging, spaces become "▁" and one "▁" goes in front of the text (where
the files say so), which is why such a model's first word reads " Data" rather than "Data".

Merges are applied as Hugging Face's `tokenizers` applies them: the adjacent pair with the
lowest rank first, the leftmost of equal ones, until no listed pair is left. Merge ranks come
from a tokenizer.json's merges list, or from a GGUF vocabulary's scores (``merges_from_scores``).
"""

from __future__ import annotations

import functools
import heapq
import re
from collections.abc import Iterator, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import cast

from lmscope.errors import TokenizerError
from lmscope.tokenizers.base import (
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
from lmscope.tokenizers.spm_files import SPACE, write_spm_json

__all__ = ["PREFIX_SCHEMES", "SPACE", "SentencePieceBPE", "merges_from_scores"]

# Where a "▁" goes in front of the text: every piece of text between special tokens
# ("always"), only text at the very start ("first"), or nowhere ("never").
PREFIX_SCHEMES = ("always", "first", "never")

_BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")
_UNKNOWN = None  # a character with no token and no byte tokens: it never merges


def byte_token(value: int) -> str:
    """The byte_fallback token of one byte: "<0x0A>" for a newline."""
    return f"<0x{value:02X}>"


class SentencePieceBPE(TableTokenizer[str]):
    """Character-level BPE with SentencePiece's spelling of spaces.

    vocab maps token text ("▁the", "<0x0A>") to ids, merges lists the (left, right) pairs
    earliest first, special_tokens maps texts matched whole before anything else ("<s>",
    "[INST]") to ids. ``prefix`` is one of PREFIX_SCHEMES; with ``prefix_after_space`` the "▁"
    goes in even when the text already starts with a space (a Prepend normalizer, as Llama 2's
    tokenizer.json has; a Metaspace pre-tokenizer does not). ``split_words`` cuts the text
    before every "▁" so no token spans two words. ``decode_strip`` leading spaces come off a
    decoded text (the prefix, put back as a space).
    """

    kind = "sentencepiece-bpe"

    def __init__(
        self,
        vocab: Mapping[str, int],
        merges: Sequence[tuple[str, str]],
        *,
        special_tokens: Mapping[str, int] | None = None,
        name: str | None = None,
        prefix: str = "first",
        prefix_after_space: bool = False,
        split_words: bool = False,
        byte_fallback: bool = True,
        fuse_unk: bool = True,
        decode_strip: int = 1,
        unk_id: int | None = None,
        bos_id: int | None = None,
        eos_id: int | None = None,
        add_bos: bool = False,
        cache_size: int = 1 << 16,
    ) -> None:
        if prefix not in PREFIX_SCHEMES:
            raise TokenizerError(
                "error.tokenizer.prefix-scheme", prefix=repr(prefix), known=str(PREFIX_SCHEMES)
            )
        self._vocab = dict(vocab)
        self._special_tokens = dict(special_tokens or {})
        self._merges = [(str(left), str(right)) for left, right in merges]
        self._ranks = _ranks(self._merges, self._vocab)
        self._keep_table(
            _id_table(self._vocab, self._special_tokens, byte_fallback), bos_id, eos_id, unk_id
        )
        self.eot_id = eos_id
        self.add_bos = add_bos
        self.prefix, self.prefix_after_space = prefix, prefix_after_space
        self.split_words, self.byte_fallback, self.fuse_unk = split_words, byte_fallback, fuse_unk
        self.decode_strip = decode_strip
        self.name = name or f"spm-bpe-{self.vocab_size}"
        self._bytes_of = (
            {b: self._vocab.get(byte_token(b)) for b in range(256)} if byte_fallback else {}
        )
        self._special_splitter = special_splitter(self._special_tokens)
        # Cutting a text into words changes nothing when no token joins a character to a
        # following "▁" (SentencePiece vocabularies have none) and "▁" is a token (so unknown
        # characters on both sides of it are never fused into one): then each word is merged
        # on its own and cached, instead of the whole text being one long BPE run.
        self._word_safe = split_words or (
            SPACE in self._vocab and not any(_JOINS_SPACE.search(t) for t in self._vocab)
        )
        self._encode_chunk = functools.lru_cache(maxsize=cache_size)(self._encode_uncached)

    # -- Tokenizer interface ----------------------------------------------------------------

    def encode(self, text: str, *, allow_special: bool = True) -> list[int]:
        ids: list[int] = []
        for chunk, special_id in self._chunks(text, allow_special):
            if special_id is not None:
                ids.append(special_id)
            else:
                ids.extend(self._encode_chunk(chunk))
        return ids

    def decode(self, ids: Sequence[int]) -> str:
        """Token ids -> text, without the space the prefix "▁" put in front (as Hugging
        Face's decoder strips it)."""
        text = self.decode_bytes(ids).decode("utf-8", errors="replace")
        for _ in range(self.decode_strip):
            if not text.startswith(" "):
                break
            text = text[1:]
        return text

    def pretokenize(self, text: str, *, allow_special: bool = True) -> list[str]:
        """The pieces BPE works on separately, in SentencePiece spelling ("▁Data")."""
        return [chunk for chunk, _ in self._chunks(text, allow_special)]

    def explain(self, text: str, *, allow_special: bool = True) -> list[TokenExplanation]:
        explained: list[TokenExplanation] = []
        for chunk, special_id in self._chunks(text, allow_special):
            if special_id is not None:
                explained.append(TokenExplanation(special_id, self.piece(special_id), chunk))
                continue
            shown = chunk.replace(SPACE, " ")
            symbols, histories = self._merge(chunk, trace=True)
            for symbol, history in zip(symbols, histories, strict=True):
                for token_id in self._symbol_ids(symbol):
                    raw = self._id_to_bytes[token_id]
                    piece = TokenPiece(token_id, readable_bytes(raw), raw)
                    explained.append(TokenExplanation(token_id, piece, shown, history))
        return explained

    def save(self, directory: str | PathLike[str]) -> None:
        """Write tokenizer.json (and tokenizer_config.json) that Hugging Face's `tokenizers`
        and ``tokenizer_from_hf_json`` read back to the same tokens."""
        write_spm_json(self, Path(directory))

    def clear_cache(self) -> None:
        self._encode_chunk.cache_clear()

    # -- cutting the text ---------------------------------------------------------------------

    def _chunks(self, text: str, allow_special: bool) -> Iterator[tuple[str, int | None]]:
        """(special text, its id) for special tokens, (chunk in SentencePiece spelling, None)
        for the text between them, cut into words where that is safe."""
        check_text(text)
        splitter = self._special_splitter if allow_special else None
        for segment, start, special_id in cut_specials(text, splitter, self._special_tokens):
            if special_id is not None:
                yield segment, special_id
                continue
            spelled = segment.replace(" ", SPACE)
            if self._prefixed(spelled, start):
                spelled = SPACE + spelled
            for word in self._words(spelled):
                yield word, None

    def _prefixed(self, spelled: str, start: int) -> bool:
        if self.prefix == "never" or (self.prefix == "first" and start != 0):
            return False
        return self.prefix_after_space or not spelled.startswith(SPACE)

    def _words(self, spelled: str) -> list[str]:
        if self.split_words:  # every "▁" starts a word
            return [word for word in re.split(f"(?={SPACE})", spelled) if word]
        if self._word_safe:  # only where a "▁" follows another character
            return [word for word in _WORD_START.split(spelled) if word]
        return [spelled]

    # -- the BPE itself ------------------------------------------------------------------------

    def _encode_uncached(self, chunk: str) -> tuple[int, ...]:
        symbols, _ = self._merge(chunk, trace=False)
        return tuple(token_id for symbol in symbols for token_id in self._symbol_ids(symbol))

    def _symbol_ids(self, symbol: str | tuple[int, ...] | None) -> tuple[int, ...]:
        """A final symbol's ids: a token, a character's byte tokens, or unk (or nothing)."""
        if isinstance(symbol, str):
            return (self._vocab[symbol],)
        if isinstance(symbol, tuple):
            return symbol
        return () if self.unk_id is None else (self.unk_id,)

    def _start(self, chunk: str) -> list[str | tuple[int, ...] | None]:
        """The symbols BPE starts from: each character's token, else its byte tokens as one
        symbol that never merges, else unknown (runs of unknowns fused into one)."""
        symbols: list[str | tuple[int, ...] | None] = []
        for char in chunk:
            if char in self._vocab:
                symbols.append(char)
                continue
            ids = tuple(self._bytes_of.get(b) for b in char.encode("utf-8"))
            if ids and None not in ids:
                symbols.append(ids)  # type: ignore[arg-type]  # None was just ruled out
            elif not (self.fuse_unk and symbols and symbols[-1] is _UNKNOWN):
                symbols.append(_UNKNOWN)
        return symbols

    def _merge(self, chunk: str, *, trace: bool) -> tuple[list, list[list[MergeStep]]]:
        """Merge the lowest-ranked adjacent pair, leftmost first, until none is listed; with
        trace, also each final symbol's merges in the order applied."""
        symbols = self._start(chunk)
        histories: list[list[MergeStep]] = [[] for _ in symbols]
        count = len(symbols)
        after = list(range(1, count + 1))
        before = list(range(-1, count - 1))
        alive = [True] * count
        ranks = self._ranks

        def rank_at(i: int) -> int | None:
            j = after[i]
            if j >= count:
                return None
            return ranks.get((symbols[i], symbols[j]))  # byte and unknown symbols never match

        heap = [(rank, i) for i in range(count - 1) if (rank := rank_at(i)) is not None]
        heapq.heapify(heap)
        while heap:
            rank, i = heapq.heappop(heap)
            if not alive[i] or rank_at(i) != rank:
                continue  # this pair changed since it was queued
            j = after[i]
            left, right = cast(str, symbols[i]), cast(str, symbols[j])  # ranked: token texts
            merged = left + right
            if trace:
                step = MergeStep(_spelled(left), _spelled(right), rank, _spelled(merged))
                histories[i] = [*histories[i], *histories[j], step]
            symbols[i], alive[j] = merged, False
            after[i] = after[j]
            if after[j] < count:
                before[after[j]] = i
            for k in (before[i], i):
                if k >= 0 and (new_rank := rank_at(k)) is not None:
                    heapq.heappush(heap, (new_rank, k))
        kept = [i for i in range(count) if alive[i]]
        return [symbols[i] for i in kept], [histories[i] for i in kept]


# A "▁" that follows another character: where a SentencePiece word starts.
_WORD_START = re.compile(f"(?<=[^{SPACE}])(?={SPACE})")
_JOINS_SPACE = re.compile(f"[^{SPACE}]{SPACE}")


def _spelled(token: str) -> bytes:
    return token.replace(SPACE, " ").encode("utf-8")


def _ranks(merges: Sequence[tuple[str, str]], vocab: Mapping[str, int]) -> dict:
    check_merges(merges, vocab, "error.tokenizer.merge-unknown")
    ranks: dict[tuple[str, str], int] = {}
    for rank, pair in enumerate(merges):
        ranks.setdefault(pair, rank)  # a repeated pair keeps its first rank
    return ranks


def _id_table(
    vocab: Mapping[str, int], specials: Mapping[str, int], byte_fallback: bool
) -> dict[int, bytes]:
    """id -> the bytes it stands for: "▁" as a space, "<0x0A>" as its byte (with
    byte_fallback), special tokens as their text."""
    table: dict[int, bytes] = {}
    for text, token_id in vocab.items():
        match = _BYTE_TOKEN.fullmatch(text) if byte_fallback else None
        table[token_id] = bytes((int(match.group(1), 16),)) if match else _spelled(text)
    for text, token_id in specials.items():
        table[token_id] = text.encode("utf-8")
    if not table:
        raise TokenizerError("error.tokenizer.empty-vocab")
    return table


def merges_from_scores(
    tokens: Sequence[str], scores: Sequence[float], skip: Sequence[str] = ()
) -> list[tuple[str, str]]:
    """The merges a SentencePiece vocabulary implies (a GGUF file lists scores, not merges):
    every way to cut a token into two tokens, the cuts of higher-scored tokens first, as
    transformers rebuilds them from a GGUF file."""
    ids = {token: token_id for token_id, token in enumerate(tokens)}
    skipped = set(skip)
    usable = ids.keys() - skipped if skipped else ids  # the halves a cut may have
    found: list[tuple[str, str, float]] = []
    # a token listed twice counts once, with its last score (a dict of the two lists)
    for token, score in dict(zip(tokens, scores, strict=True)).items():
        if token in skipped:
            continue
        cuts = [
            (left, right, score)
            for k in range(1, len(token))
            if (left := token[:k]) in usable and (right := token[k:]) in usable
        ]
        if len(cuts) > 1:  # (262,144 tokens: most have one cut or none)
            cuts.sort(key=lambda cut: (ids[cut[0]], ids[cut[1]]))
        found.extend(cuts)
    found.sort(key=lambda cut: (cut[2], len(cut[0]), len(cut[1])), reverse=True)
    return [(left, right) for left, right, _ in found]
