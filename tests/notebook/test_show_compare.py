"""lmscope.show.compare on two tiny random GPT-2s: the widget is sent lmscope's comparison as
/api/compare sends it, the static snapshot is the comparison's own coloured rows, and the widget
draws with the page's compare.js."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("anywidget")

import lmscope  # noqa: E402
import lmscope.show  # noqa: E402
from lmscope.interpret.compare import compare  # noqa: E402
from lmscope.show import bundle  # noqa: E402

TEXT = "The cat sat on the mat."


@pytest.fixture(scope="module")
def models(tiny_model, tmp_path_factory):
    from helpers_hf import save_random_hf_gpt2

    return tiny_model, lmscope.load(save_random_hf_gpt2(tmp_path_factory.mktemp("b"), seed=1))


@pytest.fixture(scope="module")
def want(models):
    return compare(*models, TEXT)


@pytest.fixture(scope="module")
def widget(models):
    """The widget (the first widget made builds the front end once)."""
    return lmscope.show.compare(*models, TEXT)


def test_the_widget_is_sent_the_comparison(models, want, widget):
    r = widget.setup["result"]
    assert (r["unit"], r["pieces"]) == ("token", want.pieces)
    assert r["loss_a"][1:] == pytest.approx(want.loss_a[1:], abs=1e-6)
    assert r["diff"][1:] == pytest.approx(want.diff[1:], abs=1e-6)
    assert r["mean_b"] == pytest.approx(want.mean_b, abs=1e-6)
    # the snapshot: the comparison's own rows, each token's loss in its tooltip
    tips = [float(v) for v in re.findall(r": ([-0-9.]+) nats", widget.snapshot)]
    scored = [v for v in want.loss_a + want.loss_b + want.diff if v is not None]
    assert tips == pytest.approx(scored, abs=6e-4)
    assert lmscope.show.compare(want).setup["result"] == r  # a comparison made beforehand
    with pytest.raises(lmscope.InvalidInputError, match="show.compare"):
        lmscope.show.compare(models[0])


def test_the_compare_widget_draws_with_the_pages_module():
    modules = bundle.modules()
    assert modules["compare.js"] == (bundle.PAGE_JS / "compare.js").read_text(encoding="utf-8")
