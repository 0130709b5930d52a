"""``report()``/``explain()`` in a notebook: a mistyped keyword is one lmscope line that names
the keyword meant, and a report prints as a summary, not 200,000 characters of numbers."""

from __future__ import annotations

import pytest
from explaintools import PROMPT

from lmscope.errors import InvalidInputError
from lmscope.explain.report import explain, report


@pytest.mark.parametrize("function", [report, explain])
def test_a_mistyped_keyword_names_the_one_meant(tiny_model, function):
    with pytest.raises(InvalidInputError, match=r"did you mean layer\?") as caught:
        function(tiny_model, PROMPT, layers=1)
    assert "\n" not in str(caught.value)
    assert f"for {function.__name__}()" in str(caught.value)


def test_a_report_prints_as_a_summary(tiny_model):
    r = report(tiny_model, PROMPT, layer=1, head=2, steps=[1, "mlp"])
    shown = repr(r)
    assert str(r) == shown and str(r.steps[0]) == repr(r.steps[0])  # print() as well
    assert len(shown) < 400 and "\n" not in shown
    assert "6 tokens" in shown and "layer 1" in shown and "head 2" in shown
    assert "steps 1 transformer, 13 mlp" in shown
    step = repr(r.steps[1])
    assert len(step) < 300 and "13" in step and "mlp" in step and "blocks.1." in step
