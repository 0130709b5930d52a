"""The char-RNN page in Chinese: the finder's tooltips ("r (choosing) 0.188"), a code model's
"(code)" in the model list and the unit arrows' names for a screen reader stayed English."""

from __future__ import annotations

import pytest
import torch

pytestmark = pytest.mark.browser

CHARS = "\n !\"',-.:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
TEXT = 'The prince said "nothing at all" and went out.\nThen "yes" she said.\n' * 3


@pytest.fixture(scope="module")
def app():
    import lmscope
    from lmscope.engine.rnn_model import RNNLanguageModel
    from lmscope.models.rnn import CharRNN, CharRNNConfig
    from lmscope.tokenizers import CharTokenizer
    from lmscope.web import create_app

    torch.manual_seed(0)
    config = CharRNNConfig(vocab_size=len(CHARS), cell="lstm", hidden=16, layers=1)
    prose = RNNLanguageModel(CharRNN(config), CharTokenizer(CHARS), name="prose-lstm")
    # a model trained on Python code: the page lists it as a code model
    code_meta = {"training": {"corpus": "python-stdlib"}}
    code = RNNLanguageModel(CharRNN(config), CharTokenizer(CHARS), name="code-lstm", meta=code_meta)
    return create_app(lmscope.load("shakespeare"), rnn=[prose, code])


@pytest.fixture(scope="module")
def page_options() -> dict:
    return {"path": "/rnn", "allowed": ("400",), "lang": "zh"}


def test_the_finder_the_model_list_and_the_arrows_speak_chinese(page):
    page.get_by_test_id("rnn-input").fill(TEXT)
    page.get_by_test_id("find-text").click()
    units = page.locator("[data-testid=cell-unit]")
    units.first.wait_for()
    tips = units.evaluate_all("els => els.map(e => e.title)")
    assert not [t for t in tips if "choosing" in t], tips
    assert [t for t in tips if t.startswith("前一半（挑选用）上的 r：")], tips
    options = page.locator("#rnn-model option").all_inner_texts()
    assert "code-lstm（代码）" in options and not [o for o in options if "(code)" in o], options
    labels = [page.locator(f"#unit-{d}").get_attribute("aria-label") for d in ("prev", "next")]
    assert labels == ["上一个单元", "下一个单元"]
    page.get_by_test_id("lang-toggle").click()  # and back in English
    assert "code-lstm (code)" in page.locator("#rnn-model option").all_inner_texts()
    assert page.locator("#unit-prev").get_attribute("aria-label") == "previous unit"
