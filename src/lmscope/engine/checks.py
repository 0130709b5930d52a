"""The one check of what a person asked to see: a layer, a head, a position, a unit. Each
refusal is one readable line naming what exists. The CLI and every web route use these;
token ids are checked by the model (``check_ids``) where they enter."""

from __future__ import annotations

import numbers

from lmscope.errors import InvalidInputError

# what an index counts -> (its message when it is no whole number, when it does not exist)
_KINDS = {
    "layer": ("error.check.layer-type", "error.check.no-layer"),
    "head": ("error.check.head-type", "error.check.no-head"),
    "position": ("error.check.position-type", "error.check.no-position"),
    "unit": ("error.check.unit-type", "error.check.no-unit"),
    "width": ("error.check.width-type", "error.check.no-width"),
}


def index(value: int, count: int, kind: str) -> int:
    """``value`` when it is a whole number in 0..count-1; else a readable error naming what
    ``kind`` of index it is (a layer, a head, a position)."""
    not_whole, missing = _KINDS[kind]
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInputError(not_whole, got=f"{value!r:.40}")
    if not 0 <= value < count:
        raise InvalidInputError(missing, value=str(value), last=str(count - 1))
    return value


def at_least_one(value: int, what: str) -> int:
    """``value`` when it is a whole number >= 1 (a count such as k, not a bool); else one line."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise InvalidInputError(
            "error.value.integer-at-least", name=what, low=1, got=f"{value!r:.40}"
        )
    return int(value)


def layer(config, value: int) -> int:
    return index(value, config.n_layer, "layer")


def head(config, value: int) -> int:
    return index(value, config.n_head, "head")


def position(n_tokens: int, value: int | None) -> int:
    """A position in a sequence of ``n_tokens``: None is the last, negatives count back."""
    if value is None:
        return n_tokens - 1
    if isinstance(value, int) and not isinstance(value, bool) and -n_tokens <= value < 0:
        return value + n_tokens
    return index(value, n_tokens, "position")
