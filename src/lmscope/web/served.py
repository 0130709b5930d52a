"""What every route is served with, through one FastAPI dependency (``Serving``): the model,
its trace store (which holds the server's one cache and the model gate), the models a request
may pick by name, and the lab's results. ``select`` is the one check of the token ids,
position, layer and head a request asks for."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any

import torch
from fastapi import Depends, Request

from lmscope.engine import checks
from lmscope.engine.trace import Trace
from lmscope.errors import InvalidInputError
from lmscope.explain.logits import position_logits
from lmscope.web.lab import LabResults
from lmscope.web.store import TraceStore


@dataclass(frozen=True)
class Selection:
    """Checked token ids and the position, layer and head (None: not asked) to show."""

    ids: tuple[int, ...]
    position: int
    layer: int | None = None
    head: int | None = None


@dataclass
class Served:
    model: Any
    store: TraceStore
    compare: dict[str, Any] = field(default_factory=dict)  # allowlist of lmscope serve --compare
    rnn: dict[str, Any] = field(default_factory=dict)  # char models of lmscope serve --rnn
    lab: LabResults = field(default_factory=LabResults)
    rnn_lock: threading.Lock = field(default_factory=threading.Lock)  # one RNN run at a time

    def ids(self, ids) -> tuple[int, ...]:
        return tuple(self.model.check_ids(ids))

    def select(self, request) -> Selection:
        """The request's ``ids`` and, where it has them, ``position`` (None: the last),
        ``layer`` and ``head``, checked against the model: one readable line when wrong."""
        ids = self.ids(request.ids)
        c = self.model.config
        layer, head = getattr(request, "layer", None), getattr(request, "head", None)
        return Selection(
            ids,
            checks.position(len(ids), getattr(request, "position", None)),
            None if layer is None else checks.layer(c, layer),
            None if head is None else checks.head(c, head),
        )

    def logits_at(self, ids: tuple[int, ...], position: int) -> tuple[Trace, torch.Tensor]:
        """The prompt's trace and the full logits after ``position`` (behind the gate: an
        earlier position's logits are computed from its final LayerNorm output)."""
        trace, _ = self.store.base(ids)
        with self.store.gate:
            return trace, position_logits(self.model, trace, position)


def serving(request: Request) -> Served:
    return request.app.state.served


Serving = Annotated[Served, Depends(serving)]


def named(models: Iterable) -> dict[str, Any]:
    """Name -> model; a repeated name gets " (2)", " (3)"..."""
    out: dict[str, Any] = {}
    for m in models:
        name = getattr(m, "name", None) or "model"
        label, n = name, 1
        while label in out:
            n += 1
            label = f"{name} ({n})"
        out[label] = m
    return out


def pick(offered: Mapping[str, Any], name: str | None, *, none: str, unknown: str):
    """(name, model) of a model the server was started with; None picks the first. ``none``
    says how to offer one, ``unknown`` (after "model 'x' is") that this one is not."""
    if not offered:
        raise InvalidInputError(none)
    if name is None:
        name = next(iter(offered))
    if name not in offered:
        choices = ", ".join(repr(n) for n in offered)
        raise InvalidInputError(f"model {name!r} is {unknown}; choose one of {choices}")
    return name, offered[name]
