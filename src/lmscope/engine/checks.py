"""The one check of what a person asked to see: a layer, a head, a position, a unit. Each
refusal is one readable line naming what exists. The CLI and every web route use these;
token ids are checked by the model (``check_ids``) where they enter."""

from __future__ import annotations

import numbers

from lmscope.errors import InvalidInputError


def index(value: int, count: int, what: str, where: str) -> int:
    """``value`` when it is a whole number in 0..count-1; else a readable error."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInputError(f"{what} must be a whole number, got {value!r:.40}")
    if not 0 <= value < count:
        raise InvalidInputError(f"{what} {value} does not exist; {where} 0..{count - 1}")
    return value


def at_least_one(value: int, what: str) -> int:
    """``value`` when it is a whole number >= 1 (a count such as k, not a bool); else one line."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise InvalidInputError(f"{what} must be an integer >= 1, got {value!r:.40}")
    return int(value)


def layer(config, value: int) -> int:
    return index(value, config.n_layer, "layer", "this model has layers")


def head(config, value: int) -> int:
    return index(value, config.n_head, "head", "this model has heads")


def position(n_tokens: int, value: int | None) -> int:
    """A position in a sequence of ``n_tokens``: None is the last, negatives count back."""
    if value is None:
        return n_tokens - 1
    if isinstance(value, int) and not isinstance(value, bool) and -n_tokens <= value < 0:
        return value + n_tokens
    return index(value, n_tokens, "position", "the sequence has positions")
