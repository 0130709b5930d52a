"""``lmscope lab serial-depth``: the lesson's three tables and three exercises, measured.

(a) serial depth of a recurrence (N) vs a tree reduction (ceil(log2 N)), counted;
(b) pure-Python timing of the recurrence h = 0.9*h + x vs sum(xs)/len(xs);
(c) the recurrence's running states equal a prefix scan of affine maps;
easy: the recurrence with a 64-wide hidden state (Python lists and NumPy), re-timed;
medium: Hillis-Steele and Blelloch scans, verified, with their depth and work;
hard: PyTorch sweep of loop vs reduction vs parallel scans (``torch_sweep``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import numpy as np

from lmscope import i18n
from lmscope.lab import texts, torch_sweep
from lmscope.lab.configs import SerialDepthConfig
from lmscope.lab.plots import CLOCK_WORDS, Series, machine_words, plot_words, save_length_plot
from lmscope.lab.progress import stage
from lmscope.lab.results import LANGS, Result, Section, hardware_info, table
from lmscope.lab.scans import (
    AFFINE_IDENTITY,
    affine_op,
    blelloch_cost,
    blelloch_scan,
    close,
    hillis_steele_cost,
    hillis_steele_scan,
    recurrence_states,
    serial_scan,
    tree_reduce,
)
from lmscope.lab.timing import MAX_SPREAD, Timing, measure, steadiness

DEPTH_SIZES = [4**k for k in range(3, 10)]  # 64 .. 262,144
PYTHON_SIZES = [1_000, 10_000, 100_000, 1_000_000]
EQUIVALENCE_SIZES = [16, 1_024, 16_384]
VECTOR_SIZES = [10_000, 100_000]
SCAN_SIZES = [8, 1_000, 1_024, 4_096]
HIDDEN = 64  # the easy exercise's hidden-state width
RANDOM_TRIALS = 20  # random inputs (random lengths) each scan must match the serial scan on


# --- the lesson's two functions --------------------------------------------------------------
def recurrence_final(xs: list[float], a: float = 0.9) -> float:
    """RNN-style: every step needs the previous h."""
    h = 0.0
    for x in xs:
        h = a * h + x
    return h


def mean_reduction(xs: list[float]) -> float:
    """Attention-style: the terms are independent, so sum() may add them in any order."""
    return sum(xs) / len(xs)


def recurrence_lists(rows: list[list[float]], n: int, a: float = 0.9) -> list[float]:
    """The easy exercise in pure Python: a 64-float state updated element by element.
    Input x_t cycles through ``rows`` so N can grow without storing N*64 Python floats."""
    h = [0.0] * len(rows[0])
    mask = len(rows) - 1
    for t in range(n):
        h = [a * hi + xi for hi, xi in zip(h, rows[t & mask], strict=True)]
    return h


def recurrence_numpy(rows, n: int, a: float = 0.9):
    """The easy exercise in NumPy: one vectorised 64-wide update per step, still N steps."""
    h = rows[0] * 0.0
    mask = len(rows) - 1
    for t in range(n):
        h = a * h + rows[t & mask]
    return h


# --- sections ---------------------------------------------------------------------------------
def _timed(cfg: SerialDepthConfig, **calls: Callable[[], object]) -> dict[str, Timing]:
    """Each call timed side by side by the one timing rule, with the run's repeats and clock."""
    return {name: measure(call, cfg.repeats, clock=cfg.clock) for name, call in calls.items()}


def _seconds(timed: dict[str, Timing]) -> dict[str, float]:
    """A row's ``NAME_s`` columns: each timing's best, in seconds."""
    return {f"{name}_s": timing.best for name, timing in timed.items()}


def _per(timed: dict[str, Timing], names, n: int, column: str, scale: float) -> dict[str, float]:
    """A row's ``NAME_COLUMN`` columns: the best time of each of ``names`` per one of the
    ``n`` items (or steps), times ``scale`` (1e9: nanoseconds)."""
    return {f"{name}_{column}": timed[name].best / n * scale for name in names}


def depth_section(cfg: SerialDepthConfig) -> Section:
    rows = []
    for n in cfg.sizes(DEPTH_SIZES):
        _, tree = tree_reduce([1] * n)  # counted by running it, not by formula
        rows.append(
            {
                "n": n,
                "recurrence_depth": n,
                "tree_depth": tree.rounds,
                "ratio": n / max(1, tree.rounds),
                "hillis_steele_depth": hillis_steele_cost(n).rounds,
                "blelloch_depth": blelloch_cost(n).rounds,
                "work": n - 1,
            }
        )
    return table("depth", rows, texts.depth(rows))


def python_section(cfg: SerialDepthConfig, progress=None) -> Section:
    sizes = cfg.sizes(PYTHON_SIZES, PYTHON_SIZES[:3])
    advance = stage(progress, i18n.text("lab.progress.python"), len(sizes))
    rng = random.Random(cfg.seed)
    rows = []
    for n in sizes:
        xs = [rng.random() for _ in range(n)]
        timed = _timed(
            cfg,
            recurrence=lambda xs=xs: recurrence_final(xs, cfg.a),
            reduction=lambda xs=xs: mean_reduction(xs),
        )
        ratio = timed["recurrence"].best / timed["reduction"].best
        per_item = _per(timed, ("recurrence", "reduction"), n, "ns_per_item", 1e9)
        rows.append({"n": n, **_seconds(timed), "ratio": ratio, **per_item, **steadiness(**timed)})
        advance(f"N={n:,}")
    return table("python", rows, texts.python_timing(rows, cfg.a, cfg.clock))


def equivalence_section(cfg: SerialDepthConfig, progress=None) -> Section:
    sizes = cfg.sizes(EQUIVALENCE_SIZES, EQUIVALENCE_SIZES[:2])
    coefs = [cfg.a, 1.0] if cfg.a != 1.0 else [1.0]
    advance = stage(progress, i18n.text("lab.progress.equivalence"), len(sizes) * len(coefs))
    rng = random.Random(cfg.seed + 1)
    rows = []
    for n in sizes:
        xs = [rng.uniform(-1, 1) for _ in range(n)]
        for a in coefs:
            states = recurrence_states(xs, a)
            pairs = [(a, x) for x in xs]
            hs, hs_cost = hillis_steele_scan(pairs, affine_op)
            bl, bl_cost = blelloch_scan(pairs, affine_op, AFFINE_IDENTITY)
            hs_states = [b for _, b in hs]
            bl_states = [b for _, b in bl]
            scale = max(abs(s) for s in states) or 1.0
            rows.append(
                {
                    "n": n,
                    "a": a,
                    "serial_steps": n,
                    "hillis_steele_rounds": hs_cost.rounds,
                    "blelloch_rounds": bl_cost.rounds,
                    "hillis_steele_rel_diff": max(map(abs, _diff(hs_states, states))) / scale,
                    "blelloch_rel_diff": max(map(abs, _diff(bl_states, states))) / scale,
                    "equal": close(hs_states, states) and close(bl_states, states),
                }
            )
            advance(f"N={n:,} a={a:g}")
    return table("equivalence", rows, texts.equivalence(rows))


def _diff(xs, ys):
    return [x - y for x, y in zip(xs, ys, strict=True)]


def vector_section(cfg: SerialDepthConfig, progress=None) -> Section:
    sizes = cfg.sizes(VECTOR_SIZES, VECTOR_SIZES[:1])
    advance = stage(progress, i18n.text("lab.progress.vector"), len(sizes))
    rng = random.Random(cfg.seed + 2)
    rows_py = [[rng.random() for _ in range(HIDDEN)] for _ in range(256)]
    rows_np = np.array(rows_py)
    rows = []
    for n in sizes:
        xs = [rng.random() for _ in range(n)]
        timed = _timed(
            cfg,
            scalar=lambda xs=xs: recurrence_final(xs, cfg.a),
            lists=lambda n=n: recurrence_lists(rows_py, n, cfg.a),
            numpy=lambda n=n: recurrence_numpy(rows_np, n, cfg.a),
        )
        growth = {f"{k}_growth": timed[k].best / timed["scalar"].best for k in ("lists", "numpy")}
        per_step = _per(timed, ("lists", "numpy"), n, "us_per_step", 1e6)
        row = {"n": n, "hidden": HIDDEN, **_seconds(timed), **growth, **per_step}
        rows.append({**row, **steadiness(**timed)})
        advance(f"N={n:,}")
    return table("vector", rows, texts.vector(rows, cfg.clock, cfg.a))


def scans_section(cfg: SerialDepthConfig, progress=None) -> Section:
    sizes = cfg.sizes(SCAN_SIZES, SCAN_SIZES[:3])
    advance = stage(progress, i18n.text("lab.progress.scans"), len(sizes) + 1)
    rng = random.Random(cfg.seed + 3)
    rows = []
    for n in sizes:
        xs = [rng.uniform(-1, 1) for _ in range(n)]
        want, serial = serial_scan(xs)
        hs, hs_cost = hillis_steele_scan(xs)
        bl, bl_cost = blelloch_scan(xs)
        scale = max(map(abs, want)) or 1.0
        rows.append(
            {
                "n": n,
                "serial_depth": serial.rounds,
                "serial_work": serial.work,
                "hillis_steele_depth": hs_cost.rounds,
                "hillis_steele_work": hs_cost.work,
                "blelloch_depth": bl_cost.rounds,
                "blelloch_work": bl_cost.work,
                "hillis_steele_equal": close(hs, want),
                "blelloch_equal": close(bl, want),
                "max_rel_diff": max(max(map(abs, _diff(hs, want))), max(map(abs, _diff(bl, want))))
                / scale,
            }
        )
        advance(f"N={n:,}")
    passed = random_trials(rng, cfg.max_n)
    advance(i18n.text("lab.progress.random-inputs"))
    return table("scans", rows, texts.scans(rows, passed, RANDOM_TRIALS))


def random_trials(rng: random.Random, max_n: int | None) -> int:
    """How many of RANDOM_TRIALS random inputs (random lengths, floats and integers) both
    parallel scans get right; integers must match exactly."""
    top = min(2_000, max_n or 2_000)
    passed = 0
    for trial in range(RANDOM_TRIALS):
        n = rng.randint(1, top)
        if trial % 2:
            xs = [rng.randint(-1000, 1000) for _ in range(n)]
            want = serial_scan(xs)[0]
            ok = hillis_steele_scan(xs)[0] == want and blelloch_scan(xs)[0] == want
        else:
            xs = [rng.gauss(0, 1) for _ in range(n)]
            want = serial_scan(xs)[0]
            ok = close(hillis_steele_scan(xs)[0], want) and close(blelloch_scan(xs)[0], want)
        passed += ok
    return passed


# --- plots ------------------------------------------------------------------------------------
def plot_result(doc: dict, out_dir: Path, langs: tuple[str, ...] = LANGS) -> None:
    """Draw the three figures (depth, pure-Python timing, the PyTorch sweep) from a result
    document's rows, so a saved result can be drawn again; each in every language of
    ``langs`` (depth.png, depth.zh.png, ...)."""
    by_key = {s["key"]: s for s in doc["sections"]}
    params, hw = doc["params"], doc["hardware"]
    for lang in langs:
        plot_depth(by_key["depth"]["rows"], out_dir, lang)
        plot_python(by_key["python"]["rows"], out_dir, hw, params["clock"], lang)
        if "torch" in by_key:
            torch_sweep.plot_sweep(
                by_key["torch"]["rows"],
                params["devices"],
                out_dir,
                params["a"],
                hw,
                params["clock"],
                lang,
            )


def plot_depth(rows: list[dict], out_dir: Path, lang: str = "en") -> None:
    say = plot_words(lang)
    save_length_plot(
        out_dir,
        "depth",
        lang,
        say("lab.plot.serial-depth.depth-title"),
        say("lab.plot.serial-depth.depth-steps"),
        _depth_series(rows, say),
    )


def _depth_series(rows: list[dict], say) -> list[Series]:
    n = [r["n"] for r in rows]
    tree = [r["tree_depth"] for r in rows]
    hs = [r["hillis_steele_depth"] for r in rows]
    out = [
        Series(say("lab.plot.serial-depth.recurrence"), n, [r["recurrence_depth"] for r in rows]),
        Series(
            say("lab.plot.serial-depth.blelloch"),
            n,
            [r["blelloch_depth"] for r in rows],
            dashed=True,
        ),
    ]
    if hs == tree:  # equal at powers of two: one line, so neither hides the other
        out.append(Series(say("lab.plot.serial-depth.tree-and-hillis-steele"), n, tree))
    else:
        out.append(Series(say("lab.plot.serial-depth.hillis-steele"), n, hs, dashed=True))
        out.append(Series(say("lab.plot.serial-depth.tree"), n, tree))
    return out


def plot_python(rows: list[dict], out_dir: Path, hardware: dict, clock: str, lang: str = "en"):
    say = plot_words(lang)
    n = [r["n"] for r in rows]
    series = [
        Series(say("lab.plot.serial-depth.python-loop"), n, [r["recurrence_s"] for r in rows]),
        Series(say("lab.plot.serial-depth.python-sum"), n, [r["reduction_s"] for r in rows]),
    ]
    save_length_plot(
        out_dir,
        "python",
        lang,
        say("lab.plot.serial-depth.python-title"),
        say("lab.plot.serial-depth.python-time", clock=say(CLOCK_WORDS[clock])),
        series,
        footnote=machine_words(hardware, lang),
        y_unit="seconds",
        x_unit="decimal",
        x_base=10,
    )


# --- the whole experiment ----------------------------------------------------------------------
def run_serial_depth(cfg: SerialDepthConfig, out_dir: Path, progress=None) -> Result:
    """Run every part, write result.json and the plots into ``out_dir``, return the Result."""
    out_dir = Path(out_dir)
    hardware = hardware_info(cfg.devices)
    result = Result(
        experiment="serial-depth",
        title=texts.SERIAL_DEPTH_TITLE,
        hardware=hardware,
        params={
            **asdict(cfg),
            "timing": "best of repeats; fast calls batched to at least 2 ms per repeat; repeated "
            f"until their interquartile range is within {MAX_SPREAD:.0%} of their median, or "
            "marked too noisy for a verdict",
            "vector_update": "pure-Python lists (element by element) and NumPy (vectorised)",
        },
    )
    result.sections += [
        depth_section(cfg),
        python_section(cfg, progress),
        equivalence_section(cfg, progress),
        vector_section(cfg, progress),
        scans_section(cfg, progress),
    ]
    result.sections += torch_sweep.sweep_sections(cfg, progress)
    plot_result(result.to_dict(), out_dir)
    result.write(out_dir)
    return result
