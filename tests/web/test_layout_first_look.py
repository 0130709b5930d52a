"""The first look on the real SmolLM2 (issue 38), at 1440x900 and 390x844, in English and
Chinese: every step opened from the tour's one navigator (the keyboard's →, and its › on the
diagram's card and in the step panel, one control whose two copies say the same step and play
state) has its explanation and its lit part of the diagram in the window without scrolling; no
element of the page, the step panel, the sampling panel or /docs wider than
its container on any of the 20 steps; the sampling panel's small values inside their column;
the phone header on one line with a usable position slider and a whole scrubber readout; the
Chinese token box of step 5 showing its last character; the flow diagram's captions apart and
its opened block on one row; small shares written in decimals; /api/model asked for once;
on a phone, no number in a step's table, no word of a column's heading and no step number
broken over two lines.

One server and one browser for the module; each size and language is one page load that opens
every step from the step list and measures the boxes with page.evaluate."""

from __future__ import annotations

import pytest
from webtools import CHROMIUM_ARGS, HANG_MS, find_chromium, patient, serve, set_prompt, wait_idle

from tiers import slow_work

pytestmark = pytest.mark.browser

SIZES = {1440: {"width": 1440, "height": 900}, 390: {"width": 390, "height": 844}}
ZH_PROMPT = "机器学习让计算机从数据中学习"

# Every element under `root` whose box runs past the root's right edge (the window's for
# the document), by more than a pixel; the prompt box and the API's JSON boxes scroll by design.
WIDER = """(sel) => {
  const root = document.querySelector(sel);
  if (!root) return ['missing ' + sel];
  const limit = sel === 'html' ? window.innerWidth : root.getBoundingClientRect().right;
  const out = [];
  if (sel === 'html' && document.documentElement.scrollWidth > window.innerWidth)
    out.push('document ' + document.documentElement.scrollWidth + ' > ' + window.innerWidth);
  for (const e of root.querySelectorAll('*')) {
    if (e.closest('pre, textarea')) continue;
    const b = e.getBoundingClientRect();
    if (!b.width || !b.height) continue;
    if (b.right > limit + 1) {
      const id = e.dataset.testid || e.id || e.getAttribute('class') || '';
      out.push(`${e.tagName}.${id} +${Math.round(b.right - limit)}px`);
    }
  }
  return out.slice(0, 6);
}"""

# Boxes whose text runs out of them (cut or spilling): a value of the sampling panel, the
# scrubber's readout, the language button on two lines, the token box of step 5.
CUT = """() => {
  const out = [];
  for (const v of document.querySelectorAll('#sampling .prob-bar .val'))
    if (v.scrollWidth > v.clientWidth + 1) out.push('sampling value ' + v.textContent);
  const readout = document.querySelector('[data-testid=position-readout]');
  if (readout && readout.scrollWidth > readout.clientWidth + 1)
    out.push('readout ' + readout.textContent);
  const lang = document.querySelector('[data-testid=lang-toggle]');
  const r = document.createRange();
  r.selectNodeContents(lang);
  const tops = new Set([...r.getClientRects()].map((x) => Math.round(x.top)));
  if (tops.size > 1) out.push('language button on ' + tops.size + ' lines');
  return out;
}"""


# Words broken over two lines on a phone: a number in a step's table ("100" over "0", "450."
# over "0 KiB" in Chinese; each word of a cell holding only numbers), a column's heading
# ("Probabili" over "ties", "softma" over "x"), the step's number beside its title ("1" over
# "3"), a one-word choice of a segmented control ("最" over "终"); and a line chart's words
# drawn at their size, not scaled down to 6 px.
BROKEN = """() => {
  const out = [];
  const number = /^\\s*[−\\-+\\[(]?\\d[\\d.,\\s\\[\\]()−\\-+×→e%]*(KiB|MiB|GiB)?\\s*$/;
  const cells = [...document.querySelectorAll('#step table.data td')]
    .filter((td) => number.test(td.textContent));
  const more = document.querySelectorAll('#step table.data th code, #step h3 .num');
  const heads = document.querySelectorAll('#step table.data th');
  for (const box of [...cells, ...more, ...heads]) {
    const node = [...box.childNodes].find((n) => n.nodeType === 3);
    if (!node) continue;
    for (const word of node.textContent.matchAll(/\\S+/g)) {
      // a heading's English word (Chinese breaks between its characters)
      if (box.tagName === 'TH' && !/^[\\x21-\\x7e]+$/.test(word[0])) continue;
      const r = document.createRange();
      r.setStart(node, word.index);
      r.setEnd(node, word.index + word[0].length);
      const tops = new Set([...r.getClientRects()].map((x) => Math.round(x.top)));
      if (tops.size > 1) out.push(word[0]);
    }
  }
  // a line chart's, RoPE's bar chart's or the grouped-query diagram's words at their size,
  // not scaled down to the panel (6-8 px at 390 px)
  const charts = '#step svg.line-chart text, #step [data-testid=rope-frequencies] text, '
    + '#step [data-testid=gqa-diagram] text';
  for (const text of document.querySelectorAll(charts)) {
    const h = text.getBoundingClientRect().height;
    if (h && h < 10) out.push(`${text.textContent} ${h.toFixed(1)} px`);
  }
  // a choice of one word on one line ("最终" stood as 最 over 终)
  for (const b of document.querySelectorAll('#step .segmented button')) {
    const r = document.createRange();
    r.selectNodeContents(b);
    const tops = new Set([...r.getClientRects()].map((x) => Math.round(x.top)));
    if (!/\\s/.test(b.textContent.trim()) && tops.size > 1) out.push(b.textContent);
  }
  return out.slice(0, 6);
}"""


# The step's explanation and its lit part of the diagram, both in the window without scrolling:
# the explanation's card whole, the part's top in the room above the card.
IN_VIEW = """() => {
  const box = document.querySelector('[data-testid=flow-explain]');
  const card = document.querySelector('[data-testid=flow-tour]').getBoundingClientRect();
  const part = document.querySelector(`[data-testid=flow] [data-part="${box.dataset.part}"]`);
  const lit = part.getBoundingClientRect();
  const e = box.getBoundingClientRect();
  const plain = box.querySelector('[data-testid=flow-plain]')?.textContent ?? '';
  const panel = document.querySelector('[data-testid=step-plain]')?.textContent ?? '';
  return {
    // plain words first, the same in the card and the panel, without GPT-2 or notation
    plain: plain.length > 30 && plain === panel && !/GPT|d_|[=_^]/.test(plain),
    step: box.dataset.step,
    explained: e.height > 20 && e.top >= 0 && e.bottom <= window.innerHeight + 1,
    lit: lit.height > 0 && lit.top >= 0 && lit.top + Math.min(lit.height, 12) <= card.top + 1,
  };
}"""


@pytest.fixture(scope="module")
def app(smollm2):
    from lmscope.web import create_app

    return create_app(smollm2)


@pytest.fixture(scope="module")
@slow_work
def chromium():
    sync_api = pytest.importorskip("playwright.sync_api")
    path = find_chromium()
    if path is None:
        pytest.skip("no Chromium found")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS, timeout=HANG_MS)
        yield b
        b.close()


@pytest.fixture(scope="module")
@slow_work
def url(app):
    with serve(app) as base:
        yield base


def open_page(chromium, url, width: int, lang: str, path: str = "/", requests=None):
    # no motion: a step opens without waiting for the flow's packet to land
    context = patient(chromium.new_context(viewport=SIZES[width], reduced_motion="reduce"))
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    if requests is not None:
        page.on("request", lambda r: requests.append(r.url))
    page.add_init_script(f"localStorage.setItem('lmscope.lang', '{lang}')")
    page.goto(url + path)
    page.server = url
    page.errors = errors
    return context, page


def open_step(page, key: str) -> None:
    page.locator(f"[data-testid=step-nav] button[data-step='{key}']").click()
    page.wait_for_selector(f".step-body[data-step='{key}']")
    wait_idle(page)


# Where the header's parts stand: the brand, the links (and the language button), the facts.
HEADER_PARTS = """() => {
  const box = (sel) => {
    const b = document.querySelector(sel).getBoundingClientRect();
    return { top: b.top, bottom: b.bottom };
  };
  return {
    brand: box('header .brand'),
    links: box('header .top-actions'),
    facts: box('#facts'),
    precision: box('[data-testid=precision]'),
  };
}"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_links_stand_beside_the_brand_and_the_facts_under_them(chromium, url, lang):
    """At 1440 px, since the model menu, the links and the language button dropped alone to a
    second row at the left. The first row is the brand, the menu and the links; the model's
    facts and the precision line are the second."""
    context, page = open_page(chromium, url, 1440, lang)
    try:
        page.wait_for_selector("body[data-ready='1']")
        page.wait_for_selector("[data-testid=precision] span")
        parts = page.evaluate(HEADER_PARTS)
        brand, links = parts["brand"], parts["links"]
        assert links["top"] < brand["bottom"] and brand["top"] < links["bottom"], parts
        row_two = parts["facts"]
        assert row_two["top"] >= max(brand["bottom"], links["bottom"]), parts
        assert parts["precision"]["top"] < row_two["bottom"], parts  # beside the facts
    finally:
        context.close()


@pytest.mark.parametrize("width", [1440, 390])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_step_is_wider_than_its_panel_and_no_text_is_cut(chromium, url, width, lang):
    requests: list[str] = []
    context, page = open_page(chromium, url, width, lang, requests=requests)
    try:
        page.wait_for_selector("body[data-ready='1']")
        # the model's facts are asked for once (app.js and precision.js each asked)
        assert sum(u.endswith("/api/model") for u in requests) == 1, requests
        keys = page.evaluate(
            "[...document.querySelectorAll('[data-testid=step-nav] button[data-step]')]"
            ".map((b) => b.dataset.step)"
        )
        assert len(keys) == 20
        problems = {}
        for i, key in enumerate(keys):
            found = []
            # the tour's one navigator: the list opens the first step, then the keyboard's →,
            # the card's › and the step panel's › (the same control, drawn there too) in turn
            if not i:
                page.locator(f"[data-testid=step-nav] button[data-step='{key}']").click()
            elif i % 3 == 1:
                page.keyboard.press("ArrowRight")
            else:
                page.get_by_test_id("flow-next" if i % 3 == 2 else "tour-next").click()
            page.wait_for_selector(f".step-body[data-step='{key}']")
            wait_idle(page)
            # the card's control and the panel's say the same step
            where = {page.get_by_test_id(f"{bar}-where").inner_text() for bar in ("flow", "tour")}
            if where != {f"{i + 1} / {len(keys)}"}:
                found = [f"the tour's controls say {where}"]
            found = [*found, *page.evaluate(WIDER, "html"), *page.evaluate(WIDER, "#step")]
            found += page.evaluate(WIDER, "#sampling")
            if width == 390:
                found += [f"broken: {word}" for word in page.evaluate(BROKEN)]
            if key == "masked-attention":
                # the step opens with a query whose row shows masked positions (the last
                # query's row has none)
                tail = page.locator("[data-testid=masked-example-row] tr.tail")
                if tail.count() != 1 or "−∞" not in tail.inner_text():
                    found.append("no masked row")
            seen = page.evaluate(IN_VIEW)
            if seen != {"step": key, "explained": True, "lit": True, "plain": True}:
                found.append(seen)
            if found:
                problems[key] = found
        assert problems == {}, problems
        # one ▶ for the tour: pressed in the panel, the card's shows it playing too; a step
        # opened another way (the keyboard) pauses it, and both say so
        pressed = """() => ['flow-play', 'tour-play'].map(
            (id) => document.querySelector(`[data-testid=${id}]`).getAttribute('aria-pressed'))"""
        page.get_by_test_id("tour-prev").click()
        page.wait_for_selector(f".step-body[data-step='{keys[-2]}']")
        page.get_by_test_id("tour-play").click()
        assert page.evaluate(pressed) == ["true", "true"]
        page.keyboard.press("ArrowLeft")
        page.wait_for_selector(f".step-body[data-step='{keys[-3]}']")
        wait_idle(page)
        assert page.evaluate(pressed) == ["false", "false"]
        assert page.get_by_test_id("tour-where").inner_text() == f"{len(keys) - 2} / {len(keys)}"
        assert page.evaluate(CUT) == []
        if width == 390:
            slider = page.locator("#position-slider").bounding_box()
            assert slider["width"] >= 120, slider  # it was squeezed to 54 px
        else:
            # the opened block's parts on one row (SwiGLU wrapped onto a second)
            tops = page.evaluate(
                "[...document.querySelectorAll('[data-testid=flow-open-block] > .flow-sub')]"
                ".map((e) => Math.round(e.getBoundingClientRect().top + e.offsetHeight / 2))"
            )
            assert max(tops) - min(tops) < 20, tops
        # the head-count caption and the RoPE line stand apart (they touched)
        gap = page.evaluate(
            """() => {
              const rope = document.querySelector('[data-testid=flow-rope]');
              const caption = rope.previousElementSibling;
              return rope.getBoundingClientRect().top - caption.getBoundingClientRect().bottom;
            }"""
        )
        assert gap >= 2, gap
        if lang == "zh":
            # step 5's token box shows the whole prompt, its last character included
            set_prompt(page, ZH_PROMPT)
            open_step(page, "token-embedding")
            box = page.evaluate(
                """() => {
                  const b = document.querySelector('.step-body .mini-chips');
                  const last = [...b.querySelectorAll('.chip')].at(-1).getBoundingClientRect();
                  return {cut: b.scrollHeight - b.clientHeight,
                          inside: last.bottom <= b.getBoundingClientRect().bottom + 1};
                }"""
            )
            assert box == {"cut": 0, "inside": True}, box
            assert page.evaluate(WIDER, "#step") == []
            # a byte token's neighbours are explained, not listed as if they meant something
            byte = page.locator("[data-testid=token-chip]", has_text="<0x").first
            byte.click()
            open_step(page, "embedding")
            page.wait_for_selector("[data-testid=neighbours][data-ready='1']")
            assert "UTF-8" in page.get_by_test_id("neighbours-byte").inner_text()
            assert page.locator("[data-testid=neighbour]").first.is_hidden()
        # "Compare models" only with a second model (this server has none)
        assert page.locator("[data-testid=view-nav] [data-view=compare]").count() == 0
        assert page.locator("[data-testid=view-nav] [data-view=lens]").count() == 1
        # a small share is written in decimals, the same in both languages
        assert "e−" not in page.locator("#sampling").inner_text()
        shown = page.evaluate(
            "async () => { const d = await import('/static/js/draw.js');"
            " return [d.pct(4.4e-7), d.pct(7.9e-6), d.pct(3e-9)]; }"
        )
        assert shown == ["0.000044%", "0.00079%", "< 0.000001%"]
        assert page.errors == []
    finally:
        context.close()


@pytest.mark.parametrize("width", [1440, 390])
def test_the_api_manual_is_no_wider_than_the_window(chromium, url, width):
    """StepResponse's `data` is a union of about 25 names: it wraps, the page does not scroll
    sideways (3,492 px at 1440, 3,322 px at 390)."""
    context, page = open_page(chromium, url, width, "en", path="/docs")
    try:
        page.wait_for_function(
            "() => [...document.querySelectorAll('.schema h4')]"
            ".some((h) => h.textContent.includes('StepResponse'))"
        )
        assert page.evaluate(WIDER, "html") == []
    finally:
        context.close()
