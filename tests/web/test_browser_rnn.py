"""The char-RNN neurons page in headless Chromium: coloured text for a unit, the readout on
hover, the finder's list opening a unit with one click, sampling, a bad unit, and Chinese.

The server serves a small LSTM with a hand-planted quote cell (layer 0, unit 7), so the page
must find that unit and colour the inside of quotes red. Every request to anything but the
server fails the test (conftest.py). Screenshots go to test-artifacts/ (gitignored).
"""

from __future__ import annotations

import time

import pytest
import torch
from webtools import ARTIFACTS, HANG_S

pytestmark = pytest.mark.browser

CHARS = "\n !\"',-.:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
PARAGRAPH = (
    'The prince said "nothing at all" and went out.\n'
    'Then "yes, yes" she answered, and they sat down.\n'
)


@pytest.fixture(scope="module")
def app():
    import lmscope
    from lmscope.engine.rnn_model import RNNLanguageModel
    from lmscope.interpret.planted import plant_quote_cell
    from lmscope.models.rnn import CharRNN, CharRNNConfig
    from lmscope.tokenizers import CharTokenizer
    from lmscope.web import create_app

    torch.manual_seed(0)
    net = CharRNN(CharRNNConfig(vocab_size=len(CHARS), cell="lstm", hidden=16, layers=2))
    plant_quote_cell(net, CHARS.index('"'), unit=7)
    rnn = RNNLanguageModel(net, CharTokenizer(CHARS), name="quote-lstm")
    return create_app(lmscope.load("shakespeare"), rnn=[rnn])


@pytest.fixture(scope="module")
def page_options() -> dict:
    return {"path": "/rnn", "allowed": ("400",)}  # a refused unit is logged as a failed load


def rgb_of(locator) -> tuple[int, ...]:
    colour = locator.evaluate("e => getComputedStyle(e).backgroundColor")
    return tuple(int(x) for x in colour[colour.index("(") + 1 : -1].split(","))


def wait_until(page, check, timeout_s: float = HANG_S):
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "timed out"
        page.wait_for_timeout(50)


def test_neurons_page(page):
    ARTIFACTS.mkdir(exist_ok=True)
    assert "quote-lstm" in page.get_by_test_id("rnn-facts").inner_text()

    # the text, and the planted unit picked from the finder's list with one click
    text = PARAGRAPH * 3
    page.get_by_test_id("rnn-input").fill(text)
    wait_until(page, lambda: page.locator("#rnn-colored .ch").count() == len(text))
    page.get_by_test_id("find-text").click()
    first = page.locator("[data-testid=cell-unit][data-feature=inside_quotes]").first
    first.wait_for()
    assert first.locator("code").inner_text() == "0:7 c"
    first.click()
    title = page.get_by_test_id("rnn-title")
    wait_until(page, lambda: title.inner_text().startswith("Layer 0, unit 7"))

    # inside quotes red, after the closing quote blue: the unit's real values, coloured
    inside = text.index('"nothing') + 3
    outside = text.index("went")
    red = rgb_of(page.locator(f"#rnn-colored [data-step='{inside}']"))
    blue = rgb_of(page.locator(f"#rnn-colored [data-step='{outside}']"))
    assert red[0] > 200 and red[1] < 150 and blue[2] > blue[0] + 60, (red, blue)

    # hover: the value and the top-5 next characters
    page.locator(f"#rnn-colored [data-step='{inside}']").hover()
    assert page.get_by_test_id("readout-pred").count() == 5
    value = float(page.get_by_test_id("readout-value").inner_text().replace("−", "-"))
    assert 0.5 < value <= 1.0
    page.screenshot(path=str(ARTIFACTS / "rnn-page.png"), full_page=True)

    # sampling with a fixed seed, then reading the sample
    page.get_by_test_id("rnn-n").fill("80")
    page.get_by_test_id("rnn-sample-go").click()
    out = page.get_by_test_id("rnn-sample-out")
    wait_until(page, lambda: len(out.inner_text()) >= 60 and "…" not in out.inner_text())
    page.get_by_test_id("rnn-sample-use").click()
    wait_until(page, lambda: page.get_by_test_id("rnn-input").input_value() != text)

    # a unit that does not exist: one readable line, beside the unit box
    page.get_by_test_id("rnn-unit").fill("99")
    page.get_by_test_id("rnn-unit").press("Enter")
    error = page.get_by_test_id("rnn-unit-error")
    error.wait_for(state="visible")
    assert "Unit 99 does not exist" in error.inner_text()

    # Chinese
    page.get_by_test_id("rnn-unit").fill("7")
    page.get_by_test_id("rnn-unit").press("Enter")
    wait_until(page, lambda: error.is_hidden())
    page.get_by_test_id("lang-toggle").click()
    wait_until(page, lambda: title.inner_text().startswith("第 0 层"))
    assert "可解释的细胞" in page.locator("body").inner_text()
    page.screenshot(path=str(ARTIFACTS / "rnn-page-zh.png"), full_page=True)


def test_bad_input_is_refused_next_to_its_control_in_both_languages(page):
    """Limits on the inputs, client-side checks and the server's lines in en/zh, each shown
    beside the control that caused it (not in the top banner); the sample box is kept."""
    page.get_by_test_id("rnn-input").fill(PARAGRAPH)
    wait_until(page, lambda: page.locator("#rnn-colored .ch").count() == len(PARAGRAPH))
    assert page.get_by_test_id("rnn-input").get_attribute("maxlength") == "3000"
    assert "/ 3,000" in page.get_by_test_id("rnn-count").inner_text()
    assert page.get_by_test_id("rnn-n").get_attribute("max") == "2000"
    page.get_by_test_id("rnn-n").fill("20")
    page.get_by_test_id("rnn-sample-go").click()
    out = page.get_by_test_id("rnn-sample-out")
    wait_until(page, lambda: len(out.inner_text()) >= 15 and "…" not in out.inner_text())
    kept = out.inner_text()
    sample_error = page.get_by_test_id("rnn-sample-error")
    for field, value, words in (
        ("rnn-n", "5000", "1 to 2,000"),
        ("rnn-n", "0", "1 to 2,000"),
        ("rnn-n", "-5", "1 to 2,000"),
        ("rnn-seed", "-3", "seed"),
    ):
        page.get_by_test_id("rnn-n").fill("20")
        page.get_by_test_id(field).fill(value)
        page.get_by_test_id("rnn-sample-go").click()
        sample_error.wait_for(state="visible")
        assert words in sample_error.inner_text(), (field, value, sample_error.inner_text())
        assert out.inner_text() == kept and page.get_by_test_id("error").is_hidden()
    page.get_by_test_id("rnn-seed").fill("42")

    # the finder on a short text: why, beside its buttons
    page.get_by_test_id("find-text").click()
    cells_error = page.get_by_test_id("rnn-cells-error")
    cells_error.wait_for(state="visible")
    assert "200 characters" in cells_error.inner_text()

    # a unit that does not exist: refused beside the box, which goes back to the shown unit
    title = page.get_by_test_id("rnn-title").inner_text()
    for bad in ("9999", "-1"):
        page.get_by_test_id("rnn-unit").fill(bad)
        page.get_by_test_id("rnn-unit").press("Enter")
        unit_error = page.get_by_test_id("rnn-unit-error")
        unit_error.wait_for(state="visible")
        words = unit_error.inner_text()
        assert f"Unit {bad} does not exist" in words and "0–15" in words, words
        assert page.get_by_test_id("rnn-title").inner_text() == title
        assert (
            page.get_by_test_id("rnn-unit").input_value() == title.split("unit ")[1].split(":")[0]
        )

    # Chinese: the same refusals in Chinese, and the server's own lines translated
    page.get_by_test_id("lang-toggle").click()
    page.wait_for_function("() => document.documentElement.lang === 'zh-CN'")
    assert "单元 -1 不存在" in unit_error.inner_text()  # said again in the new language
    page.get_by_test_id("rnn-n").fill("5000")
    page.get_by_test_id("rnn-sample-go").click()
    wait_until(page, lambda: "字符数" in sample_error.inner_text())
    page.get_by_test_id("rnn-n").fill("20")
    page.get_by_test_id("rnn-input").fill("你好，世界")
    text_error = page.get_by_test_id("rnn-text-error")
    text_error.wait_for(state="visible")
    assert "词表" in text_error.inner_text() and "invalid" not in text_error.inner_text()
    page.get_by_test_id("find-text").click()
    wait_until(page, lambda: "200 个字符" in cells_error.inner_text())
    shot_path = ARTIFACTS / "rnn-errors-zh.png"
    page.screenshot(path=str(shot_path), full_page=True)
    page.get_by_test_id("lang-toggle").click()
