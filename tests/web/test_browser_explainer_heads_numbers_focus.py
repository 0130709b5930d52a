"""The explainer page on SmolLM2, in English and Chinese: the query/key/value step naming the
query head over keys and values that belong to its shared key/value head, the compare view
counting an emoji as two characters, numbers written without the page's thousands separators, a
half-width comma and a stray space in Chinese lines, and the keyboard focus lost whenever the
step panel was redrawn."""

from __future__ import annotations

import pytest
from webtools import ARTIFACTS, open_step, open_view, set_prompt, to_chinese, wait_idle

pytestmark = pytest.mark.browser

PROMPT = "The quick brown fox jumps over the lazy dog"


@pytest.fixture(scope="module")
def app(smollm2, tiny_model):
    from lmscope.web import create_app

    return create_app(smollm2, compare=[tiny_model])


def select_head(page, head: int) -> None:
    page.get_by_test_id("head-select").select_option(str(head))
    page.wait_for_function(
        f"() => document.querySelector('[data-testid=qkv-shared]')?.innerText.includes('{head}')"
    )
    wait_idle(page)


def captions(page) -> list[str]:
    return page.locator(".step-body figcaption, .step-body .viz h4").all_inner_texts()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_qkv_names_the_kv_head_whose_keys_and_values_it_shows(page, lang):
    """SmolLM2's 9 query heads share 3 key/value heads: query head 4 reads kv head 1, and the
    key and value windows showed kv head 1's numbers under the title "head 4"."""
    if lang == "zh":
        to_chinese(page)
    set_prompt(page, PROMPT)
    open_step(page, "qkv")
    select_head(page, 4)
    titles = captions(page)
    keys = next(c for c in titles if c.startswith(("keys of", "位置 0–8 的 key")))
    values = next(c for c in titles if c.startswith(("values of", "位置 0–8 的 value")))
    kv = "kv head 1" if lang == "en" else "kv 头 1"
    assert keys.endswith(kv) and values.endswith(kv), (keys, values)
    # the heading over q (9 × 64) and k, v (3 × 64) gives both shapes
    heading = page.locator(".step-body h4", has_text="9 × 64").inner_text()
    assert "3 × 64" in heading, heading


def test_compare_counts_characters_not_utf16_units(page):
    """The scored text "🙂 ok" is 4 characters; JavaScript's length said 5."""
    set_prompt(page, "🙂 ok")
    open_view(page, "compare")
    hint = page.locator(".step-body .hint").last.inner_text()
    assert "(4 characters)" in hint, hint


def test_the_chinese_qkv_note_lists_the_group_with_the_chinese_comma(page):
    """The Chinese line said "与 query 头 3, 5 共用", a half-width comma between the heads."""
    to_chinese(page)
    set_prompt(page, PROMPT)
    open_step(page, "qkv")
    select_head(page, 4)
    note = page.get_by_test_id("qkv-shared").inner_text()
    assert "query 头 3、5 共用" in note, note


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_seed_error_groups_its_limit_as_the_page_writes_numbers(page, lang):
    """The limit was written 9007199254740991 where the page writes 49,152 and the RNN page
    9,007,199,254,740,991."""
    if lang == "zh":
        to_chinese(page)
    page.get_by_test_id("seed").fill("-3")
    error = page.get_by_test_id("control-error")
    error.wait_for(state="visible")
    assert "9,007,199,254,740,991" in error.inner_text(), error.inner_text()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_lens_tooltip_groups_the_rank_and_spaces_chinese_as_chinese(page, lang):
    """The embedding row's tooltip said "嵌入 之后的前 5 名" (a space inside Chinese) and "排第 1748
    名" where the page writes 1,748."""
    if lang == "zh":
        to_chinese(page)
    set_prompt(page, "The capital of France is")
    open_view(page, "lens")
    cell = page.locator("[data-testid=lens-cell][data-stage='0'][data-position='0']")
    rank = int(cell.get_attribute("data-final-rank")) + 1
    assert rank >= 1000  # the final prediction is far down the embedding's list
    cell.hover()
    tip = page.get_by_test_id("tooltip")
    tip.wait_for(state="visible")
    text = tip.inner_text()
    assert f"{rank:,}" in text, text
    if lang == "zh":
        assert "嵌入之后的前 5 名" in text, text
        page.locator("[data-testid=lens-cell][data-stage='15'][data-position='0']").hover()
        page.wait_for_function(
            "() => document.querySelector('[data-testid=tooltip]').innerText.includes('14 层')"
        )
        assert "第 14 层之后" in tip.inner_text(), tip.inner_text()


def focused(page) -> str | None:
    return page.evaluate("document.activeElement?.dataset?.testid ?? null")


def test_the_keyboard_stays_on_the_layer_and_head_lists(page):
    """Arrow keys on the Layer list changed the layer once; the redraw dropped the focus, so the
    next arrow went to the page and opened another step (ArrowLeft: step 8 instead of layer 1)."""
    set_prompt(page, PROMPT)
    open_step(page, "qkv")
    for testid, key, want in [
        ("layer-select", "ArrowDown", "1"),
        ("layer-select", "ArrowDown", "2"),
        ("layer-select", "ArrowLeft", "1"),
        ("head-select", "ArrowDown", "1"),
        ("head-select", "ArrowRight", "2"),
    ]:
        if focused(page) != testid:
            page.get_by_test_id(testid).focus()
        page.keyboard.press(key)
        page.wait_for_selector(
            f"[data-testid={testid}] option[value='{want}']:checked", state="attached"
        )
        wait_idle(page)
        assert page.locator(".step-body").get_attribute("data-step") == "qkv", (testid, key)
        assert focused(page) == testid, (testid, key)


def test_the_keyboard_stays_on_the_tour_buttons(page):
    """Enter on "Next →" opened the next step and left the focus nowhere: a second Enter did
    nothing."""
    set_prompt(page, PROMPT)
    open_step(page, "embedding")
    page.get_by_test_id("tour-next").focus()
    for want in ["positional-encoding", "blocks"]:  # embedding is step 5 (issue 38)
        page.keyboard.press("Enter")
        page.wait_for_selector(f".step-body[data-step='{want}']")
        wait_idle(page)
        assert focused(page) == "tour-next", want


def test_two_refused_controls_are_two_chinese_sentences_without_a_space(page):
    """A bad Top-k and a bad seed together read "…之间的整数。 种子必须…" on the Chinese page."""
    page.get_by_test_id("top-k").fill("-1")
    page.get_by_test_id("seed").fill("-3")
    error = page.get_by_test_id("control-error")
    error.wait_for(state="visible")
    assert "integer" not in error.inner_text() and ". The seed" in error.inner_text()
    to_chinese(page)
    page.wait_for_function(
        "() => document.querySelector('[data-testid=control-error]').innerText.includes('种子')"
    )
    text = error.inner_text()
    assert "整数。种子" in text and "。 " not in text, text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_position_readout_says_its_probability_is_the_models_own(page, lang):
    """At T = 0.5 the readout said "next ·over 7.93%" while the sampling panel gave the same
    token 21.4%: both real, but the readout's is the model's own (T = 1, no filters), unsaid."""
    if lang == "zh":
        to_chinese(page)
    set_prompt(page, PROMPT)
    readout = page.get_by_test_id("position-readout")
    own = "(model, T = 1)" if lang == "en" else "（模型原始概率，T = 1）"
    assert own not in readout.inner_text()  # nothing to tell apart at the model's settings
    page.get_by_test_id("temperature").fill("0.5")
    page.wait_for_function(
        "own => document.querySelector('[data-testid=position-readout]').innerText.includes(own)",
        arg=own,
    )
    assert "T = 1" in (readout.get_attribute("title") or "")
    ARTIFACTS.mkdir(exist_ok=True)
    readout.locator("..").screenshot(path=str(ARTIFACTS / f"readout-own-{lang}.png"))
    page.get_by_test_id("temperature").fill("1")
    page.get_by_test_id("top-k").fill("5")
    page.wait_for_function(
        "own => document.querySelector('[data-testid=position-readout]').innerText.includes(own)",
        arg=own,
    )
    page.get_by_test_id("top-k").fill("0")
    page.wait_for_function(
        "own => !document.querySelector('[data-testid=position-readout]').innerText.includes(own)",
        arg=own,
    )
