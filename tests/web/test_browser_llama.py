"""The page on the real SmolLM2 (a Llama-family model): all 20 steps without an error and with
its own labels; the RoPE, RMSNorm, grouped-query attention and SwiGLU views showing the numbers
the API gives; the Chinese page; the logit lens, ablation, comparison and generated tokens; and
the chat toggle (special tokens in the chips, generation that stops at the end of the answer).
Screenshots of the RoPE and SwiGLU steps go to test-artifacts/ (smollm2-rope.png,
smollm2-swiglu.png)."""

from __future__ import annotations

import re

import pytest
from webtools import (
    ARTIFACTS,
    api,
    char_model,
    chip_ids,
    open_step,
    open_view,
    set_prompt,
    traces,
    wait_for_trace,
    wait_idle,
)

pytestmark = pytest.mark.browser

PROMPT = "The capital of France is Paris, and the capital of Germany is"
LAYER, HEAD = 3, 4


@pytest.fixture(scope="module")
def app(smollm2):
    from lmscope.web import create_app

    return create_app(smollm2, compare=[char_model()])


def choose(page, layer: int, head: int | None = None) -> None:
    page.get_by_test_id("layer-select").select_option(str(layer))
    wait_idle(page)
    if head is not None:
        page.get_by_test_id("head-select").select_option(str(head))
        wait_idle(page)


def step_api(page, key: str, **extra) -> dict:
    ids = chip_ids(page)
    body = {"ids": ids, "key": key, "position": len(ids) - 1, "layer": LAYER, "head": HEAD}
    return api(page, "/api/step", {**body, **extra})["data"]


def shown_numbers(text: str) -> list[float]:
    """The numbers written as 1.9e−6 (the page's minus sign) or 0.0e+0 in a line of the page."""
    return [float(x.replace("−", "-")) for x in re.findall(r"\d\.\de[+−-]\d+", text)]


def body_text(page) -> str:
    return page.locator(".step-body").inner_text()


def test_every_step_renders_with_the_models_own_labels(page):
    page.emulate_media(reduced_motion="reduce")  # no flying packet: each step 0.6 s sooner
    set_prompt(page, PROMPT)
    steps = page.request.get(page.server + "/api/steps?lang=en").json()["steps"]
    assert len(steps) == 20
    open_step(page, steps[0]["key"])
    for n, step in enumerate(steps, 1):
        page.wait_for_selector(f".step-body[data-step='{step['key']}']")
        wait_idle(page)
        assert page.get_by_test_id("step-error").count() == 0, step["key"]
        assert page.get_by_test_id("step-title").inner_text().endswith(step["said"]["title"])
        shown = body_text(page)
        for wrong in ("LayerNorm", "GELU", "W_P", "position embedding", "→ W_QKV"):
            assert wrong not in shown, (step["key"], wrong)
        if n < 20:
            page.get_by_test_id("tour-next").click()
    pipeline = page.get_by_test_id("pipeline").inner_text()
    assert "LayerNorm" not in pipeline and "GELU" not in pipeline
    # a shape is written one way, as torch prints it: [14, 49152] in step 3, [49152] in the flow
    shapes = re.findall(
        r"\[[\d, ]*\d,\d{3}[^\]]*\]", pipeline + page.get_by_test_id("flow").inner_text()
    )
    assert not shapes, shapes


def test_rope_view_shows_the_rotation_and_the_distance_check(page):
    set_prompt(page, PROMPT)
    open_step(page, "positional-encoding")
    choose(page, LAYER, HEAD)
    d = step_api(page, "positional-encoding")
    assert d["kind"] == "rotary" and d["kv_head"] == 1
    assert page.locator("[data-testid=rope-frequencies] rect[data-pair]").count() == 32
    assert page.locator("[data-testid=rope-dials-q] svg").count() == 32
    assert page.locator("[data-testid=rope-dials-k] svg").count() == 32
    rows = page.locator("[data-testid=rope-check] tbody tr")
    same, moved = d["check"]["same_distance"], d["check"]["other_distance"]
    assert rows.count() == len(same) + len(moved)
    for i, s in enumerate(same + moved):
        cells = rows.nth(i).locator("td").all_inner_texts()
        assert cells[2:] == [str(s["query_at"]), str(s["key_at"]), str(s["distance"])] + [
            f"{s['score']:.7f}"
        ]
    scores = {round(s["score"], 4) for s in same}
    assert len(scores) == 1  # the same distance gives the same score
    verdict = page.get_by_test_id("rope-verdict").inner_text()
    assert shown_numbers(verdict)[0] == pytest.approx(d["check"]["max_abs_difference"], rel=0.05)
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("[data-testid=step-panel]").screenshot(path=str(ARTIFACTS / "smollm2-rope.png"))


def test_rmsnorm_and_gqa_views_show_the_api_numbers(page):
    set_prompt(page, PROMPT)
    open_step(page, "layernorm")
    choose(page, LAYER)
    for which in ("ln1", "ln2", "final"):
        page.locator(f"[data-testid=ln-select] button:has-text('{which}')").click()
        wait_idle(page)
        d = step_api(page, "layernorm", norm=which)
        assert d["kind"] == "rmsnorm" and d["which"] == which
        formula = page.get_by_test_id("rms-formula").inner_text()
        rms = float(re.findall(r"= ([\d.]+) ·", formula)[0])
        assert rms == pytest.approx(d["rms"], rel=1e-4)
    open_step(page, "multi-head")
    choose(page, LAYER, HEAD)
    diagram = page.get_by_test_id("gqa-diagram")
    assert diagram.locator("g[data-head]").count() == 9
    diagram.locator("g[data-head='7']").click()
    wait_idle(page)
    assert page.get_by_test_id("head-select").input_value() == "7"
    cache = page.get_by_test_id("kv-cache").inner_text()
    assert "45.0 KiB" in cache and "135.0 KiB" in cache  # per token: 3 kv heads vs 9


def test_swiglu_view_puts_the_real_gate_values_on_the_silu_curve(page):
    set_prompt(page, PROMPT)
    open_step(page, "mlp")
    choose(page, LAYER)
    d = step_api(page, "mlp")
    assert d["kind"] == "swiglu" and d["d_mlp"] == 1536
    assert page.get_by_test_id("silu-curve").locator("canvas").count() == 1
    first = page.locator("[data-testid=swiglu-top] tbody tr").first.locator("td").all_inner_texts()
    assert int(first[0]) == d["strongest"][0]["index"]
    checks = shown_numbers(page.get_by_test_id("swiglu-checks").inner_text())
    assert checks[0] == pytest.approx(d["product_max_error"], rel=0.05, abs=1e-12)
    assert checks[1] == pytest.approx(d["down_max_error"], rel=0.05, abs=1e-12)
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("[data-testid=step-panel]").screenshot(path=str(ARTIFACTS / "smollm2-swiglu.png"))


def test_the_llama_views_speak_chinese(page):
    set_prompt(page, PROMPT)
    open_step(page, "positional-encoding")
    page.get_by_test_id("lang-toggle").click()
    page.wait_for_function("document.documentElement.lang === 'zh-CN'")
    wait_idle(page)
    assert "旋转位置编码" in page.get_by_test_id("step-title").inner_text()
    assert "只取决于距离" in body_text(page)
    open_step(page, "mlp")
    assert "SwiGLU" in page.get_by_test_id("step-title").inner_text()
    assert "真实的 gate 值" in body_text(page)


def test_the_chat_toggle_shows_the_template_and_generation_ends_the_answer(page):
    set_prompt(page, "What is the capital of France?")
    plain = chip_ids(page)
    toggle = page.get_by_test_id("chat-toggle")
    before = traces(page)
    toggle.check()
    wait_for_trace(page, before)
    pieces = page.locator("[data-testid=token-chip] .piece").all_inner_texts()
    assert pieces[0] == "<|im_start|>" and pieces.count("<|im_end|>") == 2
    assert len(chip_ids(page)) > len(plain) + 10
    page.get_by_test_id("greedy").check()
    page.get_by_test_id("generate-count").fill("40")
    before = traces(page)
    page.get_by_test_id("generate-n").click()
    wait_for_trace(page, before)
    pieces = page.locator("[data-testid=token-chip] .piece").all_inner_texts()
    last_turn = len(pieces) - 1 - pieces[::-1].index("<|im_start|>")
    answer = "".join(pieces[last_turn:])
    assert pieces[-1] == "<|im_end|>" and "Paris" in answer  # it stopped at its turn's end
    assert page.locator("[data-testid=token-chip].gen").count() < 40
    # chat stays on and the box keeps the question: the box once took the whole template and
    # the toggle went off, so ticking it again wrapped the template in a second one
    assert toggle.is_checked()
    assert page.get_by_test_id("prompt-input").input_value() == "What is the capital of France?"
    for on in (False, True):
        before = traces(page)
        toggle.set_checked(on)
        wait_for_trace(page, before)
    pieces = page.locator("[data-testid=token-chip] .piece").all_inner_texts()
    assert pieces.count("<|im_start|>") == 3 and pieces.count("<|im_end|>") == 2


def test_look_inside_views_and_generated_tokens_work_on_smollm2(page):
    set_prompt(page, "The capital of France is")
    ids = chip_ids(page)
    open_view(page, "lens")
    explain = page.get_by_test_id("step-explain").inner_text()
    assert "RMSNorm" in explain and "LayerNorm" not in explain
    lens = api(page, "/api/lens", {"ids": ids, "position": len(ids) - 1, "size": 16})
    assert len(lens["stages"]) == 31  # the embedding and 30 blocks
    assert page.get_by_test_id("lens-cell").count() == 31 * len(ids)
    open_view(page, "ablation")
    for spec in (
        "[data-testid=ablate-head][data-spec='L2H4']",
        "[data-testid=ablate-mlp][data-layer='0']",
    ):
        page.locator(spec).click()
        page.wait_for_selector("[data-testid=ablation-effect][data-state=ready]")
    kl = float(page.get_by_test_id("ablation-kl").get_attribute("data-kl"))
    body = {"ids": ids, "ablate": ["L2H4", "mlp0"], "mode": "zero", "position": len(ids) - 1}
    assert kl == api(page, "/api/ablate", body)["kl"] > 0
    open_view(page, "compare")
    page.wait_for_selector("[data-testid=compare-unit]")
    assert page.get_by_test_id("compare-unit").get_attribute("data-unit") == "character"
    # generated tokens: each one opens in the steps like a prompt token
    page.get_by_test_id("greedy").check()
    before = traces(page)
    page.get_by_test_id("generate-n").click()
    wait_for_trace(page, before)
    generated = page.locator("[data-testid=token-chip].gen")
    assert generated.count() >= 1
    open_step(page, "positional-encoding")
    generated.first.click()
    wait_idle(page)
    position = int(generated.first.get_attribute("data-position"))
    assert page.get_by_test_id("position-label").inner_text().startswith(f"Position {position}")
    assert page.get_by_test_id("step-error").count() == 0
    assert f"position {position}" in body_text(page)


def test_the_qkv_windows_label_every_position(page):
    """SmolLM2's 64-wide heads drew the key and value windows 4 px a row: only every third
    position got a label."""
    set_prompt(page, PROMPT)
    open_step(page, "qkv")
    labels = page.locator(".step-body [data-testid=row-labels]")
    assert labels.count() >= 2
    assert page.locator(".step-body .row-labels.sparse").count() == 0
    rows = labels.first.locator("div").all_inner_texts()
    assert rows[0].startswith("0 ") and len(rows) > 5
