"""Verdicts that respect noise: every lab timing keeps its repeats' spread, repeats while they
disagree, and a verdict is read only from steady timings; otherwise the result says the
machine was too noisy, in the output and in result.json."""

from __future__ import annotations

import argparse
import itertools
import json

import pytest

from lmscope.commands.lab import common as lab_common
from lmscope.commands.parsers import Options
from lmscope.lab import texts, timing
from lmscope.lab.configs import SerialDepthConfig
from lmscope.lab.results import read_result, shown
from lmscope.lab.serial_depth import run_serial_depth
from lmscope.lab.timing import MAX_REPEATS, Timing, measure, spread, steadiness
from lmscope.lab.torch_sweep import curve_shape

NOISY = "too noisy for a verdict"
NOISY_ZH = "机器太忙"


def fake_clock(steps):
    """A clock that moves by the given amounts, one per reading, round and round."""
    now, moves = [0.0], itertools.cycle(steps)

    def read() -> float:
        now[0] += next(moves)
        return now[0]

    return read


@pytest.fixture
def noisy_clock(monkeypatch):
    """The wall clock replaced by one whose every reading jumps 1 ms or 9 ms: repeats of any
    call then disagree by far more than 10%."""
    monkeypatch.setitem(timing.CLOCKS, "wall", fake_clock([0.001, 0.009, 0.009, 0.001, 0.004]))
    monkeypatch.setattr(timing, "SETTLE_SECONDS", 0.2)
    monkeypatch.setattr("lmscope.lab.torch_sweep.SETTLE_SECONDS", 0.5)


def test_spread_is_the_interquartile_range_over_the_median():
    assert spread([1.0, 1.0, 1.0]) == 0
    assert spread([1.0, 2.0]) == float("inf")  # two repeats say nothing about their spread
    assert spread([1.0, 2.0, 3.0, 4.0, 5.0]) == pytest.approx((4 - 2) / 3)
    steady, shaky = Timing((1.0, 1.02, 1.05)), Timing((1.0, 1.5, 3.0))
    assert steady.steady and steady.best == 1.0 and steady.record()["repeats"] == 3
    assert not shaky.steady and shaky.record()["spread"] == pytest.approx(1.0 / 1.5, abs=1e-4)
    row = steadiness(a=steady, b=shaky)
    assert row["steady"] is False and row["spread_pct"] == pytest.approx(66.7)
    assert row["timings"]["a"]["steady"] and not row["timings"]["b"]["steady"]


def test_a_steady_clock_stops_at_the_repeats_asked_for(monkeypatch):
    monkeypatch.setitem(timing.CLOCKS, "wall", fake_clock([0.001]))
    t = measure(lambda: None, 3)
    assert len(t.samples) == 3 and t.steady and t.spread == 0


def test_a_noisy_clock_repeats_then_says_so(noisy_clock):
    t = measure(lambda: None, 3)
    assert 3 < len(t.samples) <= MAX_REPEATS  # it tried again...
    assert not t.steady and t.spread > timing.MAX_SPREAD  # ...and says it could not settle


@pytest.mark.slow
def test_a_noisy_machine_gets_no_verdict_in_the_output_or_the_result_file(noisy_clock, tmp_path):
    cfg = SerialDepthConfig(max_n=256, repeats=1, quick=True)
    run_serial_depth(cfg, tmp_path)
    doc = read_result(tmp_path)
    sections = {s["key"]: s for s in doc["sections"]}
    for key in ("python", "vector", "torch"):
        section = sections[key]
        assert NOISY in shown(section["verdict"], "en"), key
        assert NOISY_ZH in shown(section["verdict"], "zh"), key
        assert all(r["steady"] is False for r in section["rows"]), key
        assert all(r["spread_pct"] is None or r["spread_pct"] > 10 for r in section["rows"])
        assert "spread_pct" in {c["key"] for c in section["columns"]}
    # numbers are quoted only where they are stable: no speed-up, no slope from noise
    assert "faster (" not in shown(sections["python"]["verdict"], "en")
    assert "log-log slope" not in shown(sections["torch"]["verdict"], "en")
    assert "双对数斜率" not in shown(sections["torch"]["verdict"], "zh")
    # what is not a timing still gets its verdict
    assert NOISY not in shown(sections["depth"]["verdict"], "en")
    json.dumps(doc, allow_nan=False)  # an infinite spread is written as null


def _sweep_rows(noisy: set[tuple[int, str]] = frozenset()):
    rows = []
    for n in (64, 256, 1024, 4096, 16384, 65536):
        times = {"loop": n * 1e-5, "sum": max(2e-6, n * 1e-10), "chunked": 1e-4, "assoc": 2e-4}
        rows.append(
            {
                "device": "cpu",
                "n": n,
                **{f"{k}_s": v for k, v in times.items()},
                "loop_over_sum": times["loop"] / times["sum"],
                "loop_over_chunked": times["loop"] / times["chunked"],
                "chunked_rel_err": 1e-7,
                "assoc_rel_err": 1e-7,
                "timings": {k: {"steady": (n, k) not in noisy} for k in times},
                "steady": not any(p[0] == n for p in noisy),
                "spread_pct": 35.0 if any(p[0] == n for p in noisy) else 2.0,
            }
        )
    shapes = {"cpu": {k: curve_shape(rows, f"{k}_s") for k in ("loop", "sum", "chunked", "assoc")}}
    return rows, shapes


def test_the_sweep_quotes_a_slope_only_from_steady_points():
    rows, shapes = _sweep_rows()
    calm = texts.torch_sweep(rows, shapes, 0.9)["verdict"]
    assert "log-log slope" in shown(calm, "en") and NOISY not in shown(calm, "en")
    rows, shapes = _sweep_rows({(65536, "loop"), (16384, "loop")})
    noisy = texts.torch_sweep(rows, shapes, 0.9)["verdict"]
    assert "the loop grows" not in shown(noisy, "en") and "slower than x.sum()" not in shown(
        noisy, "en"
    )
    assert f"{NOISY} at N = 16,384, 65,536 (the loop)" in shown(noisy, "en")
    assert "x.sum() starts on a floor" in shown(noisy, "en")  # its points were steady
    assert "N = 16,384, 65,536（循环）" in shown(noisy, "zh") and NOISY_ZH in shown(noisy, "zh")


def test_memory_wall_and_race_withhold_noisy_times():
    params = {"heads": 12, "d_head": 64, "batch": 1, "dtype": "float32", "device": "cpu"}
    params |= {"bytes_per_element": 4, "peak_method": "VmHWM", "clock": "cpu"}
    row = {"n": 1024, "theory_bytes": 50_331_648, "naive_peak": None, "sdpa_peak": 5e5}
    row |= {"sdpa_s": 0.0123, "lstm_peak": None, "spread_pct": 40.0, "steady": False}
    row["timings"] = {"sdpa": {"steady": False}}
    verdict = texts.attention([row], params, [])["verdict"]
    assert "12.3 ms" not in shown(verdict, "en") and NOISY in shown(verdict, "en")
    assert "--clock cpu" not in shown(verdict, "en")  # it already was: only a quieter machine helps

    rows = [
        {"arch": "lstm", "model": "LSTM", "epoch_s": 60.0, "flops_per_token": 100},
        {"arch": "gpt", "model": "GPT", "epoch_s": 10.0, "flops_per_token": 150},
    ]
    rows[0] |= {"val_loss": 2.0, "gflops": 1.0, "steady": False, "spread_pct": 31.0}
    rows[1] |= {"val_loss": 2.1, "gflops": 2.0, "steady": True, "spread_pct": 3.0}
    s = {"rival": "lstm", "ratio": 6.0, "claim": [5.0, 10.0], "clock": "wall", "held": "yes"}
    s |= {"context": 512, "epoch_tokens": 1000, "where": "CPU", "steady": False}
    verdict = texts.race_speed(rows, s)["verdict"]
    assert "No verdict on the claim" in shown(verdict, "en") and "held on" not in shown(
        verdict, "en"
    )
    assert "6.00×" not in shown(verdict, "en") and "31%" in shown(verdict, "en")
    assert "不能对课程的说法下结论" in shown(verdict, "zh")


@pytest.mark.parametrize(
    ("argv", "clock", "threads"),
    [
        (["--quick"], "cpu", 1),  # a quick look on the CPU: one thread's CPU time
        (["--quick", "--clock", "wall"], "wall", None),
        (["--quick", "--threads", "2"], "wall", 2),
        ([], "wall", None),
    ],
)
def test_quick_times_cpu_time_on_one_thread_unless_told_otherwise(argv, clock, threads):
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    options = Options(parser, "lab")
    lab_common.add_threads_option(options)
    lab_common.add_clock_option(options, quick=True)
    args = parser.parse_args(argv)
    lab_common.choose_clock(args, ["cpu"], quick=args.quick)
    assert (args.clock, args.threads) == (clock, threads)
    args = parser.parse_args(["--quick"])
    lab_common.choose_clock(args, ["cpu", "cuda"], quick=True)  # CPU time cannot see a GPU
    assert args.clock == "wall"
