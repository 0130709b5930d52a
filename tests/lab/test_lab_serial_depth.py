"""lmscope lab serial-depth: table values, the lesson's functions, and the written result."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lmscope.errors import InvalidInputError
from lmscope.lab.results import SCHEMA, read_result, shown
from lmscope.lab.serial_depth import (
    SerialDepthConfig,
    depth_section,
    mean_reduction,
    recurrence_final,
    recurrence_lists,
    recurrence_numpy,
    run_serial_depth,
)
from lmscope.lab.torch_sweep import curve_shape, loglog_slope


def test_depth_table_values():
    rows = {r["n"]: r for r in depth_section(SerialDepthConfig()).rows}
    assert sorted(rows) == [64, 256, 1024, 4096, 16384, 65536, 262144]
    assert rows[64]["recurrence_depth"] == 64 and rows[64]["tree_depth"] == 6
    big = rows[262144]
    assert (big["tree_depth"], big["hillis_steele_depth"], big["blelloch_depth"]) == (18, 18, 36)
    assert big["ratio"] == pytest.approx(262144 / 18)
    assert big["work"] == 262143


def test_max_n_caps_every_size_list():
    cfg = SerialDepthConfig(max_n=1000)
    assert [r["n"] for r in depth_section(cfg).rows] == [64, 256]
    assert cfg.sizes([1000, 10_000]) == [1000]
    assert SerialDepthConfig(max_n=10).sizes([1000, 10_000]) == [10]  # never empty


@pytest.mark.parametrize(
    "kwargs", [{"max_n": 0}, {"max_n": -5}, {"repeats": 0}, {"a": float("nan")}, {"a": 1.01}]
)
def test_bad_config_is_rejected(kwargs):
    with pytest.raises(InvalidInputError):
        SerialDepthConfig(**kwargs)


def test_lesson_functions_compute_what_they_claim():
    xs = [0.5, -1.0, 2.0, 0.25]
    h = 0.0
    for x in xs:
        h = 0.9 * h + x
    assert recurrence_final(xs, 0.9) == pytest.approx(h)
    assert mean_reduction(xs) == pytest.approx(sum(xs) / 4)
    rows = np.random.default_rng(0).random((4, 64))
    want = np.zeros(64)
    for t in range(10):
        want = 0.9 * want + rows[t % 4]
    assert np.allclose(recurrence_lists(rows.tolist(), 10, 0.9), want)
    assert np.allclose(recurrence_numpy(rows, 10, 0.9), want)


def test_curve_shape_finds_floor_knee_and_slopes():
    rows = [{"n": n, "t_s": max(1e-6, n * 1e-9)} for n in (64, 256, 1024, 4096, 16384, 65536)]
    shape = curve_shape(rows, "t_s")
    assert shape["floor_s"] == 1e-6
    assert shape["knee_n"] == 4096  # first time above twice the floor
    assert shape["slope_after_knee"] == pytest.approx(1.0)
    assert loglog_slope([1, 10, 100], [5, 50, 500]) == pytest.approx(1.0)
    assert curve_shape(rows[:3], "t_s")["knee_n"] is None


@pytest.mark.slow
def test_small_run_writes_result_and_plots(tmp_path):
    cfg = SerialDepthConfig(max_n=256, repeats=1, quick=True)
    result = run_serial_depth(cfg, tmp_path)
    doc = read_result(tmp_path)
    assert doc == json.loads(json.dumps(result.to_dict()))
    assert doc["schema"] == SCHEMA and doc["experiment"] == "serial-depth"
    assert doc["hardware"]["cpu"] and doc["hardware"]["torch"]
    keys = [s["key"] for s in doc["sections"]]
    assert keys == ["depth", "python", "equivalence", "vector", "scans", "torch", "stability"]
    for section in doc["sections"]:
        for field in ("title", "explain", "verdict"):
            assert shown(section[field], "en") and shown(section[field], "zh"), (
                section["key"],
                field,
            )
        assert section["rows"], section["key"]
        for row in section["rows"]:
            assert {c["key"] for c in section["columns"]} <= set(row)
        if section["plot"]:
            png = tmp_path / section["plot"]["png"]
            svg = tmp_path / section["plot"]["svg"]
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            assert b"<svg" in svg.read_bytes()[:2000]
    sections = {s["key"]: s for s in doc["sections"]}
    assert all(r["equal"] for r in sections["equivalence"]["rows"])
    scans = sections["scans"]["rows"][0]
    assert (scans["n"], scans["hillis_steele_work"], scans["blelloch_work"]) == (8, 17, 14)
    torch_rows = sections["torch"]["rows"]
    assert [r["n"] for r in torch_rows] == [64, 256]
    assert all(r["chunked_rel_err"] < 1e-5 and r["assoc_rel_err"] < 1e-5 for r in torch_rows)
    assert all(r["loop_s"] > r["sum_s"] for r in torch_rows)


def test_best_time_with_either_clock():
    from lmscope.lab.timing import best_time

    for clock in ("wall", "cpu"):
        assert 0 < best_time(lambda: sum(range(1000)), 2, clock=clock) < 0.1
    with pytest.raises(InvalidInputError):
        best_time(lambda: None, 1, clock="sundial")
    with pytest.raises(InvalidInputError):
        best_time(lambda: None, 0)


# --- the verdicts' words agree with their tables, at any size ---------------------------------
def _py_row(n: int, ratio: float, steady: bool = True) -> dict:
    return {
        "n": n,
        "recurrence_s": 1e-6 * n * ratio,
        "reduction_s": 1e-6 * n,
        "ratio": ratio,
        "recurrence_ns_per_item": 1000 * ratio,
        "reduction_ns_per_item": 1000.0,
        "spread_pct": 5.0 if steady else 30.0,
        "steady": steady,
    }


def test_the_ratio_range_says_it_leaves_out_the_noisy_sizes():
    from lmscope.lab import texts

    rows = [_py_row(1000, 7.45), _py_row(10_000, 8.82, steady=False), _py_row(100_000, 7.39)]
    verdict = texts.python_timing(rows, 0.9)["verdict"]
    assert "across the steady sizes the ratio stays between 7.39× and 7.45×" in shown(verdict, "en")
    assert "在各个稳定的规模上" in shown(verdict, "zh")
    calm = texts.python_timing([rows[0], rows[2]], 0.9)["verdict"]
    assert "across sizes the ratio" in shown(calm, "en")


def test_a_curve_that_leaves_its_floor_at_the_last_size_has_no_after_that():
    from lmscope.lab import texts

    shape = {"knee_n": 65_536, "slope_after_knee": None, "floor_s": 1e-6, "marginal_s": None}
    said = texts._leaves_floor(shape, 65_536)
    en, zh = shown(said, "en"), shown(said, "zh")
    assert "after" not in en and "then" not in en and "此后" not in zh
    assert "65,536" in en and "largest size measured" in en and "最大规模" in zh


def test_small_sizes_and_ratios_below_one_are_said_right():
    from lmscope.lab import texts

    depth = {"n": 1, "recurrence_depth": 1, "tree_depth": 0, "ratio": 1.0, "work": 0}
    said = shown(texts.depth([depth])["verdict"], "en")
    assert "1 dependent step deep" in said and "1× shallower" not in said
    slower = texts.python_timing([_py_row(1, 0.668)], 0.9)["verdict"]
    assert "sum()/len 1 µs, 1.50× slower" in shown(slower, "en") and "faster" not in shown(
        slower, "en"
    )
    assert "慢 1.50 倍" in shown(slower, "zh") and "快" not in shown(slower, "zh")
    eq = {"n": 1, "a": 0.9, "serial_steps": 1, "hillis_steele_rounds": 0}
    eq |= {"blelloch_rounds": 0, "hillis_steele_rel_diff": 0.0, "blelloch_rel_diff": 0.0}
    assert "needs 1 step." in shown(texts.equivalence([eq | {"equal": True}])["verdict"], "en")


def test_ratios_keep_three_significant_digits_in_one_column():
    from lmscope.lab.results import format_cell

    assert [format_cell(v, "ratio") for v in (10.666, 102.4, 7.454, 0.1827, 135_114)] == [
        "10.7×",
        "102×",
        "7.45×",
        "0.183×",
        "135,114×",
    ]


def test_a_loop_faster_than_the_chunked_scan_is_not_called_0x_slower():
    from lmscope.lab import texts

    row = {"device": "cpu", "n": 1, "sum_s": 4.5e-6, "chunked_s": 2.6e-4, "assoc_s": 2.7e-5}
    row |= {"loop_s": 4.7e-5, "chunked_rel_err": 0.0, "assoc_rel_err": 0.0}
    row |= {"loop_over_sum": 10.5, "loop_over_chunked": 0.183}
    flat = {"floor_s": 4.5e-6, "knee_n": None, "slope_after_knee": None}
    shapes = {"cpu": {"loop": {"slope_all": 0.0, "per_item_s": 4.7e-5}, "sum": flat}}
    shapes["cpu"]["chunked"] = flat | {"floor_s": 2.6e-4}
    verdict = texts.torch_sweep([row], shapes, 0.9)["verdict"]
    assert "10.5× slower than x.sum() and 5.46× faster than the chunked scan" in shown(
        verdict, "en"
    )
    assert "the same 1 state (" in shown(verdict, "en")
    assert "比 x.sum() 慢 10.5 倍，比分块扫描快 5.46 倍" in shown(verdict, "zh")
