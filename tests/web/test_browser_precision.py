"""The page names the precision of its numbers, and in bfloat16 measures what it costs on the
current prompt against float32 when asked (one line under the model facts)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def app():
    import lmscope
    from lmscope.web import create_app

    return create_app(lmscope.load("shakespeare", dtype="bfloat16"))


def test_the_bf16_page_says_so_and_measures_the_difference_on_request(page):
    line = page.get_by_test_id("precision")
    line.get_by_text("Numbers in bfloat16").wait_for()
    page.get_by_test_id("prompt-input").fill("ROMEO: But soft, what light")
    page.get_by_test_id("precision-measure").click()
    result = page.get_by_test_id("precision-result")
    result.get_by_text("max |Δlogit|").wait_for()
    text = result.inner_text()
    assert "against float32 weights" in text and "top-5 next tokens" in text
    delta = float(text.split("max |Δlogit| ")[1].split(" ")[0])
    assert 0 < delta < 0.5
    page.get_by_test_id("prompt-input").fill("ROMEO: But soft")  # a new prompt: measure again
    page.get_by_test_id("precision-measure").wait_for()
    # in Chinese the whole line is Chinese, the reference too (it was an English code-word)
    page.get_by_test_id("lang-toggle").click()
    page.get_by_test_id("precision-measure").click()
    result.get_by_text("对照：float32 权重").wait_for()
    page.get_by_test_id("lang-toggle").click()
