"""Traces kept on the server, so the browser can ask for one layer, head or position at a time.

Entries live in the server's one cache (``web.cache``), keyed by (model name, kind, token ids,
...). A prompt whose full trace is small records every probe in one forward pass; a long one
(attention grows with the square of its length) records a light base trace first and each
layer's probes only when that layer is asked for, by running that block alone on the residual
stream the base trace recorded for it (``LanguageModel.trace_layer``).

One forward pass runs at a time (``gate``): on a CPU, parallel passes only slow each other
down. The web routes ask for what they need through the async methods (``obtain``,
``base_trace``, ``layer_trace``): a cached value comes back at once, a missing one is computed
as one job on the server's work queue (``web.work``), which refuses at once what it could not
finish within ``wait_s`` (``limits.Busy``). The sync methods compute in the calling thread,
behind the gate; a job on the queue uses them for the steps inside it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Hashable
from typing import Any

from lmscope.engine.trace import Trace
from lmscope.errors import LmscopeError
from lmscope.web import generation
from lmscope.web.cache import NOT_KEPT, CacheStats, LRUCache
from lmscope.web.limits import Gate, arrival
from lmscope.web.work import Costs, WorkQueue

BASE_PROBES = (
    "hook_embed",
    "hook_pos_embed",
    "blocks.*.hook_resid_pre",
    "blocks.*.hook_resid_post",
    "ln_final.*",
)
PATTERN_PROBES = ("blocks.*.attn.hook_pattern",)  # every layer's attention (q and k, kept)
PREDICTION_TOP_K = 5
# The work queue's group for the traces of new short prompts: queued together (a class pressing
# Run at once), they run as one forward pass that reads the weights once for all of them. Only
# short ones: a pass over a few dozen positions costs about what reading the weights costs, so
# eight 10-token prompts took 0.4 of their time alone on SmolLM2, 32-token ones 0.6; from about
# 45 tokens on the products are already efficient and a batch saved 3-9% (less than its padding
# and the wait of its first prompt are worth)
TRACES = "traces"
BATCH_PROMPT_TOKENS = 40  # prompts up to this long are traced together
BATCH_TOKENS = 256  # at most about this many prompt tokens in one such pass
_MISSING = object()


def full_trace_bytes(config, n_tokens: int) -> int:
    """Bytes of a trace that records every probe (float32), to decide whether to split it."""
    t, d, h = n_tokens, config.n_embd, config.n_head
    per_layer = (
        t * d * 16  # residual stream, LayerNorms, q/k/v/z, attn_out, mlp_out
        + t * h * d  # per-head results
        + 4 * h * t * t  # raw, scaled, masked scores and the pattern
        + 2 * t * config.d_mlp
    )
    return 4 * (config.n_layer * per_layer + 5 * t * d)


def pending_bytes(trace: Trace) -> int:
    """Bytes a trace will gain once views read its on-demand probes (per-head results, scaled
    and masked scores) and predictions: they are kept in the trace, so the budget counts them
    from the start (float32, an upper bound for half-precision models)."""
    c, t = trace.config, len(trace)
    sizes = {"hook_result": t * c.n_head * c.n_embd, "hook_attn_scores_scaled": c.n_head * t * t}
    sizes["hook_attn_scores"] = sizes["hook_attn_scores_scaled"]
    derived = sum(sizes.get(name.rsplit(".", 1)[-1], 0) for name in trace.derived)
    return 4 * derived + 8 * t * (3 * PREDICTION_TOP_K + 2)


class TraceStore:
    def __init__(
        self,
        model,
        *,
        max_bytes: int = 1 << 30,
        max_entries: int = 64,
        wait_s: float | None = None,
        name: str | None = None,
        beside: TraceStore | None = None,
    ):
        """``name``: the model's name in the cache's keys (default: its own; a server holding
        several models names each uniquely). ``beside``: another model's store whose cache,
        gate and work queue this one shares (``lmscope serve --model A --model B``: one CPU,
        so one queue and one forward pass at a time, whichever model it is)."""
        self.model = model
        self.name = name or model.name
        if beside is None:
            self.cache = LRUCache(max_bytes, max_entries)
            # one forward pass at a time (re-entrant: views nest); waits give up after wait_s
            self.gate = Gate(wait_s)
            # the model's work, bounded in expected seconds (see web.work)
            self.work = WorkQueue(wait_s if wait_s is not None else float("inf"), gate=self.gate)
        else:
            self.cache, self.gate, self.work = beside.cache, beside.gate, beside.work
        self.full_limit = self.cache.max_bytes // 4  # a full trace up to this size in one go
        # this model's batch groups on the (maybe shared) queue: its generation steps, its traces
        self.steps_group = (generation.GROUP, self.name)
        self.traces_group = (TRACES, self.name)
        self.work.batchers[self.steps_group] = generation.steps_together(model)
        self.costs = Costs(model)
        self._batch = threading.local()  # traces a worker's batch made for its jobs (.traces)
        if hasattr(model, "trace_many"):
            self.work.batchers[self.traces_group] = self._traces_together
            self.work.batch_units[self.traces_group] = self.costs.forward(
                BATCH_TOKENS
            ) + self.costs.logits(BATCH_TOKENS)
        # a long prompt's base trace also keeps the keys and values generation starts from
        self.base_probes = BASE_PROBES + tuple(getattr(model, "cache_probes", ()))

    def remember(
        self, key: tuple[Hashable, ...], compute: Callable[[], tuple[Any, int]], lock=None
    ) -> tuple[Any, bool]:
        """(the value for ``key``, whether it was cached): ``key`` starts with what kind of
        value it is; ``compute`` runs behind the gate (or ``lock``) when it is missing and
        returns (value, size in bytes)."""
        return self.cache.cached((self.name, *key), compute, lock or self.gate)

    def keep(self, key: tuple[Hashable, ...], compute: Callable[[], tuple[Any, int]]):
        """``remember`` without the gate, for values that need no model (a view's parts): two
        requests at once may both compute it."""
        return self.cache.cached((self.name, *key), compute, lock=None)

    async def obtain(
        self,
        key: tuple[Hashable, ...],
        units: float,
        compute: Callable[[], tuple[Any, int]],
        *,
        queue: WorkQueue | None = None,
        lock=None,
        traces: tuple[int, ...] | None = None,
    ) -> tuple[Any, bool]:
        """``remember`` for a request: a cached value at once, else ``compute`` as one job of
        ``units`` on the work queue (or ``queue``, behind ``lock``), shared by identical
        requests (``limits.Busy`` when the queue is too long). ``traces``: the prompt whose
        trace ``compute`` starts with, which may then come from one pass with other queued
        new prompts' (``traces_together``)."""
        value = self.cache.hit((self.name, *key), _MISSING)
        if value is not _MISSING:
            return value, True
        work = queue if queue is not None else self.work
        full = (self.name, *key)

        def compute_and_keep():
            return self.remember(key, compute, lock)

        options = {}
        if traces is not None and self._batchable(traces):
            options = {"together": self.traces_group, "payload": traces}
        return await work.run(full, units, compute_and_keep, arrival(), **options)

    def stats(self) -> CacheStats:
        return self.cache.stats()

    # --- traces -------------------------------------------------------------------------------
    def is_full(self, ids: tuple[int, ...]) -> bool:
        return full_trace_bytes(self.model.config, len(ids)) <= self.full_limit

    def _trace(self, ids, **kwargs) -> tuple[Trace, int]:
        trace = self.model.trace(list(ids), top_k=PREDICTION_TOP_K, **kwargs)
        return trace, trace.nbytes() + pending_bytes(trace)

    def _base_job(self, ids: tuple[int, ...]):
        """(cache key, compute) of the base trace: the full one when it is small enough."""
        if self.is_full(ids):
            return ("full", ids), lambda: self._given_or_traced(ids)
        return ("base", ids), lambda: self._trace(ids, names=self.base_probes)

    def _given_or_traced(self, ids: tuple[int, ...]) -> tuple[Trace, int]:
        """The full trace of ``ids``: the one this worker's batch traced with others, or a
        pass of its own."""
        trace = getattr(self._batch, "traces", {}).pop(ids, None)
        if trace is None:
            return self._trace(ids)
        return trace, trace.nbytes() + pending_bytes(trace)

    def _layer_job(self, ids: tuple[int, ...], layer: int):
        """(cache key, compute) of block ``layer``'s probes: the full trace when it is small
        enough, else that block run alone on the input the base trace recorded for it."""
        if self.is_full(ids):
            return self._base_job(ids)

        def compute():
            trace = self.model.trace_layer(self.base(ids)[0], layer)
            size = trace.nbytes() + pending_bytes(trace)
            # one block runs again in 1/n_layer of a pass; a big one is not kept, so it cannot
            # push out the base it runs on (a whole pass) or other prompts' traces
            return trace, size if size <= self.full_limit else NOT_KEPT

        return ("layer", ids, layer), compute

    def _patterns_job(self, ids: tuple[int, ...]):
        """Every layer's attention pattern from one forward pass (not one pass per layer)."""
        if self.is_full(ids):
            return self._base_job(ids)
        return ("patterns", ids), lambda: self._trace(ids, names=PATTERN_PROBES)

    def patterns(self, ids: tuple[int, ...]) -> Trace:
        """A trace holding the attention pattern of every layer."""
        return self.remember(*self._patterns_job(ids))[0]

    def base(self, ids: tuple[int, ...]) -> tuple[Trace, bool]:
        """A trace with embeddings, the residual stream at block edges, the final LayerNorm
        and per-position predictions (the full trace when it is small enough)."""
        return self.remember(*self._base_job(ids))

    def layer(self, ids: tuple[int, ...], layer: int) -> Trace:
        """A trace holding every probe of block ``layer``."""
        return self.remember(*self._layer_job(ids, layer))[0]

    # --- the same for a request: cached, or one job on the work queue ---------------------------
    def cached(self, key: tuple[Hashable, ...]):
        """The value under ``key``, or None (not counted as a hit or a miss)."""
        return self.cache.get((self.name, *key))

    def kept_trace(self, ids: tuple[int, ...]) -> Trace | None:
        """The trace of ``ids`` the cache holds (the full one, or the base one), or None."""
        if not hasattr(self.model, "start_from"):  # a model without traces (a char-RNN)
            return None
        key, _ = self._base_job(ids)
        return self.cached(key)

    def trace_units(
        self, ids: tuple[int, ...], layer: int | None = None, *, patterns: bool = False
    ) -> float:
        """Work units of the base trace (or of ``layer``'s, or of every layer's attention
        patterns), 0 when it is cached."""
        if patterns:
            key, _ = self._patterns_job(ids)
        else:
            key, _ = self._base_job(ids) if layer is None else self._layer_job(ids, layer)
        if self.cached(key) is not None:
            return 0.0
        if key[0] != "layer":
            return self.costs.forward(len(ids))
        block = self.costs.forward(len(ids)) / self.costs.n_layer  # one block, from the base
        return block + self.trace_units(ids)

    def calibrate(self, n_tokens: int = 64) -> None:
        """Start the work queue's rate from a real trace with its predictions (a prompt of
        ``n_tokens``), so the first burst is judged by this machine's speed."""
        n = min(n_tokens, self.model.config.vocab_size, self.model.capabilities.context or n_tokens)
        ids = tuple(range(n))
        units = self.costs.forward(n) + self.costs.logits(n)
        with contextlib.suppress(LmscopeError):  # a model that cannot trace these: the prior
            self.work.calibrate(units, lambda: self._trace(ids)[0].predictions)

    def _batchable(self, ids: tuple[int, ...]) -> bool:
        """Whether the trace of ``ids`` may come from a pass shared with other new prompts: a
        short prompt, traced in full, not kept already."""
        short = len(ids) <= BATCH_PROMPT_TOKENS and self.is_full(ids)
        return short and hasattr(self.model, "trace_many") and self.kept_trace(ids) is None

    def _traces_together(self, jobs) -> None:
        """The work queue's batcher for ``TRACES``: the full traces (with predictions) of the
        batch's new prompts from one ``model.trace_many`` pass, for each job to take its own."""
        wanted: list[tuple[int, ...]] = []
        for job in jobs:
            ids = job.payload
            if ids is not None and ids not in wanted and self._batchable(ids):
                wanted.append(ids)
        self._batch.traces = {}  # an earlier batch's leftovers (a job that was cached) go
        if len(wanted) < 2:
            return
        traces = self.model.trace_many(wanted, top_k=PREDICTION_TOP_K)
        # handed to the jobs, which run next on this thread and keep them in the cache one by
        # one (put there now, a batch bigger than the cache would evict its own first traces)
        self._batch.traces = dict(zip(wanted, traces, strict=True))

    def prediction_units(self, ids: tuple[int, ...]) -> float:
        """Work units of the base trace (when missing) and its per-position predictions."""
        return self.trace_units(ids) + self.costs.logits(len(ids))

    async def base_trace(self, ids: tuple[int, ...]) -> Trace:
        key, compute = self._base_job(ids)
        return (await self.obtain(key, self.trace_units(ids), compute))[0]

    async def layer_trace(self, ids: tuple[int, ...], layer: int) -> Trace:
        key, compute = self._layer_job(ids, layer)
        return (await self.obtain(key, self.trace_units(ids, layer), compute))[0]
