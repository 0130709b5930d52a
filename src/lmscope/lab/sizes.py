"""Models of equal size: the lab compares architectures, not parameter counts, so each
recurrent model gets the hidden size whose parameter count is nearest a GPT's."""

from __future__ import annotations

from lmscope.models.rnn import param_count


def matched_hidden(cell: str, vocab: int, layers: int, target: int, embed: int = 0) -> int:
    """The hidden size whose parameter count is nearest ``target`` (counts grow with it)."""

    def count(hidden: int) -> int:
        return param_count(cell, vocab, hidden, layers, embed)

    low, high = 1, 1
    while count(high) < target:
        high *= 2
    while high - low > 1:  # bisect for the first size at or above the target
        mid = (low + high) // 2
        if count(mid) < target:
            low = mid
        else:
            high = mid
    return min((low, high), key=lambda h: abs(count(h) - target))
