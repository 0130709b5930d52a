"""The Circuits page (/circuits) on the real SmolLM2 in headless Chromium: each experiment runs
and every drawn value (grid cells, loss points, pattern cells, bars) is the API's own number;
clicking a head shows its pattern; bad input is one line in the reader's language; the page in
English and Chinese at 1440 and 390 px, nothing wider than the viewport.

One page load walks it all (the server keeps each result, so the checks against the API and
the redraws in another language cost no model work)."""

from __future__ import annotations

import pytest
from test_page_pseudo import COLLECT, outside_brackets
from webtools import api, decimals, one_style, to_chinese

pytestmark = pytest.mark.browser

LENGTH = 20  # random tokens per copy: enough for SmolLM2's induction heads to show


@pytest.fixture(scope="module")
def app(smollm2):
    from lmscope.web import create_app

    return create_app(smollm2)


@pytest.fixture(scope="module")
def page_options() -> dict:
    return {"path": "/circuits", "allowed": ("400",)}


def cells(page, testid: str) -> list[tuple[int, int, float]]:
    return page.locator(f"[data-testid={testid}] rect.cell").evaluate_all(
        "els => els.map(e => [+e.dataset.row, +e.dataset.col, +e.dataset.value])"
    )


def assert_grid(page, testid: str, matrix: list[list[float]]) -> None:
    drawn = cells(page, testid)
    assert len(drawn) == sum(len(row) for row in matrix), testid
    for r, c, v in drawn:
        assert v == matrix[r][c], (testid, r, c)


def run(page, kind: str) -> None:
    page.get_by_test_id(f"{kind}-run").click()
    page.wait_for_selector(f"[data-testid={kind}-section][data-state=ready]")


def error_of(page, kind: str) -> str:
    page.wait_for_selector(f"[data-testid={kind}-section][data-state=error]")
    return page.get_by_test_id(f"{kind}-error").inner_text()


def fits(page, width: int) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def test_the_circuits_page_draws_the_apis_numbers_in_both_languages(page):
    # --- induction: the grids, the loss curve, the top head's pattern, another head's ---------
    page.get_by_test_id("induction-length").fill(str(LENGTH))
    run(page, "induction")
    body = {"length": LENGTH, "seed": 0}
    want = api(page, "/api/circuits/induction", body)
    assert_grid(page, "induction-grid", want["scores"])
    assert_grid(page, "previous-grid", want["previous_token"])
    points = page.get_by_test_id("loss-point").evaluate_all(
        "els => els.map(e => [+e.dataset.position, +e.dataset.value])"
    )
    assert [v for _, v in points] == want["loss"]
    assert want["loss_second_copy"] < want["loss_first_copy"] / 2  # induction on SmolLM2
    pattern = page.get_by_test_id("pattern")
    top = want["top_induction"][0]["head"]
    assert f"L{pattern.get_attribute('data-layer')}H{pattern.get_attribute('data-head')}" == top
    assert_grid(page, "pattern", want["pattern"])
    assert page.get_by_test_id("induction-stripe").count() == 1
    # a click on another head: its pattern, from the kept result
    page.locator("[data-testid=induction-grid] rect.cell[data-row='16'][data-col='0']").click()
    page.wait_for_selector("[data-testid=pattern][data-layer='16'][data-head='0']")
    other = api(page, "/api/circuits/induction", {**body, "layer": 16, "head": 0})
    assert_grid(page, "pattern", other["pattern"])
    # hover: the value in the readout
    page.locator("[data-testid=induction-grid] rect.cell[data-row='16'][data-col='0']").hover()
    readout = page.get_by_test_id("induction-grid-readout")
    assert float(readout.get_attribute("data-value")) == want["scores"][16][0]
    assert "L16H0" in readout.inner_text()

    # --- patching: the first ready-made pair, its three grids ---------------------------------
    first = page.get_by_test_id("patch-example").locator("option").nth(1).inner_text()
    assert first.startswith("A capital city")
    clean = page.get_by_test_id("patch-clean").input_value()
    corrupt = page.get_by_test_id("patch-corrupt").input_value()
    right = page.get_by_test_id("patch-right").input_value()
    wrong = page.get_by_test_id("patch-wrong").input_value()
    run(page, "patch")
    want = api(
        page,
        "/api/circuits/patch",
        {"clean": clean, "corrupt": corrupt, "right": right, "wrong": wrong},
    )
    assert want["clean_diff"] > 0 > want["corrupt_diff"]  # the example shows something
    clean_line = page.get_by_test_id("patch-clean-diff")
    assert float(clean_line.get_attribute("data-value")) == want["clean_diff"]
    for testid, site in (
        ("patch-resid", "resid_pre"),
        ("patch-heads", "attn_head"),
        ("patch-mlp", "mlp_out"),
    ):
        assert_grid(page, testid, want["sites"][site]["values"])

    # --- attribution: the bars and the heads' grid ---------------------------------------------
    text = page.get_by_test_id("attribute-text").input_value()
    run(page, "attribute")
    want = api(page, "/api/circuits/attribute", {"text": text, "token": right, "versus": wrong})
    bars = page.get_by_test_id("bar").evaluate_all(
        "els => els.map(e => [e.dataset.name, +e.dataset.value])"
    )
    largest = sorted(want["contributions"].items(), key=lambda kv: -abs(kv[1]))[: len(bars)]
    assert len(bars) == 16 and bars == [list(kv) for kv in largest]
    # their values read as one column: the same decimals in every row (2.10 under 2.14, not 2.1)
    labels = page.get_by_test_id("bar-value").evaluate_all("els => els.map(e => e.textContent)")
    assert one_style(labels) and len({decimals(v) for v in labels}) == 1, labels
    for label, (_, value) in zip(labels, bars, strict=True):
        assert float(label.replace("−", "-")) == pytest.approx(value, abs=10 ** -decimals(label))
    assert_grid(page, "attribute-heads", want["heads"])
    assert_grid(page, "attribute-mlps", [[v] for v in want["mlps"]])
    assert want["total"] == pytest.approx(want["logit"], abs=1e-3)
    assert (
        float(page.get_by_test_id("attribute-logit").get_attribute("data-value")) == want["logit"]
    )
    assert "linear approximation" in page.get_by_test_id("attribute-frozen").inner_text()
    fits(page, 1440)

    # --- bad input: one line each, in English, then in Chinese ----------------------------------
    page.get_by_test_id("patch-corrupt").fill(corrupt + " today")
    page.get_by_test_id("patch-run").click()
    assert "same token length" in error_of(page, "patch")
    page.get_by_test_id("attribute-token").fill(" Parisian")
    page.get_by_test_id("attribute-run").click()
    line = error_of(page, "attribute")
    assert line.startswith("Error: Token ' Parisian' is 2 tokens"), line

    to_chinese(page)
    assert "激活修补" in page.get_by_test_id("patch-section").inner_text()
    assert "token 数相同" in page.get_by_test_id("patch-error").inner_text()
    assert page.get_by_test_id("attribute-error").inner_text().startswith("错误：“目标 token”")
    # the drawn results stay, said in Chinese, with the same numbers
    assert "归纳分数" in page.get_by_test_id("induction-result").inner_text()
    assert_grid(page, "attribute-heads", want["heads"])
    assert "线性近似" in page.get_by_test_id("attribute-frozen").inner_text()
    fits(page, 1440)

    # --- a phone, in Chinese and in English ----------------------------------------------------
    page.set_viewport_size({"width": 390, "height": 900})
    fits(page, 390)
    for testid in ("induction-grid", "patch-resid", "attribute-bars", "pattern"):
        box = page.get_by_test_id(testid).locator(".circuits-svg-box svg").bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390, testid
    page.get_by_test_id("lang-toggle").click()
    page.wait_for_function("() => document.documentElement.lang.startsWith('en')")
    assert "Activation patching" in page.get_by_test_id("patch-section").inner_text()
    fits(page, 390)

    # --- the pseudo-language: every word on the page is the catalog's (the results are kept) --
    page.goto(page.server + "/circuits?lang=pseudo")
    page.wait_for_selector("body[data-ready='1']")
    page.get_by_test_id("induction-length").fill(str(LENGTH))
    for kind in ("induction", "patch", "attribute"):
        run(page, kind)
    page.get_by_test_id("patch-right").fill(" Parisian")
    page.get_by_test_id("patch-run").click()
    error_of(page, "patch")
    assert outside_brackets(page.evaluate(COLLECT)) == []
    fits(page, 390)
