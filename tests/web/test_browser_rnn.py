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
from webtools import ARTIFACTS

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


def wait_until(page, check, timeout_s: float = 30):
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
    first.wait_for(timeout=30_000)
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

    # a unit that does not exist: one readable line
    page.get_by_test_id("rnn-unit").fill("99")
    page.get_by_test_id("rnn-unit").press("Enter")
    error = page.get_by_test_id("error")
    error.wait_for(state="visible")
    assert "unit 99 does not exist" in error.inner_text()

    # Chinese
    page.get_by_test_id("rnn-unit").fill("7")
    page.get_by_test_id("rnn-unit").press("Enter")
    wait_until(page, lambda: page.get_by_test_id("error").is_hidden())
    page.get_by_test_id("lang-toggle").click()
    wait_until(page, lambda: title.inner_text().startswith("第 0 层"))
    assert "可解释的细胞" in page.locator("body").inner_text()
    page.screenshot(path=str(ARTIFACTS / "rnn-page-zh.png"), full_page=True)
