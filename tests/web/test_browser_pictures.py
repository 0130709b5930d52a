"""The page's pictures (issue 14) in headless Chromium, at 1440 and 390 px wide, in English and
Chinese: characters over byte-level chips, attention as connections, the flow view and the
embedding neighbours. Every number drawn is checked against the API it came from."""

from __future__ import annotations

import re

import pytest
import webtools
from webtools import api, chip_ids, open_step, set_prompt, shot, traces, wait_for_trace

pytestmark = pytest.mark.browser

ZH_PROMPT = "数据可视化让用户能够"


def no_sideways_scroll(page, width: int):
    assert page.evaluate("document.documentElement.scrollWidth") <= width


# --- characters over byte-level chips -----------------------------------------------------


@pytest.mark.parametrize(("width", "lang"), webtools.SIZES)
def test_chinese_characters_label_their_byte_chips(page, width, lang):
    webtools.at_size(page, width, lang)
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
        assert (
            abs(box["x"] - first["x"]) < 2
            and abs(box["x"] + box["width"] - last["x"] - last["width"]) < 2
        )
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


# --- attention as connections -------------------------------------------------------------


def drawn_lines(page) -> list[dict]:
    return page.get_by_test_id("attn-line").evaluate_all(
        "els => els.map(e => ({q: +e.dataset.q, k: +e.dataset.k, head: e.dataset.head, "
        "w: +e.dataset.w, width: +e.getAttribute('stroke-width'), "
        "colour: e.getAttribute('stroke')}))"
    )


def open_lines(page):
    open_step(page, "self-attention")
    page.wait_for_selector("[data-testid=attention-lines][data-ready='1']")


@pytest.mark.parametrize(("width", "lang"), webtools.SIZES)
def test_attention_lines_draw_the_real_weights(page, width, lang):
    webtools.at_size(page, width, lang)
    set_prompt(page, "The quick brown fox jumps over the lazy dog because it")
    page.get_by_test_id("greedy").check()
    page.get_by_test_id("generate-count").fill("2")
    before = traces(page)
    page.get_by_test_id("generate-n").click()  # generated tokens are drawn like the others
    wait_for_trace(page, before)
    ids = chip_ids(page)
    last = len(ids) - 1
    open_lines(page)
    page.get_by_test_id("head-select").select_option("2")
    page.wait_for_selector("[data-testid=attention-lines][data-ready='1']")
    d = api(page, "/api/attention/lines", {"ids": ids, "layer": 0, "position": last})
    q = last - d["start"]
    lines = drawn_lines(page)
    expected = {d["start"] + k: w for k, w in enumerate(d["patterns"][2][q]) if w >= 0.004}
    assert {ln["k"]: ln["w"] for ln in lines} == expected
    assert all(ln["q"] == last and ln["head"] == "2" for ln in lines)
    heaviest = max(lines, key=lambda ln: ln["w"])
    assert heaviest["width"] == max(ln["width"] for ln in lines)  # width follows the weight
    gen = page.locator("[data-testid=line-token][data-side=query].gen")
    assert gen.count() == 2  # the two generated tokens have their rows
    # hover a key: which queries read it
    key = page.locator("[data-testid=line-token][data-side=key][data-index='3']")
    key.hover()
    lines = drawn_lines(page)
    column = {d["start"] + r: row[3] for r, row in enumerate(d["patterns"][2]) if r >= 3}
    assert {ln["q"]: ln["w"] for ln in lines} == {p: w for p, w in column.items() if w >= 0.004}
    assert all(ln["k"] == d["start"] + 3 for ln in lines)
    readout = page.get_by_test_id("lines-readout").inner_text()
    assert ("被读取" in readout or "读取" in readout) if lang == "zh" else "read most by" in readout
    page.mouse.move(1, 1)
    # every head of the layer, each its own colour; then their mean
    page.locator("[data-testid=lines-mode] button[data-mode=all]").click()
    lines = drawn_lines(page)
    assert {ln["head"] for ln in lines} == {str(h) for h in range(d["n_head"])}
    assert len({ln["colour"] for ln in lines}) == d["n_head"]
    page.locator("[data-testid=lines-mode] button[data-mode=mean]").click()
    mean = [sum(p[q][k] for p in d["patterns"]) / d["n_head"] for k in range(q + 1)]
    for ln in drawn_lines(page):
        assert ln["head"] == "mean" and ln["w"] == pytest.approx(
            mean[ln["k"] - d["start"]], abs=1e-9
        )
    page.locator("[data-testid=lines-mode] button[data-mode=head]").click()
    # click a query on the right: its position is selected
    page.locator("[data-testid=line-token][data-side=query][data-index='4']").click()
    label = page.get_by_test_id("position-label").inner_text()
    assert re.split("[:：]", label)[0].endswith(str(d["start"] + 4))  # Chinese: 位置 4：
    no_sideways_scroll(page, width)
    shot(page, f"attention-lines-{width}-{lang}")


# --- the flow view ------------------------------------------------------------------------


def flow_loaded(page):
    page.wait_for_selector("[data-testid=flow][data-loaded='1'][data-drawn='1']")


def active_step(page) -> str:
    return page.locator("[data-testid=step-nav] button.active").get_attribute("data-step")


@pytest.mark.parametrize(("width", "lang"), webtools.SIZES)
def test_the_flow_draws_the_real_vectors_and_probabilities(page, width, lang, tiny_model):
    webtools.at_size(page, width, lang)
    flow_loaded(page)
    ids = chip_ids(page)
    last = len(ids) - 1
    d = api(page, "/api/flow", {"ids": ids, "position": last})
    flow = page.get_by_test_id("flow")
    assert flow.get_attribute("data-family") == "gpt2"
    tokens = flow.get_by_test_id("flow-token")
    assert [int(p) for p in tokens.evaluate_all("els => els.map(e => e.dataset.position)")] == [
        t["position"] for t in d["tokens"]
    ]
    strips = flow.get_by_test_id("flow-embedding")
    assert strips.count() == len(d["tokens"])
    assert {int(n) for n in strips.evaluate_all("els => els.map(e => e.dataset.n)")} == {64}
    n_layer = tiny_model.config.n_layer
    assert flow.get_by_test_id("flow-stream").count() == n_layer + 1
    # the stream is the real residual: the block input, then every block's output
    trace = tiny_model.trace(ids)
    expected = [trace["blocks.0.hook_resid_pre"][last]]
    expected += [trace[f"blocks.{i}.hook_resid_post"][last] for i in range(n_layer)]
    for got, want in zip(d["stream"], expected, strict=True):
        assert got == pytest.approx(want.tolist(), rel=5e-2, abs=1e-6)  # 2 digits
    # the probabilities at the end are the model's
    probs = flow.get_by_test_id("flow-prob").evaluate_all(
        "els => els.map(e => [+e.dataset.id, +e.dataset.value])"
    )
    full = trace.last_logits.double().softmax(0)
    for token_id, p in probs:
        assert p == pytest.approx(float(full[token_id]), rel=1e-4)
    # GPT-2 adds a learned position vector, normalises with LayerNorm, uses a GELU MLP
    assert flow.locator("[data-testid=flow-decomposition] [data-part=position]").count() == 1
    assert "GELU" in flow.get_by_test_id("flow-mlp-kind").inner_text()
    assert flow.get_by_test_id("flow-rope").count() == 0
    assert flow.locator(".flow-kv").count() == tiny_model.config.n_head  # a K/V per head
    no_sideways_scroll(page, width)


@pytest.mark.parametrize(("width", "lang"), webtools.SIZES)
def test_each_step_lights_its_part_and_explains_it_in_place(page, width, lang):
    webtools.at_size(page, width, lang)
    flow_loaded(page)
    flow = page.get_by_test_id("flow")
    shots = {
        "embedding": "flow-embedding",
        "self-attention": "flow-attention",
        "probabilities": "flow-probabilities",
    }
    for key, lit in [
        ("embedding", "embedding"),
        ("self-attention", "attn"),
        ("mlp", "mlp"),
        ("probabilities", "probs"),
    ]:
        open_step(page, key)
        assert flow.get_attribute("data-step") == key
        assert "on" in flow.locator(f"[data-part={lit}]").first.get_attribute("class")
        explain = flow.get_by_test_id("flow-explain")
        title = page.get_by_test_id("step-title").inner_text()
        assert title.split("\n")[-1].strip() in explain.inner_text()
        if key in shots:
            shot(page, f"{shots[key]}-{width}-{lang}")
    # the flow's own controls walk the same list, in sync with it
    page.get_by_test_id("flow-next").click()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=flow]').dataset.step === 'temperature'"
    )
    assert active_step(page) == "temperature"
    page.get_by_test_id("flow-prev").click()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=flow]').dataset.step === 'probabilities'"
    )
    assert active_step(page) == "probabilities"
    # a part is a button: Tab to it, Enter opens its step
    page.locator("[data-testid=flow] [data-part=mlp]").focus()
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=flow]').dataset.step === 'mlp'"
    )
    assert active_step(page) == "mlp"
    no_sideways_scroll(page, width)


def test_play_pause_and_the_animation(page):
    # the timing logic is the same at every size and in every language: one run checks it
    width = 1440
    webtools.at_size(page, width, "en")
    flow_loaded(page)
    page.evaluate("window.lmscope.flow.playMs = 700")
    open_step(page, "transformer")
    page.get_by_test_id("flow-play").click()
    assert page.get_by_test_id("flow-play").get_attribute("aria-pressed") == "true"
    page.wait_for_function(
        "() => document.querySelector('[data-testid=flow]').dataset.step === 'architecture'"
    )
    page.get_by_test_id("flow-play").click()  # pause
    stopped = page.get_by_test_id("flow").get_attribute("data-step")
    page.wait_for_timeout(1200)
    assert page.get_by_test_id("flow").get_attribute("data-step") == stopped
    assert active_step(page) == stopped
    # a step change sends a packet and is measured with performance marks
    open_step(page, "blocks")
    before = page.evaluate("window.lmscope.flow.changes.length")
    page.evaluate(  # the packet lives for its 520 ms flight: counted as it comes, not polled
        """() => { window.packets = 0; new MutationObserver(() => {
            if (document.querySelector('[data-testid=flow-packet]')) window.packets += 1;
        }).observe(document.body, {subtree: true, childList: true}); }"""
    )
    page.get_by_test_id("flow-next").click()  # the stack -> attention
    page.wait_for_function(
        f"() => window.lmscope.flow.changes.length > {before} && !window.lmscope.flow.moving"
    )
    assert page.evaluate("window.packets") >= 1
    # the flight's frame gaps are recorded (how many frames a busy machine draws in 520 ms is
    # for benchmarks/bench_web.py, which reads them)
    frames = page.evaluate("window.lmscope.flow.changes.at(-1).frames")
    assert frames and all(gap > 0 for gap in frames)
    assert page.evaluate("performance.getEntriesByName('flow-step').length") >= 1
    assert page.evaluate("performance.getEntriesByName('flow-first-frame').length") == 1


def test_reduced_motion_moves_nothing(browser, server):
    options = {"viewport": {"width": 1440, "height": 900}, "reduced_motion": "reduce"}
    context = webtools.patient(browser.new_context(**options))
    page = context.new_page()
    page.goto(server + "/")
    page.wait_for_selector("body[data-ready='1']")
    flow_loaded(page)
    seen = []
    page.expose_function("sawPacket", lambda: seen.append(1))
    page.evaluate(
        """() => new MutationObserver((m) => {
            if (document.querySelector('[data-testid=flow-packet]')) window.sawPacket();
        }).observe(document.body, {subtree: true, childList: true})"""
    )
    for key in ("embedding", "mlp", "probabilities"):
        page.locator(f"[data-testid=step-nav] button[data-step='{key}']").click()
        page.wait_for_selector(f".step-body[data-step='{key}']")
    assert seen == [] and page.evaluate("window.lmscope.flow.changes.length") == 0
    rail = page.locator(".flow-rail").evaluate("e => getComputedStyle(e, '::before').animationName")
    assert rail == "none"
    context.close()


# --- embedding neighbours -----------------------------------------------------------------


@pytest.mark.parametrize(("width", "lang"), webtools.SIZES)
def test_embedding_neighbours_are_the_nearest_rows_of_w_e(page, width, lang, tiny_model):
    import torch

    webtools.at_size(page, width, lang)
    page.get_by_test_id("token-chip").nth(2).click()
    open_step(page, "embedding")
    box = page.get_by_test_id("neighbours")
    page.wait_for_selector("[data-testid=neighbours][data-ready='1']")
    token = chip_ids(page)[2]
    shown = box.get_by_test_id("neighbour").evaluate_all(
        "els => els.map(e => [+e.dataset.id, +e.dataset.cosine])"
    )
    w = tiny_model.net.wte.weight.detach().double()
    cos = torch.nn.functional.cosine_similarity(w, w[token][None], dim=-1)
    cos[token] = -2
    top = torch.topk(cos, 12)
    assert [i for i, _ in shown] == top.indices.tolist()
    assert [c for _, c in shown] == pytest.approx(top.values.tolist(), abs=2e-5)
    assert ("余弦" in box.inner_text()) == (lang == "zh")
    no_sideways_scroll(page, width)


def test_neighbours_api_uses_the_whole_vocabulary_and_one_index(client, tiny_model):
    from lmscope.explain.neighbours import embedding_index

    ids = tiny_model.encode("The king and the queen")
    body = client.post("/api/neighbours", json={"ids": ids, "position": 4, "k": 5}).json()
    assert body["vocab"] == tiny_model.vocab_size and len(body["neighbours"]) == 5
    assert body["id"] == ids[4] and all(n["id"] != ids[4] for n in body["neighbours"])
    index = embedding_index(tiny_model)
    client.post("/api/neighbours", json={"ids": ids, "position": 1})
    assert embedding_index(tiny_model) is index  # computed once per served model
    bad = client.post("/api/neighbours", json={"ids": ids, "position": 99})
    assert bad.status_code == 400 and bad.json()["code"] == "error.check.no-position"
