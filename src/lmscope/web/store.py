"""Traces kept on the server, so the browser can ask for one layer, head or position at a time.

Entries are keyed by (model name, token ids) and evicted least-recently-used once their total
size passes a byte budget. A prompt whose full trace is small records every probe in one
forward pass; a long one (attention grows with the square of its length) records a light base
trace first and each layer's probes only when that layer is asked for.

One forward pass runs at a time (``gate``): on a CPU, parallel passes only slow each other
down. A request that waited for the gate looks in the cache again, so two requests for the same
new prompt cost one pass. A request that waits longer than ``wait_s`` gives up (``limits.Busy``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from lmscope.engine.trace import Trace
from lmscope.web.limits import Gate

BASE_PROBES = (
    "hook_embed",
    "hook_pos_embed",
    "blocks.*.hook_resid_pre",
    "blocks.*.hook_resid_post",
    "ln_final.*",
)
PREDICTION_TOP_K = 5


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
    ):
        self.model = model
        self.max_bytes, self.max_entries = max_bytes, max_entries
        self.full_limit = max_bytes // 4  # a full trace up to this size is recorded in one go
        # one forward pass at a time (re-entrant: views nest); waits give up after wait_s
        self.gate = Gate(wait_s)
        self._lock = threading.Lock()  # guards the entries
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self.hits = self.misses = 0

    # --- the LRU ----------------------------------------------------------------------------
    def _get(self, key: Hashable):
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                return None
            self._entries.move_to_end(key)
            return found[0]

    def _put(self, key: Hashable, value, nbytes: int):
        if nbytes > self.max_bytes:
            return  # too big to keep: answer this request and forget it
        with self._lock:
            if key in self._entries:
                self._bytes -= self._entries.pop(key)[1]
            self._entries[key] = (value, nbytes)
            self._bytes += nbytes
            while self._bytes > self.max_bytes or len(self._entries) > self.max_entries:
                _, (_, size) = self._entries.popitem(last=False)
                self._bytes -= size

    def cached(self, key: Hashable, compute: Callable[[], tuple[Any, int]]) -> tuple[Any, bool]:
        """The value under ``key``, computing it (behind the gate) when missing."""
        value = self._get(key)
        if value is not None:
            self.hits += 1
            return value, True
        with self.gate:
            value = self._get(key)  # filled while this request waited for the gate?
            if value is not None:
                self.hits += 1
                return value, True
            self.misses += 1
            value, nbytes = compute()
        self._put(key, value, nbytes)
        return value, False

    def stats(self) -> dict:
        with self._lock:
            return {
                "entries": len(self._entries),
                "bytes": self._bytes,
                "max_bytes": self.max_bytes,
                "hits": self.hits,
                "misses": self.misses,
            }

    def clear(self):
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    # --- traces -------------------------------------------------------------------------------
    def _key(self, kind: str, ids: tuple[int, ...], *extra) -> tuple:
        return (self.model.name, kind, ids, *extra)

    def is_full(self, ids: tuple[int, ...]) -> bool:
        return full_trace_bytes(self.model.config, len(ids)) <= self.full_limit

    def _trace(self, ids, **kwargs) -> tuple[Trace, int]:
        trace = self.model.trace(list(ids), top_k=PREDICTION_TOP_K, **kwargs)
        return trace, trace.nbytes() + pending_bytes(trace)

    def base(self, ids: tuple[int, ...]) -> tuple[Trace, bool]:
        """A trace with embeddings, the residual stream at block edges, the final LayerNorm
        and per-position predictions (the full trace when it is small enough)."""
        if self.is_full(ids):
            return self.cached(self._key("full", ids), lambda: self._trace(ids))
        return self.cached(self._key("base", ids), lambda: self._trace(ids, names=BASE_PROBES))

    def layer(self, ids: tuple[int, ...], layer: int) -> Trace:
        """A trace holding every probe of block ``layer``."""
        if self.is_full(ids):
            return self.base(ids)[0]
        key = self._key("layer", ids, layer)
        trace, _ = self.cached(
            key, lambda: self._trace(ids, names=[f"blocks.{layer}.*"], layers=[layer])
        )
        return trace
