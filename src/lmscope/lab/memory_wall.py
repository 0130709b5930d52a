"""``lmscope lab memory-wall``: peak memory and time of causal attention as N grows.

Three ways to let N positions see their past, with GPT-2-small-like shapes by default
(12 heads x d_head 64): naive attention that materialises every N x N score matrix,
PyTorch's scaled_dot_product_attention (a flash / memory-efficient kernel that works in
tiles), and an LSTM cell of the same width stepping over the positions with O(1) state.
Each method runs in its own measuring process (``memory_worker``) under an enforced memory
budget; a method stops at the first N that does not fit, and the run reports where.
Plus the KV cache of the GPT-2 family, per token and at full context.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from lmscope import i18n
from lmscope.engine import machine_memory
from lmscope.errors import InvalidInputError, LmscopeError
from lmscope.lab import texts
from lmscope.lab.configs import DTYPE_BYTES, MEMORY_METHODS, MemoryWallConfig
from lmscope.lab.plots import (
    CLOCK_WORDS,
    Mark,
    Panel,
    Series,
    machine_words,
    plot_words,
    save_panels,
)
from lmscope.lab.progress import stage
from lmscope.lab.results import (
    LANGS,
    Column,
    Result,
    Section,
    cell_text,
    format_bytes,
    hardware_info,
    plot_stem,
    say,
    shown,
    table,
)
from lmscope.models.gpt2 import GPTConfig

BUDGET_FRACTION = 0.25  # default budget: this share of the memory available right now
CLEAR_REFS = "/proc/self/clear_refs"
PAGE = 4096  # resident memory is counted in pages: smaller peaks read as 0
# the methods as the figure's legend names them (sdpa by its function's name)
METHOD_WORDS = {
    "naive": "lab.plot.memory-wall.method-naive",
    "lstm": "lab.plot.memory-wall.method-lstm",
}

# GPT-2 family shapes (layers, d_model, heads); all have a 1,024-token context.
GPT2_FAMILY = {
    "gpt2": (12, 768, 12),
    "gpt2-medium": (24, 1024, 16),
    "gpt2-large": (36, 1280, 20),
    "gpt2-xl": (48, 1600, 25),
}


# --- theory --------------------------------------------------------------------------------
def scores_bytes(n: int, heads: int, batch: int = 1, bytes_per_element: int = 4) -> int:
    """One materialised score matrix per head: N x N x heads x batch elements."""
    return n * n * heads * batch * bytes_per_element


def lstm_state_bytes(width: int, batch: int = 1, bytes_per_element: int = 4) -> int:
    """An LSTM carries h and c, each batch x width, whatever N is."""
    return 2 * width * batch * bytes_per_element


def kv_cache_bytes_per_token(n_layer: int, d_model: int, bytes_per_element: int) -> int:
    """Keys and values (2) for every layer, d_model numbers each (all heads together)."""
    return 2 * n_layer * d_model * bytes_per_element


def kv_cache_rows(dtypes=("float32", "float16"), n_ctx: int = 1024) -> list[dict]:
    rows = []
    for name, (layers, width, heads) in GPT2_FAMILY.items():
        config = GPTConfig(n_layer=layers, n_embd=width, n_head=heads, n_ctx=n_ctx)
        row = {"model": name, "layers": config.n_layer, "d_model": config.n_embd}
        for dtype in dtypes:
            per_token = kv_cache_bytes_per_token(config.n_layer, config.n_embd, DTYPE_BYTES[dtype])
            row[f"per_token_{dtype}"] = per_token
            row[f"full_{dtype}"] = per_token * config.n_ctx
        row["n_ctx"] = config.n_ctx
        rows.append(row)
    return rows


# --- sizes and budgets ---------------------------------------------------------------------
_UNITS = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "kib": 1 << 10,
    "kb": 10**3,
    "m": 1 << 20,
    "mib": 1 << 20,
    "mb": 10**6,
    "g": 1 << 30,
    "gib": 1 << 30,
    "gb": 10**9,
    "t": 1 << 40,
    "tib": 1 << 40,
    "tb": 10**12,
}


def parse_size(text: str) -> int:
    """'4GB' (10^9), '512MiB' or '512M' (2^20), '1e9' or plain bytes -> bytes."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:e[0-9]+)?)\s*([a-z]*)\s*", str(text).lower())
    if not match or match.group(2) not in _UNITS:
        raise InvalidInputError("error.lab.size.unreadable", text=str(text))
    size = float(match.group(1)) * _UNITS[match.group(2)]
    if not math.isfinite(size):
        raise InvalidInputError("error.lab.size.too-large", text=str(text))
    return int(size)


def available_bytes(device: str) -> int | None:
    if device.startswith("cuda"):
        return torch.cuda.mem_get_info()[0]
    return machine_memory.available_bytes()  # within a container's limit too


def total_bytes(device: str) -> int | None:
    """All the memory the device has (not what is free now): the most a budget can mean."""
    if device.startswith("cuda"):
        return torch.cuda.mem_get_info()[1]
    return machine_memory.total_bytes()


def check_budget(budget: int | None, device: str, said: str | None = None) -> None:
    """A budget above the device's memory would switch the protection off: refuse it
    (``said``: the budget as the user wrote it)."""
    total = total_bytes(device) if budget is not None else None
    if total is not None and budget > total:
        raise InvalidInputError(
            "error.lab.budget.over-gpu" if device.startswith("cuda") else "error.lab.budget.over",
            budget=said or format_bytes(budget),
            total=format_bytes(total),
        )


def check_platform(device: str) -> None:
    if device == "cpu" and not os.access(CLEAR_REFS, os.W_OK):
        raise InvalidInputError("error.lab.no-clear-refs")


# --- the measuring process -----------------------------------------------------------------
class Worker:
    """One measuring process (see memory_worker): send a job, read one JSON line back."""

    def __init__(self, setup: dict):
        env = dict(
            os.environ,
            MALLOC_MMAP_THRESHOLD_="131072",  # big buffers: own mapping, returned on free
            MALLOC_TRIM_THRESHOLD_="131072",
            MALLOC_ARENA_MAX="2",  # fewer reserved arenas under the address-space cap
            PYTHONUNBUFFERED="1",
        )
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lmscope.lab.memory_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env=env,
        )
        self.ready = self.ask(setup)
        if self.ready is None:
            raise LmscopeError("error.lab.worker-start", reason=self.death())

    def ask(self, payload: dict) -> dict | None:
        """Send one line, read one line; None when the process has died."""
        try:
            self.proc.stdin.write(json.dumps(payload) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except (BrokenPipeError, OSError):
            line = ""
        return json.loads(line) if line else None

    def death(self) -> str:
        """Why the process ended: the signal or exit code and its last error line."""
        try:
            code = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._stderr.seek(0)
        lines = self._stderr.read().decode(errors="replace").strip().splitlines()
        last = lines[-1] if lines else "no error output"
        how = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
        return f"{how} ({last[:200]})"

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self._stderr.close()


def measure_method(cfg: MemoryWallConfig, method: str, budget: int, advance) -> dict:
    """Measure one method at growing N until the first size that does not fit."""
    setup = {
        "device": cfg.device,
        "dtype": cfg.dtype,
        "heads": cfg.heads,
        "d_head": cfg.d_head,
        "batch": cfg.batch,
        "repeats": cfg.repeats,
        "threads": cfg.threads,
        "clock": cfg.clock,
        "budget_bytes": budget,
    }
    sizes = cfg.sizes()
    found = {"method": method, "points": {}, "stopped_at": None, "reason": None, "backend": None}
    worker = Worker(setup)
    try:
        found["backend"] = worker.ready.get("sdpa_backend") if method == "sdpa" else None
        for done, n in enumerate(sizes):
            reply = worker.ask({"method": method, "n": n})
            if reply is None:
                found["stopped_at"], found["reason"] = (
                    n,
                    say("lab.memory-wall.died", detail=worker.death()),
                )
            elif not reply["ok"]:
                found["stopped_at"], found["reason"] = n, reply["error"]
            else:
                found["points"][n] = reply
                advance(f"{method} N={n:,}")
                continue
            for _ in sizes[done:]:
                advance(i18n.text("lab.progress.stopped", method=method, n=n))
            break
    finally:
        worker.close()
    return found


# --- the whole experiment ---------------------------------------------------------------------
def run_memory_wall(cfg: MemoryWallConfig, out_dir: Path, progress=None) -> Result:
    check_platform(cfg.device)
    budget = cfg.budget_bytes
    if budget is None:
        free = available_bytes(cfg.device)
        if free is None:
            raise InvalidInputError("error.lab.budget.unknown-free")
        budget = int(BUDGET_FRACTION * free)
    sizes = cfg.sizes()
    advance = stage(progress, i18n.text("lab.progress.memory-wall"), len(sizes) * len(cfg.methods))
    found = {m: measure_method(cfg, m, budget, advance) for m in cfg.methods}

    width = cfg.heads * cfg.d_head
    bpe = cfg.bytes_per_element
    rows = []
    for n in sizes:
        row = {
            "n": n,
            "theory_bytes": scores_bytes(n, cfg.heads, cfg.batch, bpe),
            "lstm_state_bytes": lstm_state_bytes(width, cfg.batch, bpe),
        }
        timings = {}
        for method in MEMORY_METHODS:
            point = found.get(method, {}).get("points", {}).get(n)
            row[f"{method}_peak"] = point["peak_bytes"] if point else None
            row[f"{method}_s"] = point["seconds"] if point else None
            if point:
                timings[method] = {k: point[k] for k in ("repeats", "median_s", "spread", "steady")}
        spreads = [t["spread"] for t in timings.values()]
        row["timings"] = timings
        row["steady"] = all(t["steady"] for t in timings.values())
        row["spread_pct"] = (
            round(100 * max(spreads), 1) if spreads and None not in spreads else None
        )
        if row["naive_peak"]:
            row["naive_over_theory"] = row["naive_peak"] / row["theory_bytes"]
        else:
            row["naive_over_theory"] = None
        rows.append(row)

    limits = []
    for method, info in found.items():
        fitted = sorted(info["points"])
        limits.append(
            {
                "method": method,
                "largest_fit": fitted[-1] if fitted else None,
                "first_not_fit": info["stopped_at"],
                "reason": info["reason"] or say("lab.memory-wall.all-fit"),
            }
        )

    hardware = hardware_info([cfg.device])
    if cfg.threads:  # the measuring processes ran with these, not with this process's count
        hardware["torch_threads"] = cfg.threads
    params = {
        "min_n": cfg.min_n,
        "max_n": cfg.max_n,
        "heads": cfg.heads,
        "d_head": cfg.d_head,
        "batch": cfg.batch,
        "dtype": cfg.dtype,
        "bytes_per_element": bpe,
        "device": cfg.device,
        "budget_bytes": budget,
        "repeats": cfg.repeats,
        "methods": list(cfg.methods),
        "threads": cfg.threads,
        "clock": cfg.clock,
        "sdpa_backend": found.get("sdpa", {}).get("backend"),
        "peak_method": "CUDA max_memory_allocated"
        if cfg.device.startswith("cuda")
        else "peak resident set size, VmHWM, reset through /proc/self/clear_refs",
    }
    result = Result(
        experiment="memory-wall", title=texts.MEMORY_WALL_TITLE, params=params, hardware=hardware
    )
    result.sections = [
        attention_section(rows, params, limits),
        limits_section(limits, budget),
        kv_section(cfg.kv_dtypes),
    ]
    plot_result(result.to_dict(), Path(out_dir))
    result.write(Path(out_dir))
    return result


def attention_section(rows, params, limits) -> Section:
    return table("attention", rows, texts.attention(rows, params, limits))


def limits_section(limits, budget) -> Section:
    return table("limits", limits, texts.limits(limits, budget), data={"budget_bytes": budget})


def kv_section(dtypes) -> Section:
    rows = kv_cache_rows(dtypes)
    columns = [
        Column("model", say("lab.column.model"), "text"),
        Column("layers", say("lab.column.layers"), "int"),
        Column("d_model", "d_model", "int"),
    ]
    for dtype in dtypes:
        columns.append(
            Column(f"per_token_{dtype}", say("lab.column.kv-per-token", dtype=dtype), "int")
        )
    for dtype in dtypes:
        columns.append(
            Column(f"full_{dtype}", say("lab.column.kv-full", tokens=1024, dtype=dtype), "bytes")
        )
    return Section(key="kv_cache", columns=columns, rows=rows, **texts.kv_cache(rows, dtypes))


def plot_result(doc: dict, out_dir: Path, langs: tuple[str, ...] = LANGS) -> None:
    """Draw the figure from a result document's rows (the attention table and the limits), so
    a saved result can be drawn again; in every language of ``langs``."""
    by_key = {s["key"]: s for s in doc["sections"]}
    rows, limits = by_key["attention"]["rows"], by_key["limits"]["rows"]
    for lang in langs:
        plot_memory_wall(rows, limits, doc["params"], doc["hardware"], out_dir, lang)


def plot_memory_wall(rows, limits, params, hw, out_dir: Path, lang: str = "en") -> None:
    say = plot_words(lang)
    colors = {"naive": "#d62728", "sdpa": "#1f77b4", "lstm": "#2ca02c"}
    mem, time = [], []
    for method in params["methods"]:
        pts = [r for r in rows if r[f"{method}_peak"] is not None]
        if not pts:
            continue
        xs = [r["n"] for r in pts]
        label = say(METHOD_WORDS[method]) if method in METHOD_WORDS else method
        peaks = [r[f"{method}_peak"] for r in pts]
        if max(peaks) < PAGE:
            # Nothing measurable (RSS moves in pages) cannot sit on a log axis: draw the
            # page size as an upper bound, and say so.
            bound = Series(
                say("lab.plot.memory-wall.below-a-page", label=label), xs, [PAGE] * len(xs)
            )
            bound.color, bound.marker = colors[method], "v"
            mem.append(bound)
        else:
            mem.append(Series(label, xs, [max(p, PAGE) for p in peaks], color=colors[method]))
        time.append(Series(label, xs, [r[f"{method}_s"] for r in pts], color=colors[method]))
    ns = [r["n"] for r in rows]
    mem.append(
        Series(
            say("lab.plot.memory-wall.theory"),
            ns,
            [r["theory_bytes"] for r in rows],
            "#555555",
            True,
        )
    )
    if "lstm" in params["methods"]:
        mem.append(
            Series(
                say("lab.plot.memory-wall.lstm-state"),
                ns,
                [r["lstm_state_bytes"] for r in rows],
                "#2ca02c",
                True,
            )
        )
    marks = [
        Mark(
            lim["first_not_fit"],
            params["budget_bytes"],
            say(
                "lab.plot.memory-wall.does-not-fit",
                method=shown(cell_text(lim["method"], {"cells": texts.METHOD_CELLS}), lang),
                n=lim["first_not_fit"],
            ),
        )
        for lim in limits
        if lim["first_not_fit"]
    ]
    shape = say(
        "lab.plot.memory-wall.shape",
        heads=params["heads"],
        d_head=params["d_head"],
        batch=params["batch"],
        dtype=params["dtype"],
    )
    budget = say("lab.plot.memory-wall.budget", size=format_bytes(params["budget_bytes"]))
    save_panels(
        out_dir,
        plot_stem("attention"),
        [
            Panel(
                title=say("lab.plot.memory-wall.memory-title"),
                xlabel=say("lab.plot.length-n"),
                ylabel=say("lab.plot.memory-wall.memory-axis"),
                y_unit="bytes",
                series=mem,
                hlines=[(params["budget_bytes"], budget)],
                marks=marks,
                legend_below=True,
            ),
            Panel(
                title=say("lab.plot.memory-wall.time-title"),
                xlabel=say("lab.plot.length-n"),
                ylabel=say(CLOCK_WORDS[params["clock"]]),
                y_unit="seconds",
                series=time,
            ),
        ],
        footnote=f"{shape} · {machine_words(hw, lang)}",
        lang=lang,
    )
