"""The circuits, neuron and compare widgets drawn in headless Chromium (tests/notebook/harness.py:
the widget's own module, its messages answered by its Python side as the kernel's comm would),
on tiny random models: the marks carry the numbers lmscope computed, and a click on the
induction grid or a change of unit asks the kernel and redraws with its answer. JupyterLab itself
is tested once, by test_jupyterlab.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from tiers import slow_work

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))  # the browser helpers
from webtools import CHROMIUM_ARGS, HANG_MS, find_chromium  # noqa: E402

pytest.importorskip("anywidget")
sync_api = pytest.importorskip("playwright.sync_api")

from harness import mount  # noqa: E402

import lmscope.show  # noqa: E402
from lmscope.circuits import induction_scores, patch  # noqa: E402
from lmscope.engine.rnn_model import RNNLanguageModel  # noqa: E402
from lmscope.interpret.neurons import neuron_activations  # noqa: E402
from lmscope.models.rnn import CharRNN, CharRNNConfig  # noqa: E402
from lmscope.tokenizers import CharTokenizer  # noqa: E402


@pytest.fixture(scope="module")
@slow_work
def browser():
    chromium = find_chromium()
    if chromium is None:
        pytest.skip("no Chromium found (apt-get install chromium, or set LMSCOPE_CHROMIUM)")
    sync_api.expect.set_options(timeout=HANG_MS)
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield b
        b.close()


def opened(browser, widget, tmp_path, width=1200):
    page = browser.new_page(viewport={"width": width, "height": 900})
    problems: list[str] = []
    page.on("pageerror", lambda err: problems.append(str(err)))
    mount(page, widget, tmp_path)
    return page, problems


def values(page, selector: str) -> list[float]:
    return page.locator(selector).evaluate_all("(n) => n.map((e) => Number(e.dataset.value))")


@pytest.mark.browser
def test_circuits_and_compare_widgets_draw_the_librarys_numbers(browser, tiny_model, tmp_path):
    expect = sync_api.expect
    found = induction_scores(tiny_model, length=6, seed=2)
    page, problems = opened(browser, lmscope.show.induction(tiny_model, length=6, seed=2), tmp_path)
    cells = "[data-testid=induction-grid] rect.cell"
    assert values(page, cells) == pytest.approx(found.scores.flatten().tolist(), abs=1e-6)
    page.locator(f"{cells}[data-row='1'][data-col='3']").click()  # L1H3: the kernel's pattern
    pattern = page.locator("[data-testid=pattern]")
    expect(pattern).to_have_attribute("data-head", "3")
    last = len(found.ids) - 1
    drawn = values(page, f"[data-testid=pattern] rect.cell[data-row='{last}']")
    assert drawn == pytest.approx(found.pattern(1, 3)[last].tolist(), abs=1e-6)
    assert not problems, problems

    clean, corrupt = "The cat sat on the", "The dog sat on the"
    result = patch(tiny_model, clean, corrupt, " mat", " floor")
    widget = lmscope.show.patching(tiny_model, clean, corrupt, " mat", " floor")
    page, problems = opened(browser, widget, tmp_path)
    heads = values(page, "[data-testid=patch-heads] rect.cell")
    assert heads == pytest.approx(result.sites["attn_head"].values.flatten().tolist(), abs=1e-6)
    diff = page.get_by_test_id("patch-clean-diff").get_attribute("data-value")
    assert float(diff) == pytest.approx(result.clean_diff, abs=1e-6)
    assert not problems, problems

    # two models on one text (the same model twice: B − A is 0 everywhere)
    page, problems = opened(browser, lmscope.show.compare(tiny_model, tiny_model, clean), tmp_path)
    rows = page.get_by_test_id("compare-row")
    sync_api.expect(rows).to_have_count(3)
    a = values(page, "[data-row=loss_a] .unit")
    assert a == values(page, "[data-row=loss_b] .unit") and len(a) == len(tiny_model.encode(clean))
    assert values(page, "[data-row=diff] .unit") == [0.0] * len(a)
    assert not problems, problems


@pytest.mark.browser
def test_the_neuron_widget_asks_the_kernel_for_another_unit(browser, tmp_path):
    expect = sync_api.expect
    chars = '\n !"(),.?abcdefghijklmnopqrstuvwxyz'
    torch.manual_seed(0)
    net = CharRNN(CharRNNConfig(vocab_size=len(chars), cell="lstm", hidden=8, layers=2))
    model = RNNLanguageModel(net, CharTokenizer(chars), name="tiny-lstm")
    run = neuron_activations(model, 'he said, "yes (it is)."\n')
    page, problems = opened(browser, lmscope.show.neurons(run, layer=1, unit=3), tmp_path)
    text = page.get_by_test_id("rnn-colored").locator(".ch")
    expect(text).to_have_count(len(run))
    page.get_by_test_id("rnn-kind").select_option("f")
    expect(page.get_by_test_id("rnn-title")).to_contain_text("unit 3")
    expect(page.get_by_test_id("rnn-title")).to_contain_text("forget")
    text.nth(4).hover()
    value = float(page.get_by_test_id("readout-value").inner_text())
    assert value == pytest.approx(float(run.unit(1, 3, "f")[4]), abs=1e-3)
    assert not problems, problems


# Every element of the widget (inside its shadow root) whose box runs past the widget's right
# edge by more than a pixel, and every box that scrolls sideways to hide what it holds.
WIDER = """() => {
  const root = document.querySelector('#cell').shadowRoot.querySelector('.lmscope-widget');
  const limit = root.getBoundingClientRect().right;
  const out = [];
  for (const e of root.querySelectorAll('*')) {
    const b = e.getBoundingClientRect();
    if (!b.width || !b.height) continue;
    const id = e.dataset?.testid || e.getAttribute('class') || '';
    if (b.right > limit + 1) out.push(`${e.tagName}.${id} +${Math.round(b.right - limit)}px`);
    if (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== 'visible')
      out.push(`${e.tagName}.${id} scrolls ${e.scrollWidth} > ${e.clientWidth}`);
  }
  return out.slice(0, 6);
}"""

# The token labels of the connections whose text runs out of their box.
SPILLED = """() => [...document.querySelector('#cell').shadowRoot.querySelectorAll('.line-token')]
  .filter((g) => {
    const box = g.querySelector('rect').getBoundingClientRect();
    const text = g.querySelector('text').getBoundingClientRect();
    return text.left < box.left - 1 || text.right > box.right + 1;
  }).map((g) => g.textContent)"""


@pytest.mark.browser
def test_the_attention_widget_fits_a_phone(browser, tiny_model, tmp_path):
    """Issue 36: at 390 px the attention view's connections (keys left, queries right) fit the
    cell, the query column in sight and each token's label inside its box, alone and in the
    step that shows them; at 1440 px they keep the page's full width."""
    trace = tiny_model.trace("Data visualization empowers users to understand")
    lines = "[data-testid=attention-lines][data-ready='1'] svg.lines-svg"
    widget = lmscope.show.attention(trace, layer=1, head=1)
    for shown in (lmscope.show.step(trace, "self-attention", layer=1), widget):
        page, problems = opened(browser, shown, tmp_path, width=390)
        wide = page.locator(lines).bounding_box()
        assert page.evaluate(WIDER) == []
        assert page.evaluate(SPILLED) == []
        query = page.locator("[data-testid=line-token][data-side=query] rect").last.bounding_box()
        assert query["x"] + query["width"] <= wide["x"] + wide["width"] <= 390 - 12
        assert not problems, problems
    page.set_viewport_size({"width": 1440, "height": 900})
    page.locator("[data-testid=line-token][data-side=query]").first.click()  # drawn again
    sync_api.expect(page.locator("[data-testid=position-label]")).to_contain_text("Position 0")
    assert page.locator(lines).bounding_box()["width"] == pytest.approx(620, abs=1)
    assert page.evaluate(SPILLED) == []
