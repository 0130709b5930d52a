"""Schemathesis against ``lmscope serve`` on loopback (issue 16, item 6): every check, positive
and negative data, the examples, coverage, fuzzing and stateful phases (links between the
operations inferred by schemathesis), bounded to twenty seconds. It must find nothing: no 500, no
response that breaks the schema, no status the schema does not declare, no schema-breaking
body accepted, no 405 without Allow, no answer slower than schemathesis's 10 s limit.

The served model is the tests' small random GPT-2 (2 layers, 4 heads, GPT-2's vocabulary, 128
positions), also the one model offered for comparison; a small char-LSTM serves /rnn.

Model-dependent limits, answered 400 with one readable line (so ``positive_data_acceptance``
expects 200, 400 or 404, not only 2xx), because the schema cannot say them: it would have to
know the model, or relate two fields (``lmscope.testing.schemathesis_api`` keeps the list):

- token ids beyond the served model's vocabulary;
- a prompt, or a prompt plus the tokens to generate, longer than the model's context;
- a position beyond the prompt's length;
- a layer or head the model does not have, and ablation specs naming them;
- chat on a model without a chat template;
- text the model cannot tokenize into anything (a char model's unknown characters), and a
  cell-finder text shorter than the finder needs for a held-out half;
- a compare or char-RNN model name the server was not started with, or an RNN value kind the
  named model's cell does not have;
- and 404: a lab experiment, result or plot that does not exist.
"""

from __future__ import annotations

import json

import pytest

from lmscope.testing import schemathesis_api as api

BUDGET_S = 20  # `python -m benchmarks.schemathesis_api --budget N` runs it longer


@pytest.mark.slow
def test_schemathesis_finds_nothing(tiny_hf_dir, tmp_path):
    pytest.importorskip("schemathesis", reason="pip install schemathesis (a test extra)")
    with api.served(tiny_hf_dir, api.char_lstm(tmp_path / "tiny-lstm")) as url:
        code, report, output = api.schemathesis_run(url, tmp_path, BUDGET_S)
    totals = api.totals(report)
    print(json.dumps(totals))
    assert code == 0, output[-6000:]
    assert totals["failures"] == 0 and totals["operations"] >= 25, totals
    # the budget was spent testing, not starting (~2,500 cases on a quiet 2-core machine; a
    # busy one makes fewer, so the floor is far below that)
    assert totals["cases"] >= 200, totals
    assert set(totals["phases"].values()) == {"success"}, totals
