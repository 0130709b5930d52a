"""Traces kept on the server, so the browser can ask for one layer, head or position at a time.

Entries live in the server's one cache (``web.cache``), keyed by (model name, kind, token ids,
...). A prompt whose full trace is small records every probe in one forward pass; a long one
(attention grows with the square of its length) records a light base trace first and each
layer's probes only when that layer is asked for.

One forward pass runs at a time (``gate``): on a CPU, parallel passes only slow each other
down. A request that waits longer than ``wait_s`` for it gives up (``limits.Busy``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from lmscope.engine.trace import Trace
from lmscope.web.cache import CacheStats, LRUCache
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
        self.cache = LRUCache(max_bytes, max_entries)
        self.full_limit = max_bytes // 4  # a full trace up to this size is recorded in one go
        # one forward pass at a time (re-entrant: views nest); waits give up after wait_s
        self.gate = Gate(wait_s)

    def remember(
        self, key: tuple[Hashable, ...], compute: Callable[[], tuple[Any, int]], lock=None
    ) -> tuple[Any, bool]:
        """(the value for ``key``, whether it was cached): ``key`` starts with what kind of
        value it is; ``compute`` runs behind the gate (or ``lock``) when it is missing and
        returns (value, size in bytes)."""
        return self.cache.cached((self.model.name, *key), compute, lock or self.gate)

    def stats(self) -> CacheStats:
        return self.cache.stats()

    # --- traces -------------------------------------------------------------------------------
    def is_full(self, ids: tuple[int, ...]) -> bool:
        return full_trace_bytes(self.model.config, len(ids)) <= self.full_limit

    def _trace(self, ids, **kwargs) -> tuple[Trace, int]:
        trace = self.model.trace(list(ids), top_k=PREDICTION_TOP_K, **kwargs)
        return trace, trace.nbytes() + pending_bytes(trace)

    def base(self, ids: tuple[int, ...]) -> tuple[Trace, bool]:
        """A trace with embeddings, the residual stream at block edges, the final LayerNorm
        and per-position predictions (the full trace when it is small enough)."""
        if self.is_full(ids):
            return self.remember(("full", ids), lambda: self._trace(ids))
        return self.remember(("base", ids), lambda: self._trace(ids, names=BASE_PROBES))

    def layer(self, ids: tuple[int, ...], layer: int) -> Trace:
        """A trace holding every probe of block ``layer``."""
        if self.is_full(ids):
            return self.base(ids)[0]
        trace, _ = self.remember(
            ("layer", ids, layer),
            lambda: self._trace(ids, names=[f"blocks.{layer}.*"], layers=[layer]),
        )
        return trace
