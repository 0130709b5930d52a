"""``lmscope sample --timeline MODEL`` prints the samples a model kept over training (issue 14:
the shipped War and Peace LSTM's timeline was shown by no command)."""

from __future__ import annotations

import json

from lmscope.cli import main
from lmscope.engine.loading import ASSET_MODELS


def test_the_shipped_lstm_prints_its_timeline(capsys):
    assert main(["sample", "--timeline", "warpeace-lstm"]) == 0
    out = capsys.readouterr().out
    saved = json.loads((ASSET_MODELS / "warpeace-lstm" / "timeline.json").read_text("utf-8"))
    for sample in saved["samples"]:
        assert f"## Iteration {sample['iteration']:,}" in out
        assert sample["text"].strip() in out
    assert f"seed {saved['seed']}" in out


def test_a_model_without_a_timeline_says_so(capsys):
    assert main(["sample", "--timeline", "shakespeare"]) != 0
    err = capsys.readouterr().err
    assert "keeps no sample timeline" in err and "Traceback" not in err
