"""Controls and gate charts on the explainer and the char-RNN page, in headless Chromium:
the prompt box that stayed two rows high while Generate appended a third line (cut in half
until a scroll), an error beside Sample that outlived the model or text it was about, the
temperature readout written "0.8" then "0.80", and gate charts without a 0/1 scale whose
rows ran into each other. Screenshots go to test-artifacts/ (gitignored)."""

from __future__ import annotations

import pytest
import torch
from webtools import SIZES, at_size, shot, to_chinese, traces, wait_for_trace

pytestmark = pytest.mark.browser

CHARS = "\n !\"',-.:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _rnn(cell: str, name: str):
    from lmscope.engine.rnn_model import RNNLanguageModel
    from lmscope.models.rnn import CharRNN, CharRNNConfig
    from lmscope.tokenizers import CharTokenizer

    torch.manual_seed(0)
    net = CharRNN(CharRNNConfig(vocab_size=len(CHARS), cell=cell, hidden=8, layers=1))
    return RNNLanguageModel(net, CharTokenizer(CHARS), name=name)


@pytest.fixture(scope="module")
def app(tiny_model):
    from lmscope.web import create_app

    return create_app(tiny_model, rnn=[_rnn("lstm", "small-lstm"), _rnn("gru", "small-gru")])


# --- the explainer's prompt box -------------------------------------------------------------


def _box(page) -> dict:
    return page.get_by_test_id("prompt-input").evaluate(
        """b => ({client: b.clientHeight, scroll: b.scrollHeight,
                  line: parseFloat(getComputedStyle(b).lineHeight),
                  perLine: Math.floor((b.clientWidth - 20) /
                    (() => { const c = document.createElement('canvas').getContext('2d');
                             const st = getComputedStyle(b);
                             c.font = `${st.fontSize} ${st.fontFamily}`;
                             return c.measureText('word ').width; })())})"""
    )


def _shows_all(page) -> None:
    box = _box(page)
    assert box["scroll"] <= box["client"] + 1, f"the prompt box hides part of its text: {box}"


@pytest.mark.parametrize(("width", "lang"), SIZES)
def test_the_prompt_box_grows_when_generation_adds_a_line(page, width, lang):
    at_size(page, width, lang)
    prompt = page.get_by_test_id("prompt-input")
    two_rows = _box(page)["client"]
    # typed text nearly two lines long: the box shows it whole
    words = "word " * int(_box(page)["perLine"] * 1.8)
    before = traces(page)
    prompt.fill(words.strip())
    wait_for_trace(page, before)
    _shows_all(page)
    # Generate appends enough for a third line: the box grows to show it, without a scroll
    page.get_by_test_id("generate-count").fill("30")
    before = traces(page)
    page.get_by_test_id("generate-n").click()
    wait_for_trace(page, before)
    box = _box(page)
    assert box["scroll"] > two_rows + box["line"] / 2, ("generation added no line", box)
    _shows_all(page)
    assert box["client"] > two_rows
    prompt.scroll_into_view_if_needed()
    shot(page, f"leftovers-prompt-{width}-{lang}")
    # a long text stops growing at a sensible height and scrolls
    prompt.fill("\n" * 40)  # no need to wait for its trace: the box fits on input
    box = _box(page)
    assert two_rows < box["client"] <= 0.5 * 900, box
    assert box["scroll"] > box["client"]
    # and an emptied box goes back to two rows
    prompt.fill("")
    assert _box(page)["client"] == two_rows


# --- the char-RNN page ----------------------------------------------------------------------


def _open_rnn(page) -> None:
    page.goto(page.server + "/rnn")
    page.wait_for_selector("body[data-ready='1']")


def _visible(page, testid: str) -> bool:
    return page.get_by_test_id(testid).is_visible()


def test_a_sample_error_clears_when_its_text_or_model_changes(page):
    _open_rnn(page)
    error = "rnn-sample-error"
    page.get_by_test_id("rnn-n").fill("0")
    page.get_by_test_id("rnn-sample-go").click()
    assert _visible(page, error)
    page.get_by_test_id("rnn-n").fill("50")  # the length it was about, corrected
    assert not _visible(page, error)

    page.get_by_test_id("rnn-n").fill("0")
    page.get_by_test_id("rnn-sample-go").click()
    assert _visible(page, error)
    page.get_by_test_id("rnn-input").press_sequentially("x")
    assert not _visible(page, error)

    page.get_by_test_id("rnn-sample-go").click()
    assert _visible(page, error)
    page.locator("#rnn-model").select_option("small-gru")
    assert not _visible(page, error)


def test_a_finder_error_clears_when_the_text_changes(page):
    _open_rnn(page)
    page.get_by_test_id("rnn-input").fill("short text")
    page.get_by_test_id("find-text").click()
    assert _visible(page, "rnn-cells-error")
    page.get_by_test_id("rnn-input").press_sequentially(" more")
    assert not _visible(page, "rnn-cells-error")


def test_the_temperature_readout_keeps_one_format(page):
    _open_rnn(page)
    out = page.locator("#rnn-temp-value")
    assert out.inner_text() == "0.80"
    page.get_by_test_id("rnn-temp").evaluate(
        "e => { e.value = '1.2'; e.dispatchEvent(new Event('input', {bubbles: true})); }"
    )
    assert out.inner_text() == "1.20"
    to_chinese(page)
    assert out.inner_text() == "1.20"


def _gate_rows(page) -> list[dict]:
    page.wait_for_selector("#rnn-gates svg.spark")
    return page.locator("#rnn-gates .gate-row").evaluate_all(
        """rows => rows.map(r => {
            const y = (sel) => { const b = r.querySelector(sel).getBoundingClientRect();
                                 return b.top + b.height / 2; };
            const label = (v) => r.querySelector(`.gate-scale [data-value='${v}']`);
            return {
              gate: r.querySelector('svg').dataset.gate,
              one: y('svg .edge-1'), zero: y('svg .edge-0'),
              label1: label(1) && label(1).textContent, label0: label(0) && label(0).textContent,
              label1y: label(1) && y(".gate-scale [data-value='1']"),
              label0y: label(0) && y(".gate-scale [data-value='0']"),
              stroke: getComputedStyle(r.querySelector('svg .trace')).stroke,
            };
        })"""
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_gate_charts_have_a_scale_and_rows_apart(page, lang):
    _open_rnn(page)
    if lang == "zh":
        to_chinese(page)
    rows = _gate_rows(page)
    assert [r["gate"] for r in rows] == ["i", "f", "o"], rows
    for r in rows:
        # 0 and 1 marks beside the chart, level with the chart's own 0 and 1 lines
        assert (r["label1"], r["label0"]) == ("1", "0"), r
        assert abs(r["label1y"] - r["one"]) <= 3 and abs(r["label0y"] - r["zero"]) <= 3, r
    for upper, lower in zip(rows, rows[1:], strict=False):
        # one gate's 0 line and the next gate's 1 line are clearly apart, not one line
        assert lower["one"] - upper["zero"] >= 16, (upper, lower)
        assert upper["stroke"] != lower["stroke"], (upper, lower)
    page.get_by_test_id("rnn-gates").scroll_into_view_if_needed()
    page.get_by_test_id("rnn-gates").screenshot(path=_artifact(f"leftovers-gates-{lang}"))


def _artifact(name: str) -> str:
    from webtools import ARTIFACTS

    ARTIFACTS.mkdir(exist_ok=True)
    return str(ARTIFACTS / f"{name}.png")


def test_gate_charts_fit_a_phone(page):
    _open_rnn(page)
    page.set_viewport_size({"width": 390, "height": 900})
    rows = _gate_rows(page)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, width
    assert all(r["label1"] == "1" for r in rows)
    page.get_by_test_id("rnn-gates").scroll_into_view_if_needed()
    page.get_by_test_id("rnn-gates").screenshot(path=_artifact("leftovers-gates-390"))


def test_the_rnn_text_box_grows_with_an_example_and_a_sample(page):
    """The same box on /rnn: five rows high, it cut the ten-line code example and a sample
    used as text, until a scroll."""
    _open_rnn(page)
    box = page.get_by_test_id("rnn-input")
    box.fill("a")  # the page opens on a long passage: its least height is a short text's
    five_rows = box.evaluate("b => b.clientHeight")
    page.get_by_test_id("example").nth(3).click()
    sizes = box.evaluate("b => [b.scrollHeight, b.clientHeight]")
    assert sizes[0] > five_rows and sizes[0] <= sizes[1] + 1, (five_rows, sizes)
    page.get_by_test_id("rnn-n").fill("600")
    page.get_by_test_id("rnn-sample-go").click()
    page.wait_for_function("() => !document.getElementById('rnn-sample-use').disabled")
    page.get_by_test_id("rnn-sample-use").click()
    sizes = box.evaluate("b => [b.scrollHeight, b.clientHeight]")
    assert sizes[0] <= sizes[1] + 1 or sizes[1] >= 0.4 * 1000 - 2, sizes
    shot(page, "leftovers-rnn-text")


def test_a_unit_error_clears_when_the_model_changes(page):
    """The refusal "unit 99 is out of range 0–7" stayed under the other model's controls."""
    _open_rnn(page)
    unit = page.get_by_test_id("rnn-unit")
    unit.fill("99")
    unit.press("Enter")
    assert _visible(page, "rnn-unit-error")
    page.locator("#rnn-model").select_option("small-gru")
    assert not _visible(page, "rnn-unit-error")


def test_a_sample_goes_with_the_model_that_wrote_it(page):
    """After a switch of model the last model's sample stayed under Sample, and "Read this
    text" read it as if the new model had written it."""
    _open_rnn(page)
    page.get_by_test_id("rnn-n").fill("40")
    page.get_by_test_id("rnn-sample-go").click()
    page.wait_for_function("() => !document.getElementById('rnn-sample-use').disabled")
    assert page.get_by_test_id("rnn-sample-out").inner_text()
    page.locator("#rnn-model").select_option("small-gru")
    assert page.get_by_test_id("rnn-sample-out").inner_text() == ""
    assert page.get_by_test_id("rnn-sample-use").is_disabled()
    assert page.get_by_test_id("rnn-sample-go").is_enabled()
