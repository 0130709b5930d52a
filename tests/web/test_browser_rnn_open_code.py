"""/rnn on the code LSTM opens on a unit whose work shows. The finder ranks its units for
"inside a string" first, and no unit holds that feature (the best: held-out F1 0.45, a unit that
goes dark in strings), so the page opened on it. It now opens on the first feature one of whose
units shows it on the held-out text: the comment unit, red inside every # comment."""

from __future__ import annotations

import numpy as np
import pytest

from lmscope.interpret.features import compute_features

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def app(tiny_model):
    import lmscope
    from lmscope.web import create_app

    return create_app(tiny_model, rnn=[lmscope.load("stdlib-lstm")])


@pytest.fixture(scope="module")
def page_options() -> dict:
    return {"path": "/rnn", "allowed": ("400",)}


def test_the_code_lstm_opens_on_its_comment_unit(page, client):
    report = client.post("/api/rnn/cells", json={"model": "stdlib-lstm", "top": 3}).json()
    first, comments = report["features"][0], report["features"][1]
    assert first["name"] == "inside_string" and first["best"][0]["f1"] < 0.5
    unit = comments["best"][0]
    assert comments["name"] == "inside_comment_py" and unit["f1"] >= 0.5
    view = page.evaluate("window.lmscopeRnn.state.view")
    assert (view["layer"], view["unit"], view["kind"]) == (
        unit["layer"],
        unit["unit"],
        unit["kind"],
    )
    steps = [(i, s) for i, s in enumerate(view["slots"]) if s is not None]
    inside = compute_features(view["text"], ["inside_comment_py"])["inside_comment_py"] > 0.5
    commented = np.array([inside[i] for i, _ in steps])
    shade = np.tanh([view["values"][s] for _, s in steps])  # the page's colour of a cell value
    assert commented.any() and shade[commented].mean() > shade[~commented].mean() + 0.5
    assert "comment" in page.get_by_test_id("rnn-top-unit").inner_text()


def test_the_opening_unit_skips_a_feature_no_unit_shows(page):
    """The rule on its own: the first feature whose first unit scores at least 0.5 on the
    held-out text (F1, or |r| for a measure); when none does, the first feature, as before."""
    chosen = page.evaluate(
        """async () => {
            const m = await import('/static/js/rnn_timeline.js');
            const unit = (unit, f1, r, direction) => ({layer: 1, unit, kind: "c", f1, r,
                                                       r_select: r, direction});
            const weak = {name: "a", best: [unit(1, 0.45, -0.3, "<")]};
            const measure = {name: "b", best: [unit(2, null, -0.75, null)]};
            const strong = {name: "c", best: [unit(3, 0.7, 0.6, ">")]};
            const faint = {name: "d", best: [unit(4, 0.3, 0.2, ">")]};
            return [[weak, strong], [weak, measure, strong], [weak, faint], [{name: "e", best: []}]]
                .map((features) => m.topUnit({features})?.unit ?? null);
        }"""
    )
    assert chosen == [3, 2, 1, None]
