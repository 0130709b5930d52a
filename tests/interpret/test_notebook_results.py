"""The analyses as a notebook user meets them: a mistyped keyword is one lmscope line naming the
keyword meant; printing a result shows a short summary, not every array; a comparison shows
itself as coloured text in a notebook without restyling the notebook's own page."""

from __future__ import annotations

import pytest

import lmscope
from lmscope.errors import InvalidInputError
from lmscope.interpret import ablation_effect
from lmscope.interpret.compare import compare

TEXT = "The cat sat on the mat because"
PROSE = 'He said, "Come here (now) and look." She did not. ' * 30


def refused(call, *args, **kwargs) -> str:
    with pytest.raises(InvalidInputError) as err:
        call(*args, **kwargs)
    assert isinstance(err.value, TypeError)
    message = str(err.value)
    assert message and "\n" not in message
    return message


@pytest.fixture(scope="module")
def lstm():
    return lmscope.load("warpeace-lstm")


@pytest.fixture(scope="module")
def run(lstm):
    return lmscope.neuron_activations(lstm, PROSE)


def test_ablation_with_pos_for_position(tiny_model):
    message = refused(ablation_effect, tiny_model, TEXT, ["L0H1"], pos=2)
    assert "did you mean position?" in message and "ablation_effect()" in message


def test_ablation_with_top_k_for_k(tiny_model):
    assert "did you mean k?" in refused(ablation_effect, tiny_model, TEXT, ["L0H1"], top_k=3)


def test_neuron_activations_with_a_typo(lstm):
    assert "did you mean kinds?" in refused(lmscope.neuron_activations, lstm, "hi", kind=("h",))


@pytest.mark.slow
def test_find_cells_with_feature_for_features(run):
    assert "did you mean features?" in refused(lmscope.find_cells, run, feature="prose")


def test_compare_with_a_keyword_it_does_not_take(lstm):
    assert "unknown option 'lang' for compare()" in refused(compare, lstm, lstm, "hello", lang="zh")


# --- reprs -----------------------------------------------------------------------------------


def test_neuron_run_repr_is_a_summary(run):
    text = repr(run)
    assert len(text) < 300 and "array(" not in text
    assert f"{len(run):,} characters" in text


def test_cell_report_repr_is_a_summary(run):
    report = lmscope.find_cells(run)
    text = repr(report)
    assert len(text) < 600 and "UnitScore" not in text
    # the headline of each scored feature, the unit and its held-out r, as report.headline says
    first = next(f for f in report.features if f.strongest_r is not None)
    assert first.strongest_r.label in text and f"{first.strongest_r.r:+.3f}" in text


def test_unit_scores_are_plain_floats(run):
    report = lmscope.find_cells(run)
    for feature in report.features:
        for score in feature.best:
            for name in ("r", "precision", "recall", "f1", "threshold"):
                value = getattr(score, name)
                assert value is None or type(value) is float, (name, type(value))


def test_ablation_effect_repr_is_a_summary(tiny_model):
    effect = ablation_effect(tiny_model, TEXT, ["L0H1"])
    text = repr(effect)
    assert len(text) < 400
    assert "L0H1" in text and "KL" in text


def test_comparison_shows_as_html_in_a_notebook(lstm):
    c = compare(lstm, lstm, "hello there")
    html = c._repr_html_()
    assert "<span" in html and "hello"[0] in html
    # a notebook's output cell: no page of its own, no style for the notebook's body
    assert "<!doctype" not in html.lower() and "body{" not in html and "<title>" not in html


def test_a_cell_view_repr_is_a_summary(run):
    """``view = run.view(1, 234, "h")``, as the docs write it, printed 185,000 characters in a
    terminal: the whole text and every value (a notebook draws it as coloured text)."""
    view = run.view(1, 234, "h")
    text = repr(view)
    assert len(text) < 300 and "\n" not in text and "array(" not in text
    assert f"{len(PROSE):,} characters" in text and view.title in text
    assert f"{view.values.min():+.3f}" in text and f"{view.values.max():+.3f}" in text


def test_a_comparison_repr_is_a_summary(lstm):
    # it listed every piece and both models' losses: a line per character of a long text
    c = compare(lstm, lstm, PROSE)
    text = repr(c)
    assert len(text) < 300 and "\n" not in text
    assert f"{len(c.pieces):,} {c.unit}s" in text and f"{c.mean_a:.3f}" in text
