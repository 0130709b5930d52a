"""What every route is served with, through one FastAPI dependency (``Serving``): the model,
its trace store (which holds the server's one cache, the model gate and the work queue), the
models a request may pick by name, and the lab's results. ``select`` is the one check of the
token ids, position, layer and head a request asks for.

A server may hold several models to explain (``lmscope serve --model A --model B``): each has
its own ``Served`` (model, trace store, compare allowlist), all sharing one cache, one model
gate and one work queue (one CPU: two models never run at once), the char models, the lab and
the views pool. ``Serving`` picks one by the request's ``?model=`` (its served name; absent:
the first); a name the server does not hold is refused with the served names, and nothing is
ever loaded for a request. ``ServingShared`` is for the routes that explain no Transformer
(/rnn's char models, /why's results): they take no ``?model=``.

The routes are coroutines: the model's work runs on the store's work queue (``web.work``),
everything else that takes more than a moment (checking 100,000 ids, building a view from a
cached trace) on the small ``views`` pool, so the event loop and the ordinary thread pool
stay free for the cheap requests whatever the model is doing."""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Annotated, Any

import torch
from fastapi import Depends, Query, Request

from lmscope.engine import checks
from lmscope.engine.trace import Trace
from lmscope.errors import InvalidInputError
from lmscope.explain.logits import position_logits
from lmscope.web.lab import LabResults
from lmscope.web.on_disk import OnDisk
from lmscope.web.store import TraceStore
from lmscope.web.work import WorkQueue

VIEW_THREADS = 4  # threads that build views from computed values (no model work)
INLINE_IDS = 4096  # ids checked on the event loop itself (about 2 ms at most)


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
    rnn_work: WorkQueue | None = None  # the char models' own queue (default: the store's limit)
    views: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(VIEW_THREADS, thread_name_prefix="lmscope-view")
    )
    name: str = ""  # its name among the served models (default: the model's own)
    spec: str | None = None  # what --model named to open it (None: not known)
    # every model this server explains by name, the default first: one dict, shared by them all
    models: dict[str, Served] = field(default_factory=dict)
    on_disk: OnDisk = field(default_factory=OnDisk)  # the models on this machine (shared)

    def __post_init__(self):
        if self.rnn_work is None:
            self.rnn_work = WorkQueue(self.store.work.limit_s, name="char-model")
        self.name = self.name or self.model.name
        self.models.setdefault(self.name, self)

    def beside(self, model, store: TraceStore, name: str, spec: str | None = None) -> Served:
        """Another model to explain on this server, sharing everything but the model, its
        trace store and its compare allowlist (``compare_all`` sets that)."""
        other = Served(
            model, store, {}, self.rnn, self.lab, self.rnn_lock, self.rnn_work, self.views
        )
        other.name, other.spec, other.models, other.on_disk = name, spec, self.models, self.on_disk
        self.models[name] = other
        return other

    def choose(self, name: str | None) -> Served:
        """The served model called ``name`` (None: the default, this one); one line naming
        the served models when there is none of that name."""
        if name is None:
            return self
        found = self.models.get(name)
        if found is None:
            choices = ", ".join(repr(n) for n in self.models)
            raise InvalidInputError("error.web.model-not-served", name=repr(name), choices=choices)
        return found

    async def view(self, fn: Callable, *args):
        """``fn(*args)`` on the views pool: work that reads what is computed, never the model
        gate, off the event loop."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.views, functools.partial(fn, *args))

    def ids(self, ids) -> tuple[int, ...]:
        return tuple(self.model.check_ids(ids))

    async def checked(self, request) -> Selection:
        """``select``: on the event loop for a short prompt (a hop to a thread costs more
        than the check while the model's thread holds the interpreter), else on the views
        pool."""
        if len(request.ids) <= INLINE_IDS:
            return self.select(request)
        return await self.view(self.select, request)

    def prompt_ids(self, request) -> tuple[int, ...]:
        """The ids of a request's ``text`` or ``ids``, checked."""
        if request.text is not None:
            return tuple(self.model.encode(request.text))
        return self.ids(request.ids)

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

    async def logits_at(self, ids: tuple[int, ...], position: int) -> tuple[Trace, torch.Tensor]:
        """The prompt's trace and the full logits after ``position`` (an earlier position's
        are one product of its final LayerNorm output with the unembedding: a view's work)."""
        trace = await self.store.base_trace(ids)
        return trace, await self.view(position_logits, self.model, trace, position)


ModelName = Annotated[
    str | None,
    Query(
        max_length=1000,
        description="which of the served models (lmscope serve --model A --model B) to "
        "explain, by its name in GET /api/models; absent: the first",
    ),
]


async def serving(request: Request, model: ModelName = None) -> Served:  # async: no thread
    return request.app.state.served.choose(model)


async def serving_shared(request: Request) -> Served:
    return request.app.state.served


Serving = Annotated[Served, Depends(serving)]
# what every model shares (the char models, the lab): for the routes that explain none
ServingShared = Annotated[Served, Depends(serving_shared)]


def compare_all(served: Served, compare: Mapping[str, Any]) -> None:
    """Each served model's compare allowlist: the other served models (by their served
    names), then the ``--compare`` models (a name already taken gets " (2)")."""
    for one in served.models.values():
        offered = {name: s.model for name, s in served.models.items() if s is not one}
        for name, model in compare.items():
            label, n = name, 1
            while label in offered:
                n += 1
                label = f"{name} ({n})"
            offered[label] = model
        one.compare = offered


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
    (a catalog id) says how to offer one, ``unknown`` (a catalog id with ``name`` and
    ``choices``) that this one is not."""
    if not offered:
        raise InvalidInputError(none)
    if name is None:
        name = next(iter(offered))
    if name not in offered:
        choices = ", ".join(repr(n) for n in offered)
        raise InvalidInputError(unknown, name=repr(name), choices=choices)
    return name, offered[name]
