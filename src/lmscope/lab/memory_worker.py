"""The measuring process of ``lmscope lab memory-wall``: ``python -m lmscope.lab.memory_worker``.

Peak memory is measured in a process of its own, because Python-side tools (tracemalloc)
do not see PyTorch's allocations and a parent's own memory would blur the numbers:

- CPU: Linux's peak resident set (VmHWM in /proc/self/status) is reset before each job by
  writing 5 to /proc/self/clear_refs; the job's peak is VmHWM minus the resident set at the
  start (inputs already allocated). The parent sets MALLOC_MMAP_THRESHOLD_ so that large
  buffers are mapped and unmapped individually, so freed memory really leaves the process.
- CUDA: torch.cuda.max_memory_allocated after reset_peak_memory_stats, minus the start.

The memory budget is enforced, not just predicted: on CPU the address space is capped at
(what the warmed-up process uses + budget) with RLIMIT_AS; on CUDA the caching allocator is
capped with set_per_process_memory_fraction. A job that does not fit then fails with an
allocation error, which is reported as {"ok": false, "oom": true}; if the process dies
instead, the parent reports that.

Protocol: the first stdin line is the setup (JSON), answered by {"ready": ...}; every further
line is a job {"method", "n"}, answered by one JSON line.
"""

from __future__ import annotations

import gc
import json
import math
import re
import resource
import sys
import time

import torch
import torch.nn.functional as F

from lmscope.lab.timing import SLOW_CALL_SECONDS, settle

CLEAR_REFS = "/proc/self/clear_refs"


def _proc_status() -> dict[str, int]:
    values = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(("VmRSS", "VmHWM", "VmSize")):
                key, rest = line.split(":", 1)
                values[key] = int(rest.split()[0]) * 1024
    return values


def _reset_peak() -> None:
    with open(CLEAR_REFS, "w") as fh:
        fh.write("5")


def naive_attention(q, k, v):
    """Textbook causal attention: the whole N x N score matrix per head, masked, softmaxed."""
    n = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    future = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1)
    scores = scores.masked_fill(future, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v


def sdpa_attention(q, k, v):
    """PyTorch's fused kernel: tiles of keys at a time, never the whole N x N matrix."""
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def lstm_run(cell, x):
    """An LSTM cell stepping over all N positions: only (h, c) is carried along."""
    batch = x.shape[1]
    h = x.new_zeros(batch, cell.hidden_size)
    c = x.new_zeros(batch, cell.hidden_size)
    for t in range(x.shape[0]):
        h, c = cell(x[t], (h, c))
    return h


class Measurer:
    def __init__(self, setup: dict):
        self.device = setup["device"]
        self.dtype = getattr(torch, setup["dtype"])
        self.heads = setup["heads"]
        self.d_head = setup["d_head"]
        self.batch = setup["batch"]
        self.repeats = setup["repeats"]
        self.cuda = self.device.startswith("cuda")
        # CPU time (one thread) leaves out time spent waiting for a core on a busy machine
        self.clock = time.process_time if setup.get("clock") == "cpu" else time.perf_counter
        if setup.get("threads"):
            torch.set_num_threads(setup["threads"])
        torch.manual_seed(0)
        width = self.heads * self.d_head
        self.cell = torch.nn.LSTMCell(width, width).to(self.device, self.dtype)
        self.backend = None

    def inputs(self, method: str, n: int):
        if method == "lstm":
            width = self.heads * self.d_head
            return (torch.randn(n, self.batch, width, device=self.device, dtype=self.dtype),)
        shape = (self.batch, self.heads, n, self.d_head)
        return tuple(torch.randn(shape, device=self.device, dtype=self.dtype) for _ in range(3))

    def call(self, method: str, args):
        if method == "naive":
            return naive_attention(*args)
        if method == "sdpa":
            return sdpa_attention(*args)
        return lstm_run(self.cell, *args)

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize()

    def warm_up(self):
        """Run every method once, small, so threads, allocator arenas and kernels exist
        before the budget is set and before anything is measured."""
        with torch.no_grad():
            for method in ("naive", "sdpa", "lstm"):
                self.call(method, self.inputs(method, 64))
            q = self.inputs("sdpa", 64)
            try:
                from torch.nn.attention import SDPBackend

                self.backend = SDPBackend(torch._fused_sdp_choice(*q, is_causal=True)).name
            except Exception:  # private API: only a label, so any failure just leaves it unknown
                self.backend = None
        self.sync()

    def limit(self, budget: int) -> None:
        if self.cuda:
            free, total = torch.cuda.mem_get_info()
            used = torch.cuda.memory_allocated()
            torch.cuda.set_per_process_memory_fraction(min(1.0, (used + budget) / total))
            return
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = _proc_status()["VmSize"] + budget
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))

    def measure(self, method: str, n: int) -> dict:
        with torch.no_grad():
            args = self.inputs(method, n)
            gc.collect()
            self.sync()
            if self.cuda:
                torch.cuda.reset_peak_memory_stats()
                start = torch.cuda.memory_allocated()
            else:
                _reset_peak()
                start = _proc_status()["VmRSS"]
            t0 = self.clock()
            out = self.call(method, args)
            self.sync()
            once = self.clock() - t0
            if self.cuda:
                peak = torch.cuda.max_memory_allocated() - start
            else:
                peak = _proc_status()["VmHWM"] - start
            del out

            def sample() -> float:
                t0 = self.clock()
                self.call(method, args)
                self.sync()
                return self.clock() - t0

            # the first call also allocated its buffers: a repeat only when it is slow anyway
            first = (once,) if once >= SLOW_CALL_SECONDS else ()
            timing = settle(sample, self.repeats, first)
        return {"ok": True, "peak_bytes": max(0, peak), "seconds": timing.best, **timing.record()}


def _is_oom(err: BaseException) -> bool:
    if isinstance(err, MemoryError):
        return True
    text = str(err).lower()
    return "out of memory" in text or "can't allocate memory" in text or "not enough memory" in text


def _mib_or_gib(n: int) -> str:
    return f"{n / 2**30:.3g} GiB" if n >= 2**30 else f"{n / 2**20:.3g} MiB"


def describe_oom(err: BaseException) -> dict:
    """One readable line from PyTorch's allocation errors (which carry C++ context), as a
    result file's text (a catalog id and values: lmscope.lab.results.say)."""
    from lmscope.lab.results import say

    text = " ".join(str(err).split())
    asked = re.search(r"tried to allocate ([0-9]+ bytes|[0-9.]+ ?[KMGT]i?B)", text, re.I)
    if asked:
        size = asked.group(1)
        if size.endswith(" bytes"):
            size = _mib_or_gib(int(size.split()[0]))
        return say("lab.memory-wall.oom-size", size=size)
    return say("lab.memory-wall.oom", detail=text[:200] or type(err).__name__)


def _send(payload: dict) -> None:
    sys.stdout.write(json.dumps(payload) + "\n")
    sys.stdout.flush()


def main() -> int:
    setup = json.loads(sys.stdin.readline())
    measurer = Measurer(setup)
    measurer.warm_up()
    if not measurer.cuda:
        _reset_peak()  # fails here, loudly, where the peak cannot be reset
    measurer.limit(int(setup["budget_bytes"]))
    _send({"ready": True, "sdpa_backend": measurer.backend})
    for line in sys.stdin:
        job = json.loads(line)
        try:
            reply = measurer.measure(job["method"], int(job["n"]))
        except (RuntimeError, MemoryError) as err:
            if not _is_oom(err):
                raise
            reply = {"ok": False, "oom": True, "error": describe_oom(err)}
            gc.collect()
            if measurer.cuda:
                torch.cuda.empty_cache()
        _send(reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
