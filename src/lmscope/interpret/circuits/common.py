"""What the three circuit experiments share: the model check, one-token answers, the token
labels, and the grid of values their pictures and ``--json`` outputs are made of."""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch

from lmscope.errors import InvalidInputError


@dataclass
class Grid:
    """Values in rows and columns (layers x positions, layers x heads), as ``--json`` shows
    them: ``{"rows": [...], "cols": [...], "values": [[...]]}``."""

    rows: list
    cols: list
    values: list[list[float]]

    def to_json(self) -> dict:
        return {"rows": list(self.rows), "cols": list(self.cols), "values": self.values}


def transformer(model):
    """The model, when it has attention heads and MLPs (a Transformer); else one line."""
    capabilities = getattr(model, "capabilities", None)
    if capabilities is None or not capabilities.attention:
        name = getattr(model, "name", type(model).__name__)
        raise InvalidInputError("error.circuits.no-heads", model=name)
    return model


def token_id(model, token: int | str, what: str) -> int:
    """A token given as its id or as text that is exactly one token (``" Paris"``)."""
    if isinstance(token, numbers.Integral) and not isinstance(token, bool):
        (found,) = model.check_ids([int(token)])
        return found
    if not isinstance(token, str) or not token:
        raise InvalidInputError("error.circuits.token-kind", what=what, value=repr(token)[:40])
    tokenizer = model.tokenizer
    if tokenizer is None:
        raise InvalidInputError("error.circuits.token-needs-id", what=what, token=repr(token))
    ids = tokenizer.encode(token)
    if len(ids) != 1:
        raise InvalidInputError(
            "error.circuits.not-one-token",
            what=what,
            token=repr(token),
            n=len(ids),
            pieces=listed(pieces(model, ids)),
        )
    return ids[0]


def answer_ids(model, answer, other, names: tuple[str, str]) -> tuple[int, int | None]:
    """Two answers as token ids (``other`` may be None: no second answer), refused when they
    are the same token: a difference of a logit with itself says nothing."""
    answer_id = token_id(model, answer, names[0])
    other_id = None if other is None else token_id(model, other, names[1])
    if other_id == answer_id:
        raise InvalidInputError(
            "error.circuits.same-answer", token=listed(pieces(model, [answer_id]))
        )
    return answer_id, other_id


def piece(model, token: int) -> str:
    """A token's readable text, or its id for a model without a tokenizer."""
    tokenizer = model.tokenizer
    return tokenizer.piece(token).text if tokenizer is not None else str(token)


def pieces(model, ids: Sequence[int]) -> list[str]:
    return [piece(model, i) for i in ids]


def listed(texts: Sequence[str], most: int = 12) -> str:
    """Tokens as Python writes them (their spaces seen), for an error line: at most ``most``."""
    shown = ", ".join(repr(t) for t in texts[:most])
    return shown + (", …" if len(texts) > most else "")


def checked_layers(n_layer: int, layers) -> list[int]:
    """Every layer (None), or the layers asked for (one or several), each one of 0..n_layer-1."""
    if layers is None:
        return list(range(n_layer))
    if isinstance(layers, numbers.Integral) and not isinstance(layers, bool):
        layers = [layers]
    if isinstance(layers, str) or not isinstance(layers, Iterable):
        raise InvalidInputError("error.circuits.layer-kind", value=repr(layers)[:40])
    return sorted({checked_layer(n_layer, layer) for layer in layers})


def checked_layer(n_layer: int, layer) -> int:
    return _checked_index(
        n_layer, layer, "layer", "error.circuits.layer-kind", "error.circuits.no-layer"
    )


def checked_head(n_head: int, head) -> int:
    return _checked_index(
        n_head, head, "head", "error.circuits.head-kind", "error.circuits.no-head"
    )


def _checked_index(n: int, value, name: str, kind_id: str, missing_id: str) -> int:
    """``value`` as an int in 0..n-1; else one line (not an integer, or out of range)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidInputError(kind_id, value=repr(value)[:40])
    if not 0 <= int(value) < n:
        raise InvalidInputError(missing_id, **{name: int(value)}, last=n - 1)
    return int(value)


def unembedding(net) -> torch.Tensor:
    """The unembedding matrix [vocab, d_model]: a separate lm_head, or the tied embedding."""
    head = getattr(net, "lm_head", None)
    return net.wte.weight if head is None else head.weight


def floats(values) -> list:
    """A tensor as (nested) lists of plain floats, for JSON."""
    return values.detach().float().tolist()
