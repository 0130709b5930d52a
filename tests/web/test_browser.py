"""The page in headless Chromium: tokens, attention values, instant sampling controls,
generation, inspecting any position, the Chinese interface, and bad input.

The server runs in a thread on a free loopback port with the tiny random model (conftest.py).
Every request the page makes to anything but that server is aborted and fails the test: the
page must work offline. Screenshots of every step go to test-artifacts/ (gitignored).
"""

from __future__ import annotations

import json
import math
import re
import time

import httpx
import pytest
import torch
from webtools import (
    ARTIFACTS,
    HANG_S,
    api,
    chip_ids,
    open_step,
    patient,
    traces,
    wait_for_trace,
    wait_idle,
)

pytestmark = pytest.mark.browser


def bar_data(page) -> list[dict]:
    return page.locator("[data-testid=prob-bar]").evaluate_all(
        "els => els.map(e => ({id: +e.dataset.id, prob: +e.dataset.prob, "
        "pool: +e.dataset.poolProb, kept: e.dataset.survives === '1'}))"
    )


# --- tests ------------------------------------------------------------------------------


def test_typing_a_prompt_shows_its_tokens(page):
    text = "Hello world, 你好"
    before = traces(page)
    page.get_by_test_id("prompt-input").fill(text)
    wait_for_trace(page, before)
    expected = api(page, "/api/trace", {"text": text})
    assert chip_ids(page) == [t["id"] for t in expected["tokens"]]
    first = page.get_by_test_id("token-chip").first
    assert first.locator(".piece").inner_text() == "Hello"
    # the page's own timing of the round trip (logged, not asserted)
    ms = page.evaluate("performance.getEntriesByName('trace').map(e => e.duration)")
    print(f"\ntrace round trip + render (ms): {[round(m, 1) for m in ms]}")


def test_attention_cell_equals_the_api(page):
    open_step(page, "masked-attention")
    page.get_by_test_id("head-select").select_option("1")
    wait_idle(page)
    ids = chip_ids(page)
    last = len(ids) - 1
    expected = api(page, "/api/attention", {"ids": ids, "layer": 0, "head": 1, "position": last})
    for stage, (row, col) in [("pattern", (4, 2)), ("raw", (3, 1)), ("masked", (1, 3))]:
        figure = page.locator(f"[data-testid=attention-matrix][data-stage={stage}]")
        canvas = figure.locator("canvas")
        canvas.scroll_into_view_if_needed()  # header links may push it below the fold
        box = canvas.bounding_box()
        rows, cols = int(canvas.get_attribute("data-rows")), int(canvas.get_attribute("data-cols"))
        assert rows == cols == len(ids)
        page.mouse.move(
            box["x"] + (col + 0.5) * box["width"] / cols,
            box["y"] + (row + 0.5) * box["height"] / rows,
        )
        readout = figure.get_by_test_id("cell-readout")
        assert (int(readout.get_attribute("data-row")), int(readout.get_attribute("data-col"))) == (
            row,
            col,
        )
        shown = readout.get_attribute("data-value")
        value = expected[stage][row][col]
        if value is None:
            assert shown == "null" and "masked" in readout.inner_text()
        else:
            assert float(shown) == value


def test_sampling_controls_recompute_in_the_browser(page, tiny_model):
    requests = []
    page.on("request", lambda r: "/api/" in r.url and requests.append(r.url))
    before = bar_data(page)
    page.get_by_test_id("temperature").fill("0.5")
    page.wait_for_function(
        "() => +document.querySelector('[data-testid=prob-bar]').dataset.prob"
        f" !== {before[0]['prob']}"
    )
    after = bar_data(page)
    assert requests == []  # no server round trip
    # exact: the page's tempered probabilities equal softmax(logits / T) over the whole vocab
    ids = chip_ids(page)
    logits = tiny_model.trace(ids).last_logits.double()
    probs = torch.softmax(logits / 0.5, 0)
    for bar in after[:10]:
        assert bar["prob"] == pytest.approx(float(probs[bar["id"]]), rel=1e-6)
    assert after[0]["prob"] > before[0]["prob"]  # sharper
    durations = page.evaluate(
        "performance.getEntriesByName('sampling-render').map(e => e.duration)"
    )
    print(f"\nsampling re-render (ms): {[round(d, 2) for d in durations]}")


def test_filters_match_the_server_pool(page):
    page.get_by_test_id("top-k").fill("6")
    page.get_by_test_id("min-p").fill("0.8")
    page.get_by_test_id("temperature").fill("0.3")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=pool-size]').dataset.size <= 6"
    )
    bars = bar_data(page)
    kept = [b for b in bars if b["kept"]]
    ids = chip_ids(page)
    sampling = {"temperature": 0.3, "top_k": 6, "min_p": 0.8}
    server = api(page, "/api/pool", {"ids": ids, "position": len(ids) - 1, "sampling": sampling})
    assert [b["id"] for b in kept] == [t["id"] for t in server["top"]]
    for bar, token in zip(kept, server["top"], strict=True):
        assert bar["pool"] == pytest.approx(token["prob"], rel=1e-5)
    assert int(page.get_by_test_id("pool-size").get_attribute("data-size")) == server["size"]
    page.get_by_test_id("greedy").check()
    assert sum(b["kept"] for b in bar_data(page)) == 1


def test_generate_then_inspect_the_new_position(page):
    page.get_by_test_id("greedy").check()
    top = bar_data(page)[0]["id"]
    n = len(chip_ids(page))
    before = traces(page)
    page.get_by_test_id("generate").click()
    wait_for_trace(page, before)
    ids = chip_ids(page)
    assert len(ids) == n + 1 and ids[-1] == top  # greedy appends the top bar's token
    new_chip = page.get_by_test_id("token-chip").nth(n)
    assert "gen" in new_chip.get_attribute("class")
    # inspect an earlier position, then the generated one
    page.get_by_test_id("token-chip").nth(1).click()
    assert page.get_by_test_id("position-label").inner_text().startswith("Position 1")
    new_chip.click()
    assert page.get_by_test_id("position-label").inner_text().startswith(f"Position {n}")
    assert f"after position {n}" in page.locator("#sampling-sub").inner_text()
    open_step(page, "self-attention")
    assert page.get_by_test_id("attention-matrix").count() == 1


def test_generate_n_streams_the_servers_tokens(page):
    page.get_by_test_id("seed").fill("1234")
    page.get_by_test_id("top-k").fill("20")
    page.get_by_test_id("generate-count").fill("3")
    start = chip_ids(page)
    before = traces(page)
    page.get_by_test_id("generate-n").click()
    wait_for_trace(page, before)
    ids = chip_ids(page)
    body = {"ids": start, "n": 3, "seed": 1234, "sampling": {"temperature": 1.0, "top_k": 20}}
    r = httpx.post(page.server + "/api/generate", json=body, timeout=HANG_S)
    expected = [json.loads(line)["id"] for line in r.text.splitlines()[:3]]
    assert ids == start + expected


def test_chinese_interface_is_remembered(page):
    page.get_by_test_id("lang-toggle").click()
    assert page.get_by_test_id("step-title").inner_text().endswith("什么是 Transformer")
    assert "个步骤" in page.get_by_test_id("step-nav").inner_text()
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    assert page.evaluate("localStorage.getItem('lmscope.lang')") == "zh"
    assert page.get_by_test_id("lang-toggle").inner_text() == "English"
    open_step(page, "masked-attention")
    assert "因果掩码" in page.get_by_test_id("step-explain").inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "zh-masked-attention.png"), full_page=True)
    page.get_by_test_id("lang-toggle").click()
    assert page.get_by_test_id("step-title").inner_text().endswith("Masked self-attention")


# the language a page comes from the server in, for this browser (its headers and cookies)
SENT_IN = """async (path) => {
  const body = await (await fetch(path)).text();
  return body.match(/<html lang="([^"]+)"/)[1];
}"""


@pytest.mark.parametrize(("locale", "tag"), [("zh-TW", "zh-CN"), ("fr-FR", "en-US")])
def test_a_first_visit_speaks_the_browsers_language(browser, server, locale, tag):
    """A reader whose browser asks for Chinese got English until they found the toggle; a
    language the page does not speak gets English, and a choice made on the page wins."""
    context = patient(browser.new_context(locale=locale, viewport={"width": 1440, "height": 900}))
    try:
        page = context.new_page()
        page.goto(server + "/")
        page.wait_for_selector("body[data-ready='1']")
        assert page.evaluate("document.documentElement.lang") == tag
        title = page.get_by_test_id("step-title").inner_text()
        assert title.endswith("什么是 Transformer" if tag == "zh-CN" else "What is a Transformer")
        # the server sends the page in it too, so that no first paint is in another language
        assert page.evaluate(SENT_IN, "/why") == tag
        page.get_by_test_id("lang-toggle").click()  # the other language, remembered
        other = "en-US" if tag == "zh-CN" else "zh-CN"
        page.wait_for_function("(tag) => document.documentElement.lang === tag", arg=other)
        assert page.evaluate(SENT_IN, "/why") == other
        page.reload()
        page.wait_for_selector("body[data-ready='1']")
        assert page.evaluate("document.documentElement.lang") == other
    finally:
        context.close()


def test_a_page_fetches_each_catalog_once(browser, server):
    """Opening the page in English fetched en.json (250 kB) twice: the page's language and
    the fallback were asked for at once, and neither request waited for the other."""
    context = patient(browser.new_context())
    try:
        page = context.new_page()
        asked = []
        page.on("request", lambda r: "/i18n/" in r.url and asked.append(r.url.split("?")[0]))
        page.goto(server + "/")
        page.wait_for_selector("body[data-ready='1']")
        page.get_by_test_id("lang-toggle").click()
        page.wait_for_function("() => document.documentElement.lang === 'zh-CN'")
        assert sorted(asked) == [server + "/i18n/en.json", server + "/i18n/zh.json"], asked
    finally:
        context.close()


def test_bad_input_gets_a_message_and_the_page_recovers(page):
    prompt = page.get_by_test_id("prompt-input")
    error = page.get_by_test_id("error")
    prompt.fill("")
    error.wait_for(state="visible")
    assert "empty" in error.inner_text()
    # nothing of the last prompt stays behind to be read as this one's (it did: the position
    # bar still said 'Position 4 / 4 "·to" · top ...' and Generate stayed live)
    for testid in ("position-readout", "sampling-sub"):
        assert page.get_by_test_id(testid).inner_text() == ""
    assert page.get_by_test_id("position-slider").is_disabled()
    assert page.get_by_test_id("generate").is_disabled()
    assert page.get_by_test_id("generate-n").is_disabled()
    prompt.fill("word " * 200)
    page.wait_for_function(
        "() => document.querySelector('[data-testid=error]').innerText.includes('context')"
    )
    page.get_by_test_id("top-k").fill("-1")
    assert "Top-k" in page.get_by_test_id("control-error").inner_text()
    page.get_by_test_id("top-k").fill("0")
    assert page.get_by_test_id("control-error").is_hidden()
    before = traces(page)
    prompt.fill("Back to normal")
    wait_for_trace(page, before)
    assert error.is_hidden()
    assert len(chip_ids(page)) == 3
    assert page.get_by_test_id("generate").is_enabled()
    assert page.get_by_test_id("position-slider").is_enabled()


def test_pipeline_parts_open_their_steps(page):
    from playwright.sync_api import expect

    # the overview is the flow view; a step's panel is drawn once its packet has landed
    page.locator("[data-testid=pipeline] [data-part=mlp]").click()
    expect(page.get_by_test_id("step-title")).to_have_text(re.compile("MLP$"))
    page.locator("[data-testid=pipeline] [data-part=block-1]").click()
    expect(page.get_by_test_id("layer-select")).to_have_value("1")
    page.locator("[data-testid=pipeline] [data-part=probs]").click()
    expect(page.get_by_test_id("step-title")).to_have_text(re.compile("Probabilities$"))


def _hold(page, pattern: str, ask):
    """Holds the request to ``pattern`` that ``ask()`` makes the page send; returns what lets
    it go on to the server."""
    held = []
    page.route(pattern, lambda route: held.append(route))
    ask()
    deadline = time.monotonic() + HANG_S
    while not held and time.monotonic() < deadline:
        page.wait_for_timeout(20)  # a prompt's requests are sent once its typing pauses
    assert held, f"the page asked for nothing at {pattern}"

    def let_go() -> None:
        page.unroute(pattern)
        held[0].continue_()

    return let_go


def _press(page, selector: str) -> None:
    """The mouse button pressed (not yet released) at the middle of ``selector``."""
    target = page.locator(selector)
    target.scroll_into_view_if_needed()
    box = target.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()


def test_a_click_on_a_step_is_not_lost_when_a_trace_lands_under_it(page):
    """A trace that landed between the press and the release of a click on a step rebuilt the
    step list: the press was on a button no longer in the page, so no click reached the new one
    and the step never opened (seen twice in full test runs, as a 120 s wait)."""
    prompt = page.get_by_test_id("prompt-input")
    let_go = _hold(page, "**/api/trace", lambda: prompt.dispatch_event("input"))  # traced again
    _press(page, "[data-testid=step-nav] button[data-step='mlp']")
    before = traces(page)
    let_go()
    wait_for_trace(page, before)
    page.mouse.up()
    page.wait_for_selector(".step-body[data-step='mlp']")


def test_a_click_on_the_flow_is_not_lost_when_its_numbers_land_under_it(page):
    """The flow is drawn twice for a new prompt: its outline at once, then again with the
    vectors when /api/flow answers. A part pressed before that answer and released after it
    was no longer in the page, and its step did not open."""
    prompt = page.get_by_test_id("prompt-input")
    let_go = _hold(page, "**/api/flow", lambda: prompt.fill("A flow drawn twice"))
    page.evaluate("window.drawnBefore = window.lmscope.flow.data")
    _press(page, "[data-testid=pipeline] [data-part=mlp]")
    let_go()
    # the answer is in (the page draws it once the button is let go)
    page.wait_for_function("() => window.lmscope.flow.data !== window.drawnBefore")
    page.mouse.up()
    page.wait_for_selector("[data-testid=flow][data-loaded='1']")
    page.wait_for_selector(".step-body[data-step='mlp']")


def test_the_step_list_is_whole_before_the_page_says_it_is_ready(page):
    """The "Compare models" view was listed at first and taken away just after the page was
    ready (this server has no second model): a late change to the list under the reader's
    pointer, which could swallow a click on it."""
    page.add_init_script(
        """new MutationObserver(() => {
            if (document.querySelector("[data-view=compare]")) window.sawCompare = true;
        }).observe(document, { childList: true, subtree: true });"""
    )
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    assert page.evaluate("window.lmscope.state.compareModels") == []
    assert page.evaluate("window.sawCompare ?? false") is False


def test_every_step_renders_real_numbers(page):
    page.emulate_media(reduced_motion="reduce")  # no flying packet: each step 0.6 s sooner
    ARTIFACTS.mkdir(exist_ok=True)
    buttons = page.locator("[data-testid=step-nav] button[data-step]")
    keys = buttons.evaluate_all("els => els.map(e => e.dataset.step)")
    served = httpx.get(page.server + "/api/steps").json()["steps"]
    assert keys == [s["key"] for s in served] and len(keys) == 20  # the page lists none itself
    page.get_by_test_id("token-chip").nth(3).click()
    for number, key in enumerate(keys, start=1):
        open_step(page, key)
        assert page.get_by_test_id("step-error").count() == 0, key
        body = page.locator(f".step-body[data-step='{key}']")
        # step 4 draws the tokens and their merges (its W_E row is step 5's picture)
        figures = "canvas, svg, table, .bar-list, .funnel, .mini-chips"
        assert body.locator(figures).count() > 0, key
        page.screenshot(path=str(ARTIFACTS / f"step-{number:02d}-{key}.png"), full_page=True)
    # the tour's Next button walks the same order
    open_step(page, keys[0])
    page.get_by_test_id("tour-next").click()
    assert page.locator(f".step-body[data-step='{keys[1]}']").count() == 1


def test_api_docs_render_offline(page):
    page.goto(page.server + "/docs")
    page.wait_for_selector("#post-\\/api\\/trace")
    text = page.get_by_test_id("api-docs").inner_text()
    assert "/api/attention" in text and "TraceResponse" in text
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "api-docs.png"))


def test_long_prompt_up_to_the_context(page, tiny_model):
    text = "one two three four five six seven eight " * 14
    n = len(tiny_model.encode(text))
    assert n <= tiny_model.config.n_ctx
    before = traces(page)
    page.get_by_test_id("prompt-input").fill(text)
    wait_for_trace(page, before)
    assert len(chip_ids(page)) == n
    open_step(page, "self-attention")
    canvas = page.locator("[data-testid=attention-matrix] canvas")
    assert int(canvas.get_attribute("data-rows")) == min(n, 64)
    assert math.isfinite(float(page.evaluate("performance.now()")))


def test_browser_pool_equals_candidate_pool(page):
    """sampling.js on a LogitsView against lmscope.engine.sampling on the full logits, for many
    settings. Where the page claims exactness it must match; where the pool reaches past the
    tokens it was sent, it must say so."""
    from lmscope.engine.sampling import SamplingParams, candidate_pool
    from lmscope.explain.logits import logits_view

    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(5000, generator=gen) * 2.5  # peaky enough for the filters to bite
    view = logits_view(logits, 0).model_dump()
    cases = [
        {"temperature": t, "top_k": k, "top_p": p, "min_p": m, "greedy": g}
        for t in (0.05, 0.35, 1.0, 2.0)
        for k in (0, 1, 7, 299, 400)
        for p in (1.0, 0.5, 0.95)
        for m in (0.0, 0.05)
        for g in (False,)
    ] + [{"temperature": 0.8, "top_k": 0, "top_p": 1.0, "min_p": 0.0, "greedy": True}]
    results = page.evaluate(
        """async ([view, cases]) => {
            const m = await import('/static/js/sampling.js');
            return cases.map((c) => {
                const pool = m.computePool(view, c);
                return {size: pool.poolSize, known: pool.countKnown, exact: pool.exact,
                        kept: pool.rows.filter((r) => r.survives).map((r) => [r.id, r.poolProb]),
                        tempered: pool.rows.slice(0, 5).map((r) => r.prob)};
            });
        }""",
        [view, cases],
    )
    checked_exact = 0
    for case, got in zip(cases, results, strict=True):
        params = SamplingParams(
            temperature=case["temperature"],
            top_k=case["top_k"] or None,
            top_p=None if case["top_p"] >= 1 else case["top_p"],
            min_p=case["min_p"] or None,
            greedy=case["greedy"],
        )
        pool = candidate_pool(logits, params)
        tempered = torch.softmax(logits.double() / case["temperature"], 0)
        assert got["tempered"] == pytest.approx(tempered[view["ids"][:5]].tolist(), rel=1e-6)
        if got["known"] and got["exact"]:
            checked_exact += 1
            assert got["size"] == len(pool), case
            n = min(len(pool), len(view["ids"]))
            assert [i for i, _ in got["kept"]] == pool.token_ids[:n].tolist(), case
            assert [p for _, p in got["kept"]] == pytest.approx(pool.probs[:n].tolist(), rel=1e-5)
        else:
            # an estimate is allowed only where unsent tokens matter: the pool reaches past
            # them, or top-p renormalises over a top-k set that includes some of them
            sent = len(view["ids"])
            assert len(pool) > sent or (case["top_k"] > sent and case["top_p"] < 1), case
    assert checked_exact > len(cases) // 2


def test_characters_that_draw_nothing_are_named(page):
    """A token of U+FE0F (the emoji variation selector after "❤") was a blank chip, and a
    no-break space a blank lens cell."""
    shown = page.evaluate(
        """async () => {
            const d = await import('/static/js/draw.js');
            const texts = ["\\ufe0f", "\\xa0x", "\\u200b\\u3000\\u2028", "a b\\n", "数据 ❤"];
            return texts.map((text) => d.visible(text));
        }"""
    )
    assert shown == ["<U+FE0F>", "⍽x", "<U+200B><U+3000><U+2028>", "a·b↵", "数据·❤"]


KIB, MIB, GIB = 2**10, 2**20, 2**30
SIZES = {
    # the grouped-query step's KV cache, as ``lmscope explain`` prints it (binary units): the
    # page wrote "5.00 KiB" for the terminal's "5.0 KiB", and took a tie (10.25) up
    "binaryBytes": (
        "lmscope.commands.explain_render:_bytes",
        [0, 1, 999, 1023, 1024, 1280, 1536, 1792, 5 * KIB, 10 * KIB - 1, 45 * KIB, 41 * KIB // 4]
        + [1023 * KIB + 512, 5 * MIB // 4, 3 * MIB // 2, 10 * MIB, GIB, 5 * GIB + 7, 2048 * GIB],
    ),
    # the model menu's sizes, as ``lmscope models`` prints them (decimal units): the menu wrote
    # 271 MB for 270.5 MB, the terminal 270 MB (a tie rounds to even)
    "diskSize": (
        "lmscope.commands.models:_size",
        [0, 812, 999, 1000, 1250, 2500, 9_960_000, 14_700_000, 270_500_000, 271_500_000]
        + [4_700_000_000, 12_500_000_000, 999_999_999_999],
    ),
}


@pytest.mark.parametrize("name", list(SIZES))
def test_sizes_read_as_the_terminal_prints_them(page, name):
    import importlib

    twin, sizes = SIZES[name]  # the terminal's formatter, module:function
    module, function = twin.split(":")
    terminal = getattr(importlib.import_module(module), function)
    shown = page.evaluate(
        """async ([name, sizes]) => {
            const d = await import('/static/js/draw.js');
            return sizes.map((n) => d[name](n));
        }""",
        [name, sizes],
    )
    assert shown == [terminal(n) for n in sizes]


def test_the_temperature_step_compares_only_when_t_is_not_1(page):
    """At T = 1 the table showed two equal columns, "T = 1" and "T = 1.00"."""
    open_step(page, "temperature")
    table = page.get_by_test_id("temperature-table")
    assert table.locator("th").all_inner_texts()[1:] == ["T = 1"]
    assert "Temperature slider" in page.get_by_test_id("temperature-hint").inner_text()
    page.get_by_test_id("temperature").fill("0.5")
    page.wait_for_function(
        "() => document.querySelectorAll('[data-testid=temperature-table] th').length === 3"
    )
    assert table.locator("th").all_inner_texts()[1:] == ["T = 1", "T = 0.50"]
    assert page.get_by_test_id("temperature-hint").count() == 0
    open_step(page, "sampling")
    assert "log scale" in page.get_by_test_id("step-panel").inner_text()


def test_position_labels_cut_the_text_never_the_position(page):
    """Heatmap rows read "1 ·visualizati" (cut with no sign) and, on a long prompt, "946
    ·analysis" for position 2946 (its first digit cut off at the left)."""
    shown = page.evaluate(
        """async () => {
            const d = await import('/static/js/draw.js');
            return [d.positionLabel(1, "·visualization"), d.positionLabel(2946, "·analysis"),
                    d.positionLabel(12345, "·unbelievable"), d.positionLabel(3, "·to")];
        }"""
    )
    assert shown == ["1 ·visualizat…", "2946 ·analysis", "12345 ·unbeli…", "3 ·to"]
    assert all(len(label) <= 14 for label in shown)
