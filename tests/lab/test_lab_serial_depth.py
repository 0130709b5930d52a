"""lmscope lab serial-depth: table values, the lesson's functions, and the written result."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lmscope.errors import InvalidInputError
from lmscope.lab.results import SCHEMA, read_result
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
            assert section[field]["en"] and section[field]["zh"], (section["key"], field)
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
