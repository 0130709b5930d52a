"""The hard exercise: in PyTorch, time a step-by-step recurrence loop, a parallel reduction
(x.sum()) and two parallel scans of the same linear recurrence, for N = 64 .. 65,536, on the
CPU and on CUDA when present. The scans are checked against the loop at every size."""

from __future__ import annotations

import math
import time
from pathlib import Path

import torch

from lmscope import i18n
from lmscope.lab import texts
from lmscope.lab.linear_scan import (
    DEFAULT_BLOCK,
    associative_scan,
    chunked_scan,
    first_breakdown,
    recurrence_loop,
    relative_error,
)
from lmscope.lab.plots import CLOCK_WORDS, Series, machine_words, plot_words, save_length_plot
from lmscope.lab.progress import stage
from lmscope.lab.results import Section, format_seconds, shown, table
from lmscope.lab.timing import (
    MAX_REPEATS,
    Timing,
    measure,
    steadiness,
    sync_for,
)

SWEEP_SIZES = [2**k for k in range(6, 17)]  # 64 .. 65,536
QUICK_SIZES = [4**k for k in range(3, 9)]  # 64, 256, .. 65,536
TIMED = ("sum_s", "chunked_s", "assoc_s", "loop_s")
PROBE = 1 << 20  # the closed form's stability is probed over this many ones
SETTLE_SECONDS = 20.0  # real time the sweep may spend re-measuring its unsteady points
METHODS = ("loop", "sum", "chunked", "assoc")
# their names in the figure
CURVE_WORDS = {
    "loop": "lab.plot.torch-sweep.method-loop",
    "sum": "lab.plot.torch-sweep.method-sum",
    "chunked": "lab.plot.torch-sweep.method-chunked",
    "assoc": "lab.plot.torch-sweep.method-assoc",
}


def measure_point(
    device: str,
    n: int,
    a: float,
    seed: int,
    clock: str = "wall",
    check: bool = True,
    keys: tuple[str, ...] = TIMED,
) -> dict:
    """One pass at size n: one repeat of each timing in ``keys``, and (with ``check``) how far
    each scan is from the loop."""
    gen = torch.Generator().manual_seed(seed + n)
    x = torch.randn(n, generator=gen).to(device)
    sync = sync_for(device)
    row = {"device": device, "n": n}
    # The short calls first: the loop's thousands of tiny tensors would otherwise leave
    # caches and the allocator in a state the next measurement pays for.
    calls = {
        "sum_s": lambda: x.sum(),
        "chunked_s": lambda: chunked_scan(x, a),
        "assoc_s": lambda: associative_scan(x, a),
        "loop_s": lambda: recurrence_loop(x, a),
    }
    for key in keys:
        row[key] = measure(calls[key], 1, sync, clock, settle_s=0).best
    if check:
        reference = recurrence_loop(x, a)
        row["chunked_rel_err"] = relative_error(chunked_scan(x, a), reference)
        row["assoc_rel_err"] = relative_error(associative_scan(x, a), reference)
    return row


def run_sweep(cfg, sizes: list[int], advance) -> list[dict]:
    """Best of ``cfg.repeats`` passes over all sizes, then more passes over the points whose
    repeats still disagree (lmscope.lab.timing's rule), for up to SETTLE_SECONDS. Passes
    rather than back-to-back repeats: a burst of other work on a shared machine then spoils
    one pass at one size, and another pass measures that size again later."""
    first: dict[tuple[str, int], dict] = {}
    samples: dict[tuple[str, int, str], list[float]] = {}
    for device in cfg.devices:
        measure_point(device, 64, cfg.a, cfg.seed, cfg.clock, check=False)  # one-off set-up
    for p in range(cfg.repeats):
        for device in cfg.devices:
            for n in sizes:
                row = measure_point(device, n, cfg.a, cfg.seed, cfg.clock, check=p == 0)
                first.setdefault((device, n), row)
                for key in TIMED:
                    samples.setdefault((device, n, key), []).append(row[key])
                advance(
                    i18n.text("lab.progress.pass", at=p + 1, of=cfg.repeats, device=device, n=n)
                )
    resettle(cfg, samples, advance)
    rows = []
    for device in cfg.devices:
        for n in sizes:
            timings = {key: Timing(tuple(samples[(device, n, key)])) for key in TIMED}
            row = first[(device, n)]
            row.update({key: t.best for key, t in timings.items()})
            row["loop_over_sum"] = row["loop_s"] / row["sum_s"]
            row["loop_over_chunked"] = row["loop_s"] / row["chunked_s"]
            row.update(steadiness(**{key[:-2]: t for key, t in timings.items()}))
            rows.append(row)
    return rows


def resettle(cfg, samples: dict, advance) -> None:
    """More passes over the unsteady points only, until they settle, MAX_REPEATS samples, or
    SETTLE_SECONDS of real time."""
    started = time.perf_counter()
    while time.perf_counter() - started < SETTLE_SECONDS:
        unsteady = [
            point
            for point, times in samples.items()
            if not Timing(tuple(times)).steady and len(times) < MAX_REPEATS
        ]
        if not unsteady:
            return
        for device, n, key in unsteady:
            row = measure_point(device, n, cfg.a, cfg.seed, cfg.clock, check=False, keys=(key,))
            samples[(device, n, key)].append(row[key])
        advance(i18n.text("lab.progress.remeasuring", n=len(unsteady)), 0)


def loglog_slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of log y against log x: 1 means linear growth, 0 a flat floor."""
    lx = [math.log(v) for v in xs]
    ly = [math.log(v) for v in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    var = sum((v - mx) ** 2 for v in lx)
    return sum((u - mx) * (v - my) for u, v in zip(lx, ly, strict=True)) / var if var else 0.0


def curve_shape(rows: list[dict], key: str) -> dict:
    """Describe one curve: its floor (the least time among the three smallest N), where it
    leaves the floor for good (the first N from which every time is above twice the floor,
    so one noisy point does not count), and its log-log slope overall and after that point."""
    ns = [r["n"] for r in rows]
    ts = [r[key] for r in rows]
    floor = min(ts[:3])
    above = [t > 2 * floor for t in ts]
    knee = next((n for i, n in enumerate(ns) if all(above[i:])), None)
    tail = [(n, t) for n, t in zip(ns, ts, strict=True) if knee is not None and n >= knee]
    return {
        "floor_s": floor,
        "knee_n": knee,
        # one size has no slope: None, so no verdict reads growth into a single point
        "slope_all": loglog_slope(ns, ts) if len(ns) > 1 else None,
        "slope_after_knee": loglog_slope(*zip(*tail, strict=True)) if len(tail) > 1 else None,
        "last_s": ts[-1],
        "per_item_s": ts[-1] / ns[-1],
        # what one more element costs at the top of the range, the floor subtracted out
        "marginal_s": (ts[-1] - ts[-2]) / (ns[-1] - ns[-2]) if len(ns) > 1 else None,
    }


def sweep_sections(cfg, progress=None) -> list[Section]:
    """The sweep's table and the closed form's stability table (the figure is drawn from the
    table: ``plot_sweep``, by ``serial_depth.plot_result``)."""
    sizes = cfg.sizes(SWEEP_SIZES, QUICK_SIZES)
    advance = stage(
        progress, i18n.text("lab.progress.torch"), cfg.repeats * len(sizes) * len(cfg.devices)
    )
    rows = run_sweep(cfg, sizes, advance)
    shapes = {
        device: {
            key: curve_shape([r for r in rows if r["device"] == device], f"{key}_s")
            for key in METHODS
        }
        for device in cfg.devices
    }
    section = table(
        "torch",
        rows,
        texts.torch_sweep(rows, shapes, cfg.a, cfg.clock),
        data={"curve_shapes": shapes},
    )
    return [section, stability_section(cfg.a)]


def stability_section(a: float) -> Section:
    """Where the one-line closed form a^t * cumsum(x / a^s) stops being finite."""
    rows = []
    coefs = sorted({a, 0.5, 0.9, 0.99} - {1.0}, reverse=True)
    for coef in coefs:
        if coef == 0 or abs(coef) >= 1:
            continue
        for dtype in (torch.float32, torch.float64):
            n = first_breakdown(coef, dtype, PROBE) or None  # None: finite over the whole probe
            rows.append({"a": coef, "dtype": str(dtype).replace("torch.", ""), "breaks_at": n})
    return table("stability", rows, texts.stability(rows, a, DEFAULT_BLOCK, PROBE))


def plot_sweep(
    rows: list[dict],
    devices: list[str],
    out_dir: Path,
    a: float,
    hw: dict,
    clock: str,
    lang: str = "en",
) -> None:
    say = plot_words(lang)
    series = []
    colors = {"loop": "#d62728", "sum": "#1f77b4", "chunked": "#2ca02c", "assoc": "#9467bd"}
    for device in devices:
        mine = [r for r in rows if r["device"] == device]
        for key in METHODS:
            label = say(CURVE_WORDS[key])
            series.append(
                Series(
                    say(
                        "lab.plot.torch-sweep.on-device",
                        label=label,
                        device=shown(texts.device_name(device), lang),
                    )
                    if len(devices) > 1
                    else label,
                    [r["n"] for r in mine],
                    [r[f"{key}_s"] for r in mine],
                    color=colors[key],
                    dashed=device != devices[0],
                    marker="o" if device == devices[0] else "s",
                )
            )
    first = [r for r in rows if r["device"] == devices[0]]
    hlines = []
    if first:  # the same floor the verdict quotes: the least of the three smallest sizes
        floor = curve_shape(first, "sum_s")["floor_s"]
        where = shown(texts.device_name(devices[0]), lang)
        hlines.append(
            (floor, say("lab.plot.torch-sweep.floor", device=where, time=format_seconds(floor)))
        )
    save_length_plot(
        out_dir,
        "torch",
        lang,
        say("lab.plot.torch-sweep.title", a=f"{a:g}"),
        say("lab.plot.torch-sweep.time", clock=say(CLOCK_WORDS[clock])),
        series,
        footnote=machine_words(hw, lang),
        y_unit="seconds",
        hlines=hlines,
    )
