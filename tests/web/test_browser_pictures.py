"""The page's pictures (issue 14) in headless Chromium, at 1440 and 390 px wide, in English and
Chinese: characters over byte-level chips, attention as connections, the flow view and the
embedding neighbours. Every number drawn is checked against the API it came from."""

from __future__ import annotations

import pytest
from webtools import api, chip_ids, shot, traces, wait_for_trace, wait_idle

pytestmark = pytest.mark.browser

ZH_PROMPT = "数据可视化让用户能够"
SIZES = [(1440, "en"), (390, "zh")]


def set_prompt(page, text: str) -> None:
    before = traces(page)
    page.get_by_test_id("prompt-input").fill(text)
    wait_for_trace(page, before)


def open_step(page, key: str):
    page.locator(f"[data-testid=step-nav] button[data-step='{key}']").click()
    page.wait_for_selector(f".step-body[data-step='{key}']")
    wait_idle(page)


def setup(page, width: int, lang: str):
    page.set_viewport_size({"width": width, "height": 900})
    if lang == "zh":
        page.get_by_test_id("lang-toggle").click()
        page.wait_for_function("document.documentElement.lang === 'zh-CN'")


def no_sideways_scroll(page, width: int):
    assert page.evaluate("document.documentElement.scrollWidth") <= width


# --- characters over byte-level chips -----------------------------------------------------


@pytest.mark.parametrize(("width", "lang"), SIZES)
def test_chinese_characters_label_their_byte_chips(page, width, lang):
    setup(page, width, lang)
    set_prompt(page, ZH_PROMPT)
    spans = api(page, "/api/trace", {"text": ZH_PROMPT})["chars"]
    labels = page.get_by_test_id("char-span")
    assert labels.all_inner_texts() == [s["text"] for s in spans]
    assert "".join(labels.all_inner_texts()) == ZH_PROMPT
    for i, span in enumerate(spans):
        label = labels.nth(i)
        chips = label.locator("xpath=..").get_by_test_id("token-chip")
        positions = [int(p) for p in chips.evaluate_all("els => els.map(e => e.dataset.position)")]
        assert positions == list(range(span["start"], span["end"] + 1))
        # the label spans its chips: as wide as they are together, right above them
        box = label.bounding_box()
        first, last = chips.first.bounding_box(), chips.last.bounding_box()
        assert abs(box["x"] - first["x"]) < 2 and abs(box["x"] + box["width"] - last["x"] - last["width"]) < 2
        assert box["y"] + box["height"] <= first["y"] + 1
    # the chips still show the bytes
    pieces = page.locator("[data-testid=token-chip] .piece").all_inner_texts()
    assert any(p.startswith("<0xE") for p in pieces)
    open_step(page, "token-embedding")
    note = page.get_by_test_id("byte-level-note")
    assert ("UTF-8" in note.inner_text()) and (("字节" in note.inner_text()) == (lang == "zh"))
    assert page.locator(".mini-chips [data-testid=char-span]").count() == len(spans)
    no_sideways_scroll(page, width)
    shot(page, f"chars-{width}-{lang}")
