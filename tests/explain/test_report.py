"""``report()``: the chosen steps of one prompt, typed; ``explain()`` is the same as JSON."""

from __future__ import annotations

import json

import pytest
from explaintools import PROMPT

from lmscope.engine.sampling import SamplingParams
from lmscope.errors import InvalidInputError
from lmscope.explain.report import explain, report


def test_a_report_names_its_steps_and_their_probes(tiny_model):
    r = report(tiny_model, PROMPT, layer=1, head=3, steps=[11, "mlp"])
    assert [(s.number, s.key) for s in r.steps] == [(11, "masked-attention"), (13, "mlp")]
    assert r.steps[0].title == "Masked self-attention"
    assert r.steps[0].probes[0] == "blocks.1.attn.hook_attn_scores_raw"
    assert (r.layer, r.head, r.position, r.n_tokens) == (1, 3, 5, 6)
    assert r.text == PROMPT


def test_explain_is_the_report_as_strict_json(tiny_model):
    params = SamplingParams(greedy=True)
    body = explain(tiny_model, PROMPT, position=-2, params=params)
    json.dumps(body, allow_nan=False)
    assert body["position"] == 4 and len(body["steps"]) == 20
    assert body == report(tiny_model, PROMPT, position=4, params=params).model_dump(mode="json")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"layer": 2}, "layer 2 does not exist"),
        ({"head": 9}, "head 9 does not exist"),
        ({"position": 6}, "position 6 does not exist"),
    ],
)
def test_what_does_not_exist_is_one_line(tiny_model, options, message):
    with pytest.raises(InvalidInputError, match=message):
        report(tiny_model, PROMPT, **options)
