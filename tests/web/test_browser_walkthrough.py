"""The bugs a walk through the page found (issue 14), each driven the way a person meets it, at
1440 and 390 px wide, in English and Chinese: a prompt past the context, generated text that
vanished on the next keystroke, English left in Chinese mode, a page wider than a phone, the
browser's top-p estimate, heatmap labels on long prompts, minus signs, NUL in a chip."""

from __future__ import annotations

import re

import pytest
from webtools import api, chip_ids, traces, wait_for_trace, wait_idle

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
# Latin words a Chinese page may keep: names of things, not sentences
KEPT = {"token", "Token", "tokens", "id", "ids", "lmscope", "serve", "KiB", "softmax", "logits"}


def english_words(text: str) -> list[str]:
    """Latin words outside quotes (a quoted token is the model's text, not the page's)."""
    text = re.sub(r"“[^”]*”", "", text)
    return [w for w in re.findall(r"[A-Za-z]{3,}", text) if w not in KEPT]


def set_prompt(page, text: str) -> None:
    before = traces(page)
    page.get_by_test_id("prompt-input").fill(text)
    wait_for_trace(page, before)


def open_step(page, key: str):
    page.locator(f"[data-testid=step-nav] button[data-step='{key}']").click()
    page.wait_for_selector(f".step-body[data-step='{key}']")
    wait_idle(page)


def to_chinese(page):
    page.get_by_test_id("lang-toggle").click()
    page.wait_for_function("document.documentElement.lang === 'zh-CN'")


@pytest.mark.parametrize("width", [1440, 390])
def test_a_prompt_past_the_context_clears_the_view_and_names_no_missing_option(page, width):
    """Bug 1: the message named a truncate option the page lacks, and the old analysis stayed."""
    page.set_viewport_size({"width": width, "height": 900})
    assert len(chip_ids(page)) > 0
    page.get_by_test_id("prompt-input").fill(" ".join(["word"] * 300))  # 300 tokens
    error = page.get_by_test_id("error")
    error.wait_for(state="visible")
    text = error.inner_text()
    assert "300" in text and "128" in text and "truncate" not in text.lower()
    assert page.get_by_test_id("token-chip").count() == 0  # nothing stale on screen
    assert page.locator("[data-testid=step-panel] *").count() == 0
    assert page.get_by_test_id("prob-bar").count() == 0
    to_chinese(page)
    page.get_by_test_id("prompt-input").fill(" ".join(["word"] * 301))
    page.wait_for_function(
        "() => document.querySelector('[data-testid=error]').innerText.includes('301')"
    )
    assert english_words(error.inner_text()) == []
    set_prompt(page, "Back again")
    assert error.is_hidden() and len(chip_ids(page)) == 2


def test_generated_text_stays_when_the_prompt_is_edited(page):
    """Bug 3: Generate 5, then type "!": the generated tokens vanished and "+5" stayed."""
    set_prompt(page, "Now is the winter of our discontent")
    prompt_ids = chip_ids(page)
    page.get_by_test_id("greedy").check()
    page.get_by_test_id("generate-count").fill("5")
    before = traces(page)
    page.get_by_test_id("generate-n").click()
    wait_for_trace(page, before)
    ids = chip_ids(page)
    assert len(ids) == len(prompt_ids) + 5
    box = page.get_by_test_id("prompt-input")
    generated = api(page, "/api/trace", {"ids": ids})["text"]
    assert box.input_value() == generated  # the generated text is in the prompt box
    assert page.get_by_test_id("gen-status").inner_text().startswith("+5")
    before = traces(page)
    box.press("End")
    box.type("!")
    wait_for_trace(page, before)
    assert page.get_by_test_id("prompt-input").input_value() == generated + "!"
    expected = api(page, "/api/trace", {"text": generated + "!"})
    assert chip_ids(page) == [t["id"] for t in expected["tokens"]]
    assert page.get_by_test_id("gen-status").inner_text() == ""  # no stale "+5"


@pytest.mark.parametrize("width", [1440, 390])
def test_chinese_mode_says_errors_and_status_lines_in_chinese(page, width):
    """Bug 5: server errors, "traced in ... ms" and generation lines stayed English."""
    page.set_viewport_size({"width": width, "height": 900})
    to_chinese(page)
    assert english_words(page.get_by_test_id("timing").inner_text()) == []
    assert "毫秒" in page.get_by_test_id("timing").inner_text()
    page.get_by_test_id("prompt-input").fill("")
    error = page.get_by_test_id("error")
    error.wait_for(state="visible")
    assert "空" in error.inner_text() and english_words(error.inner_text()) == []
    set_prompt(page, "The capital of France is")
    page.get_by_test_id("generate").click()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=gen-status]').innerText.startsWith('+1')"
    )
    assert english_words(page.get_by_test_id("gen-status").inner_text()) == []
    # a layer that does not exist, asked of the API the page uses
    message = page.evaluate(
        """async () => {
            const api = await import('/static/js/api.js');
            try { await api.postJSON('/api/layer', {ids: [1, 2], layer: 9, position: 0}); }
            catch (err) { return err.message; }
        }"""
    )
    assert "9" in message and "层" in message and english_words(message) == []


def test_error_answers_carry_a_code_and_their_numbers(client):
    r = client.post("/api/trace", json={"text": " ".join(["word"] * 300)})
    assert r.status_code == 400
    body = r.json()
    assert body["code"] == "too_long" and body["params"] == {"n": "300", "context": "128"}
    assert client.post("/api/trace", json={"text": ""}).json()["code"] == "empty_prompt"
    body = client.post("/api/layer", json={"ids": [1], "layer": 5, "position": 0}).json()
    assert body["code"] == "out_of_range" and body["params"]["what"] == "layer"
    assert client.post("/api/trace", json={"nope": 1}).json()["code"] == "invalid_request"
    assert client.get("/api/nothing").json()["code"] == "not_found"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_horizontal_scroll_at_390_px_on_any_step(page, lang):
    """Bug 6: at 390 px the page was 448 px wide and the position slider was cut off."""
    page.set_viewport_size(PHONE)
    if lang == "zh":
        to_chinese(page)
    width = "document.documentElement.scrollWidth"
    keys = page.locator("[data-testid=step-nav] button[data-step]").evaluate_all(
        "els => els.map(e => e.dataset.step)"
    )
    for key in keys:
        open_step(page, key)
        assert page.evaluate(width) <= 390, key
    slider = page.get_by_test_id("position-slider").bounding_box()
    assert slider["x"] >= 0 and slider["x"] + slider["width"] <= 390
