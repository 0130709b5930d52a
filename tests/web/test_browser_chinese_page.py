"""The page in Chinese on SmolLM2, each problem driven the way a Chinese-speaking reader meets
it: a Chinese prompt written as bytes in step 1, English left in the RoPE chart and in the q/k/v
hover lines, a refused ablation said only as "the server refused", the count of tokens to
generate refused far from its box, an error about the previous prompt left on screen while the
next one runs, Stop said as "Stopped: Stop", and the header's model facts squeezed into a column
at 768 px."""

from __future__ import annotations

import pytest
from webtools import open_step, open_view, set_prompt, traces, wait_for_trace

pytestmark = pytest.mark.browser

PROMPT = "数据可视化让用户能够"


@pytest.fixture(scope="module")
def app(smollm2):
    from lmscope.web import create_app

    return create_app(smollm2)


@pytest.fixture(scope="module")
def page_options() -> dict:
    return {"path": "/", "allowed": ("400", "422"), "lang": "zh"}


def test_step_one_writes_a_chinese_prompt_as_characters(page):
    """视 is two byte tokens: the prompt before the arrow read 数据可<0xE8><0xA7><0x86>化..."""
    set_prompt(page, PROMPT)
    context = page.locator(".big-prediction .ctx")
    assert context.inner_text() == PROMPT
    # a position inside a character: its bytes so far are all there is to show
    page.locator("[data-testid=token-chip][data-position='2']").click()
    page.wait_for_function(
        "() => document.querySelector('.big-prediction .ctx').innerText.startsWith('数据可<0x')"
    )


def test_the_rope_chart_and_dials_speak_chinese(page):
    open_step(page, "positional-encoding")
    axis = page.locator("[data-testid=rope-frequencies] text.axis").evaluate_all(
        "els => els.map(e => e.textContent)"
    )
    assert "第 0 对" in axis and not [a for a in axis if "pair" in a], axis
    page.locator("[data-testid=step-panel] svg[data-pair='3']").first.hover()
    tip = page.get_by_test_id("tooltip")
    tip.wait_for(state="visible")
    assert tip.inner_text().startswith("第 3 对") and "pair" not in tip.inner_text()


def test_hover_lines_of_the_heads_say_head_in_chinese(page):
    open_step(page, "qkv")
    strip = page.locator(".strip-box", has_text="query q").locator("canvas")
    strip.hover(position={"x": 3, "y": 3})
    tip = page.get_by_test_id("tooltip")
    tip.wait_for(state="visible")
    assert tip.inner_text().startswith("头 0") and "head" not in tip.inner_text()


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("L99H0", ["99", "层", "0 到 29"]),
        ("L0H99", ["99", "头", "0 到 8"]),
        ("foo", ["foo", "L5H3"]),
    ],
)
def test_a_refused_ablation_says_why_in_chinese(page, spec, words):
    """It said 服务器拒绝了这个请求（invalid_input）: not what was wrong, nor how to write it."""
    open_view(page, "ablation")
    page.get_by_test_id("ablate-spec").fill(spec)
    page.get_by_test_id("ablate-add").click()
    error = page.get_by_test_id("ablate-spec-error")
    error.wait_for(state="visible")
    text = error.inner_text()
    assert all(w in text for w in words), text
    assert "invalid_input" not in text and "拒绝" not in text


def test_the_count_to_generate_is_refused_beside_its_box(page):
    """The line showed under the seed, 450 px above the box it is about."""
    count = page.get_by_test_id("generate-count")
    count.fill("300")
    page.get_by_test_id("generate-n").click()
    error = page.get_by_test_id("generate-count-error")
    error.wait_for(state="visible")
    assert "1 到 256" in error.inner_text()
    below = error.bounding_box()["y"] - (count.bounding_box()["y"] + count.bounding_box()["height"])
    assert 0 <= below < 40, below
    assert page.get_by_test_id("control-error").is_hidden()
    page.get_by_test_id("lang-toggle").click()  # said again in the other language
    assert "between 1 and 256" in error.inner_text()
    page.get_by_test_id("lang-toggle").click()
    count.fill("5")  # a number that works takes the line away
    assert error.is_hidden()


def test_an_error_about_the_last_prompt_goes_when_the_next_one_runs(page):
    """After a prompt past the context, a long prompt that takes a while showed "提示词有
    18,000 个 token" for its whole run."""
    error = page.get_by_test_id("error")
    page.get_by_test_id("prompt-input").fill("数据 " * 9000)
    error.wait_for(state="visible")
    held = []
    page.route("**/api/trace", lambda route: held.append(route))  # the next run is slow
    page.get_by_test_id("prompt-input").fill(PROMPT)
    page.wait_for_function("() => document.body.classList.contains('tracing')")
    assert error.is_hidden()
    page.unroute("**/api/trace")
    before = traces(page)
    for route in held:
        route.continue_()
    wait_for_trace(page, before)


def test_stop_is_said_as_the_reader_pressing_it(page):
    page.get_by_test_id("generate-count").fill("200")
    page.get_by_test_id("generate-n").click()
    said = "() => document.querySelector('#gen-status').innerText"
    page.wait_for_function(f"{said}.startsWith('新增了')")
    page.get_by_test_id("stop").click()
    status = page.get_by_test_id("gen-status")
    page.wait_for_function(f"{said}.includes('已停止')")
    assert "已停止：停止" not in status.inner_text()
    assert "按下了“停止”" in status.inner_text()


@pytest.mark.parametrize("width", [768, 1366])
def test_the_model_facts_keep_to_two_rows(page, width):
    """At 768 px in Chinese the seven facts stood in a column five rows high."""
    page.set_viewport_size({"width": width, "height": 900})
    tops = page.locator("#facts .fact").evaluate_all(
        "els => [...new Set(els.map(e => Math.round(e.getBoundingClientRect().top)))]"
    )
    assert len(tops) <= 2, tops
