"""The machine's limits, measured in the run that is compared with them, and what a Transformer
asks of them, so a section reads off its distance to the limit instead of guessing it.

- matrix-product peak: the best GFLOPS of a 2048x2048 ``a @ b`` in float32 and in bfloat16 (on
  a CPU with AMX, bfloat16 runs on the tile unit: about 3x float32);
- memory bandwidth: a 256 MiB ``copy_``, counted as bytes read plus bytes written;
- the FLOPs of a forward pass (every matrix product, attention's two products over the causal
  half, the unembedding of the positions asked for) and the bytes a generation step reads (every
  weight once: the layers' matrices and the unembedding).

The limits are measured before and after the comparisons they bound and the best is kept: on a
shared machine the best run is the least disturbed one.
"""

from __future__ import annotations

import os
import time

import torch

COPY_BYTES = 256 << 20
MATMUL_SIZE = 2048


def clock():
    """The clock a measurement reads: with one torch thread, the CPU time of this thread (the
    time it ran: a burst of other jobs on a shared machine delays it without adding to it),
    else the wall clock (several threads' work overlaps)."""
    return time.thread_time if torch.get_num_threads() == 1 else time.perf_counter


def clock_name() -> str:
    return "thread CPU time" if clock() is time.thread_time else "wall-clock time"


def best_time(fn, repeats: int) -> float:
    now = clock()
    fn()  # warm-up: allocation, lazy init, kernel choice
    best = float("inf")
    for _ in range(repeats):
        start = now()
        fn()
        best = min(best, now() - start)
    return best


def paired_runs(fns: dict, repeats: int) -> dict[str, list[float]]:
    """Every time of each function, after one warm-up call each (first calls pay for
    allocations and lazy init), measured in alternation so that a burst of other work on a
    shared machine hits every contender alike; timed with ``clock()``."""
    now = clock()
    for fn in fns.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = now()
            fn()
            times[name].append(now() - start)
    return times


def matmul_gflops(dtype: torch.dtype, repeats: int) -> float:
    n = MATMUL_SIZE
    a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
    out = torch.empty(n, n, dtype=dtype)
    return 2 * n**3 / best_time(lambda: torch.mm(a, b, out=out), repeats) / 1e9


def copy_gb_s(repeats: int) -> float:
    src = torch.ones(COPY_BYTES // 4)
    dst = torch.empty_like(src)
    return 2 * COPY_BYTES / best_time(lambda: dst.copy_(src), repeats) / 1e9


def measure(repeats: int = 7) -> dict:
    """The limits at the current torch thread count."""
    return {
        "threads": torch.get_num_threads(),
        "matmul_gflops": {
            "float32": matmul_gflops(torch.float32, repeats),
            "bfloat16": matmul_gflops(torch.bfloat16, repeats),
        },
        "bandwidth_gb_s": copy_gb_s(repeats),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def best_of(*runs: dict) -> dict:
    """The highest of each limit over several measurements (each one is kept beside it)."""
    return {
        "threads": runs[0]["threads"],
        "matmul_gflops": {
            dtype: max(r["matmul_gflops"][dtype] for r in runs)
            for dtype in runs[0]["matmul_gflops"]
        },
        "bandwidth_gb_s": max(r["bandwidth_gb_s"] for r in runs),
        "runs": list(runs),
    }


# --- what a model asks of them -----------------------------------------------------------------


def _block_linears(net) -> list[torch.nn.Linear]:
    return [m for m in net.h.modules() if isinstance(m, torch.nn.Linear)]


def _unembedding(net) -> torch.Tensor:
    head = getattr(net, "lm_head", None)
    return net.wte.weight if head is None else head.weight


def forward_flops(net, tokens: int, logits_positions: int) -> float:
    """Floating-point operations of one forward pass over ``tokens`` positions: every block
    matrix product (2 per weight per position), attention's QK^T and weighted sum over the causal
    half (each query reads the keys up to itself), and the unembedding of ``logits_positions``."""
    c = net.config
    matrices = sum(m.weight.numel() for m in _block_linears(net))
    pairs = tokens * (tokens + 1) / 2  # (query, key) pairs a causal pass computes
    attention = 2 * 2 * c.n_head * c.d_head * pairs * c.n_layer
    unembed = 2 * _unembedding(net).numel() * logits_positions
    return 2 * matrices * tokens + attention + unembed


def step_bytes(net) -> int:
    """Bytes a generation step must read: every weight of the blocks and the final norm once, and
    the unembedding matrix (the embedding gives one row: not counted)."""
    weights = [p for p in net.h.parameters()] + [p for p in net.ln_f.parameters()]
    weights.append(_unembedding(net))
    return sum(p.numel() * p.element_size() for p in weights)


def step_products(net):
    """A generation step's matrix-vector products alone, as a function: the same weights, one
    row each, nothing else, through the call the lean steps make (``models.step_plan.product``:
    float32's ``mm`` on a transposed weight made beforehand, which ``F.linear`` runs after its
    own dispatch; other dtypes through ``models.common.linear``). A step's time above this
    one's is its overhead: attention, norms, the Python of the loop, sampling."""
    from lmscope.models.step_plan import product

    layers = [(m.weight, m.bias) for m in _block_linears(net)] + [(_unembedding(net), None)]
    dtype = layers[0][0].dtype
    rows = {w.shape[1]: torch.randn(1, w.shape[1], dtype=dtype) for w, _ in layers}
    products_of = [(rows[w.shape[1]], product(w, b)) for w, b in layers]

    def products():
        with torch.inference_mode():
            for x, multiply in products_of:
                multiply(x)

    return products


# --- for any model section -----------------------------------------------------------------------

# what a row's measure computes full-vocabulary logits for: every position, or the last only
_LOGIT_POSITIONS = {"trace": "last", "forward": "all", "logits": "all", "trace_predictions": "all"}


def annotate(net, limits: dict, rows: list[dict], generation: dict | None = None) -> None:
    """Add to a section's figures their distance to the limits: to each forward-pass row
    (``tokens``, ``kind`` in trace/forward/logits/trace_predictions, ``lmscope_s``, optional
    ``dtype``) its GFLOPS and fraction of the matrix-product peak; to a generation dict
    (``lmscope_tok_s``, optional ``dtype``) the memory limit and the fraction of it reached."""
    peaks, bandwidth = limits["matmul_gflops"], limits["bandwidth_gb_s"]
    for row in rows:
        kind = _LOGIT_POSITIONS.get(row.get("kind", "forward"), "all")
        n = row["tokens"]
        gflops = forward_flops(net, n, 1 if kind == "last" else n) / row["lmscope_s"] / 1e9
        row["gflops"] = gflops
        row["peak_fraction"] = gflops / peaks[row.get("dtype", "float32")]
    if generation is not None:
        ceiling = bandwidth * 1e9 / step_bytes(net)
        generation["step_bytes"] = step_bytes(net)
        generation["ceiling_tok_s"] = ceiling
        generation["bandwidth_fraction"] = generation["lmscope_tok_s"] / ceiling


def limits_sentence(limits: dict) -> str:
    """The limits in one sentence, for a section's text."""
    peak = limits["matmul_gflops"]
    return (
        f"The machine, measured in the same run at {limits['threads']} thread(s): matrix "
        f"products (2048x2048) {peak['float32']:.0f} GFLOPS in float32 and "
        f"{peak['bfloat16']:.0f} in bfloat16; memory bandwidth {limits['bandwidth_gb_s']:.1f} "
        "GB/s (a 256 MiB `copy_`, bytes read + written)."
    )
