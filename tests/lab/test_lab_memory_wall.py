"""lmscope lab memory-wall: theory, KV-cache sizes, budgets, and a real run that hits its budget."""

from __future__ import annotations

import sys

import pytest
import torch

from lmscope.errors import InvalidInputError
from lmscope.lab import memory_wall
from lmscope.lab.memory_wall import (
    MemoryWallConfig,
    kv_cache_bytes_per_token,
    kv_cache_rows,
    lstm_state_bytes,
    measure_method,
    parse_size,
    run_memory_wall,
    scores_bytes,
)
from lmscope.lab.memory_worker import describe_oom, naive_attention, sdpa_attention
from lmscope.lab.results import read_result, shown

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="CPU peak memory is read from Linux's /proc"
)


def test_theoretical_bytes():
    assert scores_bytes(1024, 12) == 1024 * 1024 * 12 * 4 == 50_331_648
    assert scores_bytes(16_384, 12, batch=2, bytes_per_element=2) == 16_384**2 * 12 * 2 * 2
    assert lstm_state_bytes(768) == 2 * 768 * 4


def test_kv_cache_sizes_of_the_gpt2_family():
    assert kv_cache_bytes_per_token(12, 768, 4) == 73_728
    rows = {r["model"]: r for r in kv_cache_rows()}
    assert rows["gpt2"]["per_token_float32"] == 2 * 12 * 768 * 4 == 73_728
    assert rows["gpt2"]["per_token_float16"] == 36_864
    assert rows["gpt2"]["full_float32"] == 73_728 * 1024
    assert rows["gpt2-medium"]["per_token_float32"] == 2 * 24 * 1024 * 4
    assert rows["gpt2-large"]["per_token_float32"] == 2 * 36 * 1280 * 4
    assert rows["gpt2-xl"]["per_token_float16"] == 2 * 48 * 1600 * 2


def test_parse_size():
    assert parse_size("4GB") == 4 * 10**9
    assert parse_size("512MiB") == parse_size("512M") == 512 * 2**20
    assert parse_size("1.5 gib") == int(1.5 * 2**30)
    assert parse_size("1000") == 1000
    for bad in ("", "lots", "4 parsecs", "-1GB"):
        with pytest.raises(InvalidInputError):
            parse_size(bad)


@pytest.mark.parametrize("huge", ["1e400GB", "1e308GB", "1e400"])
def test_parse_size_refuses_a_size_too_large_to_count(huge):
    with pytest.raises(InvalidInputError, match="too large"):
        parse_size(huge)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"min_n": 0},
        {"max_n": -1},
        {"min_n": 512, "max_n": 256},
        {"heads": 0},
        {"repeats": 0},
        {"budget_bytes": 0},
        {"dtype": "int8"},
        {"methods": ("naive", "transformer")},
        {"methods": ()},
    ],
)
def test_bad_config_is_rejected(kwargs):
    with pytest.raises(InvalidInputError):
        MemoryWallConfig(**kwargs)


def test_sizes_double_from_min_to_max():
    assert MemoryWallConfig(min_n=256, max_n=2048).sizes() == [256, 512, 1024, 2048]
    assert MemoryWallConfig(min_n=300, max_n=1000).sizes() == [300, 600]


def test_naive_and_fused_attention_agree():
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 50, 8, generator=gen) for _ in range(3))
    assert torch.allclose(naive_attention(q, k, v), sdpa_attention(q, k, v), atol=1e-5)


def test_oom_messages_are_one_readable_line():
    cpu = RuntimeError(
        "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
        "memory: you tried to allocate 201326592 bytes. Error code 12"
    )
    assert shown(describe_oom(cpu), "en") == "out of memory: could not allocate 192 MiB more"
    gpu = RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total")
    assert shown(describe_oom(gpu), "en") == "out of memory: could not allocate 2.00 GiB more"


def test_a_dying_measuring_process_is_reported_not_raised(monkeypatch):
    class DyingWorker:
        def __init__(self, setup):
            self.ready = {"ready": True}

        def ask(self, job):
            return {"ok": True, "peak_bytes": 1, "seconds": 0.1} if job["n"] < 512 else None

        def death(self):
            return "killed by signal 9 (no error output)"

        def close(self):
            pass

    monkeypatch.setattr(memory_wall, "Worker", DyingWorker)
    steps = []
    cfg = MemoryWallConfig(min_n=256, max_n=2048)
    found = measure_method(cfg, "naive", 10**9, lambda detail=None: steps.append(detail))
    assert list(found["points"]) == [256]
    assert found["stopped_at"] == 512 and "signal 9" in shown(found["reason"], "en")
    assert len(steps) == 4  # the progress bar still completes


@pytest.mark.slow
@linux_only
def test_tiny_run_stops_at_the_budget_and_reports_it(tmp_path):
    # 2 heads of 16: one score matrix is 0.5 MiB at N=256 and 2 MiB at N=512. Naive attention
    # holds about two at once, so with 3 MiB it fits at 256 and must stop at 512; the fused
    # kernel needs only O(N) and runs to the end.
    cfg = MemoryWallConfig(
        min_n=256,
        max_n=2048,
        heads=2,
        d_head=16,
        budget_bytes=3 * 2**20,
        methods=("naive", "sdpa"),
        threads=1,
    )
    result = run_memory_wall(cfg, tmp_path)
    doc = read_result(tmp_path)
    assert doc["experiment"] == "memory-wall" and doc["params"]["budget_bytes"] == 3 * 2**20
    sections = {s["key"]: s for s in doc["sections"]}
    limits = {r["method"]: r for r in sections["limits"]["rows"]}
    assert limits["naive"]["largest_fit"] == 256
    assert limits["naive"]["first_not_fit"] == 512
    assert shown(limits["naive"]["reason"], "en").startswith("out of memory")
    assert limits["sdpa"]["first_not_fit"] is None and limits["sdpa"]["largest_fit"] == 2048
    rows = {r["n"]: r for r in sections["attention"]["rows"]}
    assert rows[256]["naive_peak"] >= rows[256]["theory_bytes"]  # at least one score matrix
    assert rows[512]["naive_peak"] is None
    assert rows[2048]["sdpa_peak"] < rows[2048]["theory_bytes"] / 10
    assert "512" in shown(sections["attention"]["verdict"], "en")
    assert "512" in shown(sections["limits"]["verdict"], "zh")
    assert (tmp_path / "memory-wall.png").stat().st_size > 10_000
    assert (tmp_path / "memory-wall.svg").read_text().lstrip().startswith("<?xml")
    assert result.to_dict()["sections"][2]["rows"][0]["per_token_float32"] == 73_728


def _params(**extra):
    params = {"heads": 2, "d_head": 8, "batch": 1, "dtype": "float32", "device": "cpu"}
    params |= {"bytes_per_element": 4, "budget_bytes": 1 << 30, "clock": "wall"}
    params |= {"peak_method": "peak resident set size, VmHWM, reset through /proc/self/clear_refs"}
    return params | extra


def _lstm_row(repeats: int, spread: float | None):
    timing = {"repeats": repeats, "median_s": 0.1, "spread": spread, "steady": False}
    return {
        "n": 512,
        "theory_bytes": 1 << 20,
        "naive_peak": None,
        "sdpa_peak": None,
        "lstm_peak": 8192,
        "lstm_state_bytes": 6144,
        "lstm_s": 0.1,
        "timings": {"lstm": timing},
        "steady": False,
        "spread_pct": None if spread is None else 100 * spread,
    }


def test_too_few_repeats_is_said_as_the_cause_not_a_noisy_machine():
    from lmscope.lab import texts

    verdict = texts.attention([_lstm_row(2, None)], _params(), [])["verdict"]
    assert "too noisy" not in shown(verdict, "en") and "机器太忙" not in shown(verdict, "zh")
    assert "only 2 repeats" in shown(verdict, "en") and "--repeats 3" in shown(verdict, "en")
    assert "只有 2 次重复" in shown(verdict, "zh") and "--repeats 3" in shown(verdict, "zh")
    noisy = shown(texts.attention([_lstm_row(5, 0.4)], _params(), [])["verdict"], "en")
    assert "Times: The machine was too noisy" in noisy  # no capital after the colon


def test_how_the_peak_was_measured_is_said_in_chinese():
    from lmscope.lab import texts

    explain = texts.attention([_lstm_row(5, 0.01)], _params(), [])["explain"]
    assert "VmHWM" in shown(explain, "en") and "resident set" in shown(explain, "en")
    assert "resident set" not in shown(explain, "zh") and "常驻内存峰值" in shown(explain, "zh")


def test_a_method_with_no_size_that_fit_says_so():
    from lmscope.lab import texts

    rows = [{"method": "naive", "largest_fit": None, "first_not_fit": 256, "reason": "oom"}]
    verdict = texts.limits(rows, 1024)["verdict"]
    assert shown(verdict, "en") == "naive attention: not even N = 256 fit; it stopped there."
    assert "none" not in shown(verdict, "en") and "无，" not in shown(verdict, "zh")
    assert "连 N = 256 都放不下" in shown(verdict, "zh")
