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


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        (["posit"], "unknown step 'posit'"),  # a typo used to give a report of no steps
        ([99], "unknown step 99"),
        ([], "steps is empty"),
        (3.5, "steps must be a list"),
    ],
)
def test_steps_that_name_no_step_are_refused(tiny_model, steps, expected):
    with pytest.raises(InvalidInputError, match=expected):
        report(tiny_model, PROMPT, steps=steps)


def test_one_step_and_one_ablation_may_be_given_bare(tiny_model):
    r = report(tiny_model, PROMPT, steps="qkv", ablate="L0H1")
    assert [s.key for s in r.steps] == ["qkv"]
    assert r.ablated == ["L0H1"]  # not ['L', '0', 'H', '1']


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (dict(position="0"), "position must be a whole number"),
        (dict(params={"temperature": 2}), "params must be SamplingParams"),
        (dict(ablate=5), "ablations are a list"),
    ],
)
def test_odd_report_options_are_one_line(tiny_model, options, expected):
    with pytest.raises(InvalidInputError, match=expected):
        report(tiny_model, PROMPT, **options)


def test_a_report_of_what_is_no_transformer_is_one_line():
    import lmscope

    with pytest.raises(InvalidInputError, match="char-LSTM"):
        report(lmscope.load("warpeace-lstm"), "Hello")
    with pytest.raises(InvalidInputError, match="got str"):
        report("shakespeare", "Hello")
