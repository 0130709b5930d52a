"""lmscope.show's circuits views (issue 37) on a tiny random GPT-2: the widget is sent the numbers
lmscope.circuits computes (the web API's bodies of the same results), a click on the induction
grid is answered with that head's pattern, the static snapshot carries the same numbers, and the
widget draws with the Circuits page's own module."""

from __future__ import annotations

import re

import pytest
import torch

pytest.importorskip("anywidget")

import lmscope  # noqa: E402
import lmscope.show  # noqa: E402
from lmscope.circuits import attribute, induction_scores, patch  # noqa: E402
from lmscope.show import bundle  # noqa: E402

CLEAN, CORRUPT = "The cat sat on the", "The dog sat on the"


def values(html: str, testid: str) -> list[float]:
    """The data-value of every cell of one of the snapshot's SVG figures, in order."""
    svg = re.search(rf'<svg [^>]*data-testid="{testid}".*?</svg>', html, re.S)
    assert svg, testid
    return [float(v) for v in re.findall(r'data-value="([-0-9.e]+)"', svg.group(0))]


@pytest.fixture(scope="module")
def induction(tiny_model):
    return induction_scores(tiny_model, length=6, seed=3)


@pytest.fixture(scope="module")
def widget(tiny_model):
    """The induction widget (the first widget made builds the front end once)."""
    return lmscope.show.induction(tiny_model, length=6, seed=3)


def test_induction_is_drawn_with_the_librarys_scores(tiny_model, induction, widget):
    r = widget.setup["result"]
    assert widget.setup["view"] == "induction"
    assert r["ids"] == induction.ids and r["length"] == 6 and r["seed"] == 3
    assert torch.tensor(r["scores"]) == pytest.approx(induction.scores, abs=1e-6)
    assert torch.tensor(r["previous_token"]) == pytest.approx(induction.previous_token, abs=1e-6)
    best = int(induction.scores.flatten().argmax())
    n_head = tiny_model.config.n_head
    assert (r["layer"], r["head"]) == (best // n_head, best % n_head)  # the top head's pattern
    pattern = induction.pattern(r["layer"], r["head"])
    assert r["pattern"][-1] == pytest.approx(pattern[-1].tolist(), abs=1e-6)

    # a click on L1H2: the kernel answers from the kept result, as /api/circuits/induction
    reply = widget.answers.answer(
        "/api/circuits/induction", {"length": 6, "seed": 3, "layer": 1, "head": 2}
    )
    assert reply["ok"] and (reply["data"]["layer"], reply["data"]["head"]) == (1, 2)
    want = induction.pattern(1, 2)
    for q, row in enumerate(reply["data"]["pattern"]):
        assert row == pytest.approx(want[q, : q + 1].tolist(), abs=1e-6)
    bad = widget.answers.answer("/api/circuits/induction", {"length": 6, "seed": 3, "layer": 9})
    assert not bad["ok"] and "9" in bad["error"]
    assert not widget.answers.answer("/api/flow", {})["ok"]

    html = widget.snapshot
    assert values(html, "induction-grid") == pytest.approx(induction.scores.flatten().tolist())
    assert values(html, "previous-grid") == pytest.approx(
        induction.previous_token.flatten().tolist()
    )
    assert values(html, "loss-curve") == pytest.approx(induction.loss.tolist())
    assert repr(widget) == f"lmscope.show.induction({tiny_model.name})"


def test_patching_is_drawn_with_the_librarys_fractions(tiny_model):
    result = patch(tiny_model, CLEAN, CORRUPT, " mat", " floor")
    widget = lmscope.show.patching(tiny_model, CLEAN, CORRUPT, " mat", " floor")
    r = widget.setup["result"]
    assert r["clean_diff"] == pytest.approx(result.clean_diff, abs=1e-6)
    assert r["corrupt_diff"] == pytest.approx(result.corrupt_diff, abs=1e-6)
    for name, site in result.sites.items():
        assert torch.tensor(r["sites"][name]["values"]) == pytest.approx(site.values, abs=1e-6)
    html = widget.snapshot
    for name, testid in (("resid_pre", "patch-resid"), ("attn_head", "patch-heads")):
        got = values(html, testid)
        assert got == pytest.approx(result.sites[name].values.flatten().tolist(), abs=1e-6)
    assert f"{result.clean_diff:.4f}" in html and f"{result.corrupt_diff:.4f}" in html
    with pytest.raises(lmscope.InvalidInputError):  # prompts of different token lengths
        lmscope.show.patching(tiny_model, CLEAN, "A dog", " mat", " floor")


def test_attribution_is_drawn_with_the_librarys_contributions(tiny_model):
    result = attribute(tiny_model, CLEAN, " mat", " floor")
    widget = lmscope.show.attribution(tiny_model, CLEAN, " mat", versus=" floor")
    r = widget.setup["result"]
    assert r["contributions"] == pytest.approx(result.contributions, abs=1e-6)
    assert r["logit"] == pytest.approx(result.logit, abs=1e-6)
    assert r["total"] == pytest.approx(r["logit"], abs=1e-4)  # they add up to the model's logit
    html = widget.snapshot
    bars = dict(re.findall(r'data-name="([^"]+)" data-value="([-0-9.e]+)"', html))
    assert len(bars) == min(16, len(result.contributions))
    for name, value in bars.items():
        assert float(value) == pytest.approx(result.contributions[name], abs=1e-6)
    assert values(html, "attribute-heads") == pytest.approx(result.heads.flatten().tolist())


def test_circuits_views_speak_the_notebooks_language(tiny_model):
    lmscope.set_language("zh")
    try:
        widget = lmscope.show.induction(tiny_model, length=4)
    finally:
        lmscope.set_language("en")
    assert widget.setup["lang"] == "zh"
    zh = widget.setup["catalogs"]["zh"]
    assert re.search(r"[\u4e00-\u9fff]", zh["page.circuits.induction.title"])
    assert zh["page.circuits.induction.title"] in widget.snapshot


def test_the_circuits_widget_draws_with_the_pages_module():
    modules = bundle.modules()
    for name in ("circuits_views.js", "circuits_draw.js", "prob_bars.js"):
        assert modules[name] == (bundle.PAGE_JS / name).read_text(encoding="utf-8")
    assert ".circuits-fig" in bundle.styles()  # the Circuits page's sheet, in the shadow root
