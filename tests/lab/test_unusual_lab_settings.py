"""Serial-depth texts with unusual parameters, from a learner's pass over ``lmscope lab
serial-depth``: one measured size, a decay ``--a`` of 0 or ±1, and the 64-wide exercise's
explanation. Each verdict must speak of what was run, not of a default."""

from __future__ import annotations

import json

import pytest

from lmscope.lab import texts
from lmscope.lab.results import shown
from lmscope.lab.serial_depth import SerialDepthConfig, vector_section
from lmscope.lab.torch_sweep import curve_shape, stability_section


def _sweep_row(n: int, loop_s: float) -> dict:
    return {
        "device": "cpu",
        "n": n,
        "loop_s": loop_s,
        "sum_s": 5e-6,
        "chunked_s": 5e-4,
        "assoc_s": 4e-4,
        "loop_over_sum": loop_s / 5e-6,
        "loop_over_chunked": loop_s / 5e-4,
        "chunked_rel_err": 0.0,
        "assoc_rel_err": 0.0,
    }


def test_one_measured_size_claims_no_slope_or_growth():
    """``--max-n 64 --quick`` times one size: it said "the loop grows steadily (log-log slope
    0.00 ...)", a slope read from a single point."""
    rows = [_sweep_row(64, 1.7e-3)]
    shapes = {"cpu": {k: curve_shape(rows, f"{k}_s") for k in ("loop", "sum", "chunked", "assoc")}}
    assert shapes["cpu"]["loop"]["slope_all"] is None
    verdict = texts.torch_sweep(rows, shapes, 0.9, "cpu")["verdict"]
    for lang in ("en", "zh"):
        assert "0.00" not in shown(verdict, lang), shown(verdict, lang)
    assert "grows" not in shown(verdict, "en") and "one size" in shown(verdict, "en"), shown(
        verdict, "en"
    )
    assert "增长" not in shown(verdict, "zh") and "只测了一个规模" in shown(verdict, "zh"), shown(
        verdict, "zh"
    )
    assert "1.73 ms" in shown(verdict, "en") or "1.7 ms" in shown(verdict, "en")


def test_two_sizes_still_give_the_slope():
    rows = [_sweep_row(64, 1.7e-3), _sweep_row(128, 3.4e-3)]
    shapes = {"cpu": {k: curve_shape(rows, f"{k}_s") for k in ("loop", "sum", "chunked", "assoc")}}
    verdict = shown(texts.torch_sweep(rows, shapes, 0.9, "cpu")["verdict"], "en")
    assert "linearly from the smallest size (log-log slope 1.00" in verdict


@pytest.mark.slow
@pytest.mark.parametrize(
    ("a", "en", "zh"),
    [
        (0.0, "With a = 0 ", "a = 0 时"),
        (1.0, "With a = 1 ", "a = 1 时"),
        (-1.0, "With a = -1 ", "a = -1 时"),
    ],
)
def test_the_stability_verdict_speaks_of_the_users_a(a, en, zh):
    """``--a 0`` (or ±1) is not in the closed form's table, and the verdict spoke of
    a = 0.99 instead, a value the learner never chose."""
    section = stability_section(a)
    verdict = section.verdict
    assert shown(verdict, "en").startswith(en) and "0.99" not in shown(verdict, "en"), shown(
        verdict, "en"
    )
    assert shown(verdict, "zh").startswith(zh) and "0.99" not in shown(verdict, "zh"), shown(
        verdict, "zh"
    )
    if a == 0:
        assert "divides by" in shown(verdict, "en") and "h_t = x_t" in shown(verdict, "en")
    else:
        assert "never overflows" in shown(verdict, "en") and "cumsum" in shown(verdict, "en")


@pytest.mark.slow
def test_a_closed_form_that_never_breaks_is_not_said_to_break_at_zero():
    """a = 0.9999 in float64 stays finite over the whole 1,048,576-long probe: the table said
    "closed form non-finite from N = 0" for it."""
    section = stability_section(0.9999)
    row = next(r for r in section.rows if r["a"] == 0.9999 and r["dtype"] == "float64")
    assert row["breaks_at"] is None
    assert "With a = 0.9999 in float32" in shown(section.verdict, "en")


@pytest.mark.slow
def test_the_users_a_never_breaking_in_float32_is_said_so():
    section = stability_section(0.99999)
    assert shown(section.verdict, "en").startswith(
        "With a = 0.99999 in float32 the one-line closed"
    )
    assert "stays finite" in shown(section.verdict, "en") and "1,048,576" in shown(
        section.verdict, "en"
    )
    assert "1,048,576" in shown(section.verdict, "zh")


def test_the_64_wide_exercise_names_the_decay_that_was_run():
    """The exercise runs h = a*h + x with the learner's --a, but its explanation always said
    h ← 0.9·h + x_t."""
    cfg = SerialDepthConfig(a=0.5, max_n=64, repeats=1, quick=True)
    section = vector_section(cfg)
    assert "h ← 0.5·h + x_t" in shown(section.explain, "en"), shown(section.explain, "en")
    assert "h ← 0.5·h + x_t" in shown(section.explain, "zh"), shown(section.explain, "zh")
    assert "0.9" not in shown(section.explain, "en")


def test_long_times_are_whole_seconds_not_scientific_notation():
    """``lmscope race --context 1 --budget 3s`` printed an epoch time of "3.22e+03 s": an
    exponent on a unit a learner reads as a duration."""
    from lmscope.lab.results import format_cell, format_seconds

    assert format_seconds(3220.4) == "3,220 s"
    assert format_seconds(999.6) == "1,000 s"
    assert format_cell(123_456.7, "seconds") == "123,457 s"
    assert format_seconds(83.86) == "83.9 s" and format_seconds(0.00173) == "1.73 ms"


def test_gradients_refuse_a_single_distance_in_one_line():
    """``lmscope lab gradients --max-k 1`` measured, then died writing result.json with a
    traceback ("Out of range float values are not JSON compliant: nan"): a fall per step needs
    two distances."""
    from lmscope.errors import InvalidInputError
    from lmscope.lab.configs import GradientFlowConfig

    with pytest.raises(InvalidInputError, match=r"^--max-k must be a whole number >= 2, got 1$"):
        GradientFlowConfig(max_k=1)
    assert GradientFlowConfig(max_k=2).max_k == 2


def _flow_row(arch: str, per_step: float) -> dict:
    from lmscope.lab.gradient_flow import LABELS

    return {"model": LABELS[arch], "arch": arch, "per_step": per_step, "last_over_first": 0.5}


def test_one_model_is_not_ranked_against_itself():
    """``--models gpt`` said "Fastest fall: Transformer (char GPT) ...; flattest: Transformer
    (char GPT) ... This is not the textbook order": a ranking of one."""
    from lmscope.lab.gradient_flow import verdict

    said = verdict([_flow_row("gpt", 1.031)], 8)
    for words in ("Fastest", "flattest", "textbook"):
        assert words not in shown(said, "en"), shown(said, "en")
    assert "only one model" in shown(said, "en").lower() and "1.031" in shown(said, "en")
    assert "最快" not in shown(said, "zh") and "教科书" not in shown(said, "zh")
    assert "只测了一个模型" in shown(said, "zh")


def test_the_textbook_order_is_judged_only_when_both_its_ends_were_measured():
    """Without the vanilla RNN the textbook's "RNN fastest" cannot hold or fail; it was said
    not to hold."""
    from lmscope.lab.gradient_flow import verdict

    said = verdict([_flow_row("lstm", 0.9), _flow_row("gpt", 1.0)], 8)
    assert "Fastest fall: LSTM" in shown(said, "en") and "textbook" not in shown(said, "en"), shown(
        said, "en"
    )
    assert "教科书" not in shown(said, "zh")
    full = verdict([_flow_row("rnn", 0.6), _flow_row("lstm", 0.9), _flow_row("gpt", 1.0)], 8)
    assert "This is the textbook order." in shown(full, "en")


def test_a_noisy_lstm_time_still_reads_as_a_sentence():
    """``lmscope lab memory-wall --methods lstm`` on a busy machine said "... was 12 KiB
    (resident memory is tracked in 4 KiB pages), but it had to go, one step after another.":
    the noisy time's stand-in left the sentence without its object."""
    row = {
        "n": 32,
        "theory_bytes": 49152,
        "lstm_state_bytes": 6144,
        "naive_peak": None,
        "naive_s": None,
        "sdpa_peak": None,
        "sdpa_s": None,
        "lstm_peak": 12288,
        "lstm_s": 0.137,
        "timings": {"lstm": {"repeats": 12, "median_s": 0.2, "spread": 0.27, "steady": False}},
        "steady": False,
        "spread_pct": 27.1,
        "naive_over_theory": None,
    }
    params = {
        "heads": 12,
        "d_head": 64,
        "batch": 1,
        "dtype": "float32",
        "bytes_per_element": 4,
        "device": "cpu",
        "clock": "wall",
        "repeats": 3,
        "methods": ["lstm"],
        "peak_method": "peak resident set size, VmHWM, reset through /proc/self/clear_refs",
    }
    said = texts.attention([row], params, [])["verdict"]
    assert "had to go" not in shown(said, "en"), shown(said, "en")
    assert "but it still had to run its 32 steps, one step after another." in shown(said, "en"), (
        shown(said, "en")
    )
    assert "但仍要走 32 步" in shown(said, "zh"), shown(said, "zh")


def _shipped_memory_wall() -> dict:
    from importlib.resources import files

    path = files("lmscope") / "assets" / "lab" / "memory-wall" / "result.json"
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_memory_wall_names_its_methods_in_words_not_code_names():
    """The Chinese verdict read "naive 在 N = 8,192 处停止", the code's name in a Chinese
    sentence; the English one began a sentence with "naive stopped"."""
    doc = _shipped_memory_wall()
    sections = {s["key"]: s for s in doc["sections"]}
    limits = sections["limits"]["rows"]
    rows = sections["attention"]["rows"]
    verdict = texts.attention(rows, doc["params"], limits)["verdict"]
    assert "Stopped at N = 8,192: naive attention did not fit" in shown(verdict, "en")
    assert "朴素注意力在 N = 8,192 处停止" in shown(verdict, "zh") and "naive" not in shown(
        verdict, "zh"
    )
    listed = texts.limits(limits, doc["params"]["budget_bytes"])["verdict"]
    assert "naive" not in shown(listed, "zh") and "lstm" not in shown(listed, "zh")
    assert shown(listed, "zh").startswith("朴素注意力：能放下的最大 N 为 4,096")
    # the shipped result says what the code now writes
    assert sections["attention"]["verdict"] == verdict
    assert sections["limits"]["verdict"] == listed
