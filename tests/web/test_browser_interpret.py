"""The "look inside" views and position scrubbing in headless Chromium: the logit lens grid,
switching heads off and reading the server's KL, the side-by-side comparison (per token and
per character), scrubbing through generated tokens with the attention tint, and bad input.

The browser and page fixtures are conftest.py's (offline, no console errors); the server here
is started with two models to compare with. Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import httpx
import pytest
from webtools import api, char_model, chip_ids, open_view, shot, wait_for_trace, wait_idle

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def app(tiny_model, other_gpt2):
    from lmscope.web import create_app

    return create_app(tiny_model, compare=[other_gpt2, char_model()])


def test_logit_lens_grid_shows_the_servers_numbers(page):
    open_view(page, "lens")
    ids = chip_ids(page)
    expected = api(page, "/api/lens", {"ids": ids, "position": len(ids) - 1, "size": 12})
    cells = page.get_by_test_id("lens-cell").evaluate_all(
        "els => els.map(e => [+e.dataset.stage, +e.dataset.position, +e.dataset.topId,"
        " +e.dataset.topProb, +e.dataset.finalRank])"
    )
    assert len(cells) == len(expected["stages"]) * len(expected["positions"])
    for stage, position, top_id, top_prob, rank in cells:
        cell = expected["cells"][stage][expected["positions"].index(position)]
        assert (top_id, top_prob, rank) == (
            cell["top"][0]["id"],
            cell["top"][0]["prob"],
            cell["final_rank"],
        )
    # the last row is the model's output: every cell there is the final prediction
    last = page.locator(f"[data-testid=lens-cell][data-stage='{len(expected['stages']) - 1}']")
    assert set(last.evaluate_all("els => els.map(e => e.dataset.finalRank)")) == {"0"}
    # hover: the top-k and the final prediction's rank at that depth
    page.locator("[data-testid=lens-cell][data-stage='1'][data-position='2']").hover()
    tip = page.get_by_test_id("tooltip").inner_text()
    cell = expected["cells"][1][2]
    assert cell["top"][1]["token"].replace(" ", "·") in tip
    assert f"rank {cell['final_rank'] + 1:,}" in tip
    shot(page, "interpret-lens")
    # clicking a column selects that position
    page.locator("[data-testid=lens-cell][data-stage='0'][data-position='1']").click()
    wait_idle(page)
    assert page.get_by_test_id("position-label").inner_text().startswith("Position 1")


def test_clicking_a_head_shows_the_diff_and_the_kl(page):
    open_view(page, "ablation")
    effect = page.get_by_test_id("ablation-effect")
    assert effect.get_attribute("data-state") == "none"
    assert page.get_by_test_id("ablation-diff").count() == 0
    head = page.locator("[data-testid=ablate-head][data-spec='L0H1']")
    head.click()
    page.wait_for_selector("[data-testid=ablation-effect][data-state=ready]")
    assert head.get_attribute("aria-pressed") == "true" and "off" in head.get_attribute("class")
    ids = chip_ids(page)
    body = {"ids": ids, "ablate": ["L0H1"], "mode": "zero", "position": len(ids) - 1}
    expected = api(page, "/api/ablate", body)
    kl = page.get_by_test_id("ablation-kl")
    assert float(kl.get_attribute("data-kl")) == expected["kl"] > 0
    rows = page.get_by_test_id("ablation-row").evaluate_all(
        "els => els.map(e => [+e.dataset.id, +e.dataset.before, +e.dataset.after])"
    )
    by_id = {d["id"]: (d["before"], d["after"]) for d in expected["diff"]}
    assert rows and all(by_id[i] == (b, a) for i, b, a in rows)

    # a whole MLP layer, in mean mode: the KL follows the server again
    page.locator("[data-testid=ablate-mlp][data-layer='1']").click()
    page.locator("[data-testid=ablate-mode][data-mode='mean']").click()
    body = {**body, "ablate": ["L0H1", "mlp1"], "mode": "mean"}
    expected = api(page, "/api/ablate", body)
    page.wait_for_function(
        "kl => document.querySelector('[data-testid=ablation-kl]')?.dataset.kl == kl",
        arg=str(expected["kl"]),
    )
    assert page.get_by_test_id("ablate-count").inner_text().startswith("2")
    shot(page, "interpret-ablation")

    # reset switches everything back on
    page.get_by_test_id("ablate-reset").click()
    page.wait_for_selector("[data-testid=ablation-effect][data-state=none]")
    assert page.locator("[data-testid=ablation-grid] .off").count() == 0


def test_ablation_by_name_and_a_head_that_does_not_exist(page):
    open_view(page, "ablation")
    spec, error = page.get_by_test_id("ablate-spec"), page.get_by_test_id("ablate-spec-error")
    spec.fill("L0H9")
    page.get_by_test_id("ablate-add").click()
    error.wait_for(state="visible")
    assert "head 9 does not exist" in error.inner_text()
    assert page.get_by_test_id("ablation-effect").get_attribute("data-state") == "none"
    spec.fill("L1H*")  # the server expands it; the grid marks all four heads
    page.get_by_test_id("ablate-add").click()
    page.wait_for_selector("[data-testid=ablation-effect][data-state=ready]")
    assert error.is_hidden()
    off = page.locator("[data-testid=ablate-head].off").evaluate_all(
        "els => els.map(e => e.dataset.spec)"
    )
    assert off == ["L1H0", "L1H1", "L1H2", "L1H3"]


def test_compare_view_per_token_and_per_character(page):
    open_view(page, "compare")
    ids = chip_ids(page)
    models = httpx.get(page.server + "/api/compare/models").json()["models"]
    expected = api(page, "/api/compare", {"model": models[0], "ids": ids})
    unit = page.get_by_test_id("compare-unit")
    assert unit.get_attribute("data-unit") == "token"
    means = page.get_by_test_id("compare-means")
    assert float(means.get_attribute("data-mean-a")) == expected["mean_a"]
    assert float(means.get_attribute("data-mean-b")) == expected["mean_b"]
    spans = page.locator("[data-testid=compare-row][data-row=diff] .unit")
    assert spans.count() == len(expected["pieces"])
    assert float(spans.nth(2).get_attribute("data-value")) == expected["diff"][2]
    spans.nth(2).hover()
    assert "B − A" in page.get_by_test_id("tooltip").inner_text()
    shot(page, "interpret-compare")
    page.get_by_test_id("compare-model").select_option("char-gpt")
    page.wait_for_selector("[data-testid=compare-unit][data-unit=character]")
    wait_idle(page)
    assert "Per character" in unit.inner_text()
    assert page.locator("[data-testid=compare-row][data-row=loss_a] .unit").count() == len(
        "Data visualization empowers users to"
    )
    shot(page, "interpret-compare-characters")


def test_scrubbing_through_generated_tokens(page):
    page.get_by_test_id("greedy").check()
    page.get_by_test_id("generate-count").fill("3")
    n = len(chip_ids(page))
    before = int(page.evaluate("document.body.dataset.traces"))
    page.get_by_test_id("generate-n").click()
    wait_for_trace(page, before)
    ids = chip_ids(page)
    assert len(ids) == n + 3
    page.locator("[data-testid=step-nav] button[data-step='self-attention']").click()
    wait_idle(page)
    page.get_by_test_id("head-select").select_option("2")
    wait_idle(page)

    def tint_matches(position: int):
        page.wait_for_function(
            "p => document.querySelector('[data-testid=position-readout]').dataset.position == p"
            " && document.querySelectorAll('.tokens.attn-tint .chip[data-attn]').length == p + 1",
            arg=position,
        )
        wait_idle(page)
        expected = api(
            page, "/api/attention", {"ids": ids, "layer": 0, "head": 2, "position": position}
        )
        shown = page.locator(".tokens .chip[data-attn]").evaluate_all(
            "els => els.map(e => +e.dataset.attn)"
        )
        assert shown == expected["row"]["pattern"]
        assert page.get_by_test_id("position-label").inner_text().startswith(f"Position {position}")
        assert f"after position {position}" in page.locator("#sampling-sub").inner_text()

    tint_matches(n + 2)  # the last generated token, selected after generating
    page.get_by_test_id("token-chip").nth(n + 2).focus()
    page.keyboard.press("ArrowLeft")  # on a chip the arrows move the position, not the step
    tint_matches(n + 1)
    assert page.get_by_test_id("step-title").inner_text().endswith("Multi-head self-attention")
    assert page.evaluate("document.activeElement.dataset.position") == str(n + 1)
    readout = page.get_by_test_id("position-readout").inner_text()
    following = page.get_by_test_id("token-chip").nth(n + 2).locator(".piece").inner_text()
    assert f"next “{following}”" in readout and "top “" in readout  # what followed, and the top
    page.get_by_test_id("position-slider").fill(str(n))
    tint_matches(n)
    shot(page, "interpret-scrub")


def test_chinese_views(page):
    page.get_by_test_id("lang-toggle").click()  # each test has a fresh context: no undo needed
    for key, title in [("lens", "Logit 透镜"), ("ablation", "消融实验"), ("compare", "模型对比")]:
        open_view(page, key)
        assert page.get_by_test_id("step-title").inner_text().endswith(title)
        if key == "ablation":
            page.locator("[data-testid=ablate-head][data-spec='L1H0']").click()
            page.wait_for_selector("[data-testid=ablation-effect][data-state=ready]")
            assert "关闭前" in page.get_by_test_id("ablation-effect").inner_text()
        if key == "compare":
            assert "按 token 比较" in page.get_by_test_id("compare-unit").inner_text()
        shot(page, f"interpret-zh-{key}")
    assert "深入模型内部" in page.get_by_test_id("view-nav").inner_text()
