"""When tiktoken's BPE gives the same tokens as a merges list, and the ranks that make it so.

tiktoken does not read a merges list. It merges the adjacent pair whose joined bytes have the
lowest rank, and takes a pre-token found whole in its table without merging. The reference
(Hugging Face's rule) merges only listed pairs, by their place in the list. The two agree when

* every token is made by one merge, each merge only uses tokens made before it, and running
  the listed merges on a token's own bytes gives back that token (then no unlisted split of a
  token can ever meet: GPT-2, SmolLM, Qwen2 and vocabularies trained with `tokenizers`); or
* ignore_merges is on and the merges list every split of every token into two tokens, grouped
  by the token they make, in rank order (Llama-3's files, converted from tiktoken's ranks).

Checking the first kind does not run BPE on every token: while a token's two halves are built,
it follows the last part of the left half and the first part of the right half, and fails if
the pair they form is listed with a rank the halves' own merges have not yet reached.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

_NEVER = float("inf")

# Lead bytes that UTF-8 text never holds: a vocabulary lacking them loses nothing.
_NOT_IN_UTF8 = frozenset({0xC0, 0xC1, *range(0xF5, 0x100)})


@dataclass(frozen=True)
class FastRanks:
    """What tiktoken needs: `ranks` for its mergeable_ranks, and `ids` (rank -> token id)
    when the ranks are not the ids themselves. `unencodable` lists the bytes UTF-8 text may
    hold that the vocabulary lacks; text with them must go to the reference."""

    ranks: dict[bytes, int]
    ids: list[int] | None
    unencodable: bytes


def fast_ranks(
    vocab: Mapping[bytes, int],
    merges: Sequence[tuple[bytes, bytes]],
    *,
    ignore_merges: bool,
    vocab_size: int,
) -> FastRanks | None:
    """tiktoken ranks giving the same tokens as the reference BPE, or None if none are known.

    vocab_size bounds every id in use (special tokens included): stand-in ranks for missing
    bytes start there."""
    pair_ranks = {pair: rank for rank, pair in enumerate(merges)}
    if len(pair_ranks) < len(merges):
        return None  # a pair listed twice
    made_at: dict[bytes, int] = {}
    for rank, (left, right) in enumerate(merges):
        made_at.setdefault(left + right, rank)
    singles = [bytes((b,)) for b in range(256)]
    known = {single for single in singles if single in vocab} | set(made_at)
    one_merge_each = len(made_at) == len(merges)
    if not (
        (one_merge_each and _merges_rebuild_tokens(vocab, merges, pair_ranks))
        or (ignore_merges and _complete_and_grouped(merges, made_at, pair_ranks, known))
    ):
        return None
    order = dict(made_at)
    orphans = [raw for raw in vocab if len(raw) > 1 and raw not in made_at]
    if ignore_merges and orphans:
        # Taken whole from the vocabulary, never merged into: safe only if no two tokens join
        # into one (tiktoken would merge them where the reference does not).
        if any(_splits_into(raw, known) for raw in orphans):
            return None
        order.update({raw: len(merges) + i for i, raw in enumerate(orphans)})
    missing = [single for single in singles if single not in vocab]
    unencodable = bytes(b for (b,) in missing if b not in _NOT_IN_UTF8)
    return _number(vocab, singles, order, missing, unencodable, vocab_size)


def _merges_rebuild_tokens(
    vocab: Mapping[bytes, int],
    merges: Sequence[tuple[bytes, bytes]],
    pair_ranks: Mapping[tuple[bytes, bytes], int],
) -> bool:
    """Each merge only joins tokens made before it, and running the merges on each token's
    bytes ends in that token (one merge per token)."""
    # For every token, how its last (and first) part changes while BPE builds it: the parts,
    # and the ranks of the merges that made them (bytes are there from the start: -1), ending
    # with the token itself. A trailing "never" rank saves bounds checks below.
    last: dict[bytes, tuple[tuple[bytes, ...], tuple[float, ...]]] = {}
    first: dict[bytes, tuple[tuple[bytes, ...], tuple[float, ...]]] = {}
    for b in range(256):
        single = bytes((b,))
        if single in vocab:
            last[single] = first[single] = ((single,), (-1, _NEVER))
    get_rank = pair_ranks.get
    for rank, (left, right) in enumerate(merges):
        if left not in last or right not in first:
            return False  # a half that no earlier merge made
        (ends, end_ranks), (starts, start_ranks) = last[left], first[right]
        i = j = 0
        while True:
            next_left, next_right = end_ranks[i + 1], start_ranks[j + 1]
            change = next_left if next_left < next_right else next_right
            if change == _NEVER:
                break  # the halves are whole: (left, right) itself merges next
            across = get_rank((ends[i], starts[j]))
            # BPE would merge across the halves first, or (the same pair due in the left half:
            # "-" "-" | "-" "-") in the same left-to-right pass, unless the left half's own
            # occurrence takes its last part first.
            if across is not None and (
                across < change or (across == change and next_left != change)
            ):
                return False
            if next_left == change:
                i += 1
            if next_right == change:
                j += 1
        token = left + right
        parts, ranks = last[right]
        last[token] = ((*parts, token), (*ranks[:-1], rank, _NEVER))
        parts, ranks = first[left]
        first[token] = ((*parts, token), (*ranks[:-1], rank, _NEVER))
    return True


def _complete_and_grouped(
    merges: Sequence[tuple[bytes, bytes]],
    made_at: Mapping[bytes, int],
    pair_ranks: Mapping[tuple[bytes, bytes], int],
    known: set[bytes],
) -> bool:
    """Merges grouped by the token they make, in rank order, listing every split of it into
    two tokens: then the lowest listed pair is the pair whose joined token ranks lowest."""
    previous = -1
    for left, right in merges:
        group = made_at[left + right]
        if group < previous:
            return False
        previous = group
    for token in made_at:
        for cut in range(1, len(token)):
            pair = (token[:cut], token[cut:])
            if pair not in pair_ranks and pair[0] in known and pair[1] in known:
                return False
    return True


def _splits_into(raw: bytes, known: set[bytes]) -> bool:
    return any(raw[:cut] in known and raw[cut:] in known for cut in range(1, len(raw)))


def _number(
    vocab: Mapping[bytes, int],
    singles: list[bytes],
    order: dict[bytes, int],
    missing: list[bytes],
    unencodable: bytes,
    vocab_size: int,
) -> FastRanks:
    """Use the ids as ranks when they already follow merge order, else number afresh."""
    merged = sorted(order, key=order.__getitem__)
    ids = [vocab[raw] for raw in merged]
    present = [single for single in singles if single in vocab]
    if all(a < b for a, b in pairwise(ids)):
        ranks = {raw: vocab[raw] for raw in (*present, *merged)}
        ranks.update({single: vocab_size + i for i, single in enumerate(missing)})
        return FastRanks(ranks, None, unencodable)
    # Bytes first, then the merged tokens in merge order; missing bytes map to no id (-1).
    table = [*present, *merged, *missing]
    ranks = {raw: rank for rank, raw in enumerate(table)}
    rank_ids = [vocab.get(raw, -1) for raw in table]
    return FastRanks(ranks, rank_ids, unencodable)
