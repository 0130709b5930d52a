"""The page walks all 20 steps on a Gemma 3 (lmscope's own Gemma3, random weights, a character
vocabulary so the prompt is text): every step shows numbers that POST /api/step gives, and the
masked-attention step draws the sliding window of a local layer, the prompt being longer than
the window: the window's numbers, in English at 1440 px and in Chinese at 390 px."""

from __future__ import annotations

import pytest
from walk_steps import family_view_at_sizes, walk_prompt
from webtools import ARTIFACTS, open_step, set_prompt

from helpers_families import tiny_gemma3

pytestmark = pytest.mark.browser

WINDOW = 6
PROMPT = "To be, or not to be."  # 20 characters, over 3 windows


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    import lmscope
    from lmscope.web import create_app

    folder = tiny_gemma3(tmp_path_factory.mktemp("gemma3") / "tiny-gemma3", PROMPT, WINDOW)
    return create_app(lmscope.load(folder))


def test_all_20_steps_and_the_sliding_window(page):
    answers = walk_prompt(page, PROMPT)

    model = page.evaluate("fetch('/api/model').then((r) => r.json())")
    assert model["lineage"] == ["gemma3", "llama"]
    open_step(page, "masked-attention")  # layer 0: local
    window = next(d for d in answers["masked-attention"]["family_data"])
    assert window["kind"] == "sliding-window" and window["local"]
    assert window["window"] == WINDOW and window["query_position"] == len(PROMPT) - 1
    assert window["first_key"] == len(PROMPT) - WINDOW
    assert window["hidden_by_window"] == len(PROMPT) - WINDOW
    assert window["local_layers"] == [0, 2] and window["global_layers"] == [1]
    view = page.get_by_test_id("family-sliding-window")
    said = view.inner_text()
    assert "GPT-2" in said and view.locator("canvas.heat").count() == 1
    for number in (WINDOW, window["first_key"], window["hidden_by_window"], "1,000,000"):
        assert str(number) in said, number
    # the mask drawn is the model's, around the query: each query sees its last WINDOW keys
    # (those from window_start on), no later one
    allowed = window["allowed"]
    assert len(allowed) > WINDOW and window["window_start"] + len(allowed) == len(PROMPT)
    assert [sum(row) for row in allowed] == [min(i + 1, WINDOW) for i in range(len(allowed))]
    assert all(not any(row[i + 1 :]) for i, row in enumerate(allowed))
    ARTIFACTS.mkdir(exist_ok=True)
    for view, width, lang in family_view_at_sizes(page, "family-sliding-window"):
        said = view.inner_text()
        assert str(window["first_key"]) in said and str(WINDOW) in said
        if lang == "zh":
            assert "GPT-2" in said and "窗口" in said, said[:80]
        view.screenshot(path=str(ARTIFACTS / f"family-gemma3-window-{lang}-{width}.png"))


def test_the_line_under_the_flow_names_gemma3s_recipe(page):
    """It called Gemma 3 a "Llama architecture" with a "SwiGLU MLP", and "1 key/value heads"."""
    set_prompt(page, PROMPT)  # the default prompt's letters are not all in its vocabulary
    page.wait_for_selector("[data-testid=flow][data-loaded='1']")
    line = page.get_by_test_id("flow-arch").inner_text()
    assert "Gemma 3" in line and "GeGLU" in line and "QK-norm" in line, line
    assert "SwiGLU" not in line and "(1 key/value head)" in line
