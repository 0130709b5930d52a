"""The shipped code LSTM (assets/models/stdlib-lstm): loads by name, small, has learned Python,
its card names the corpus it came from, and the cell finder reproduces the card's held-out
figures on the card's slice of the validation split."""

from __future__ import annotations

import json
from importlib import resources

import numpy as np
import pytest
import torch

import lmscope
from lmscope.cli import main
from lmscope.engine.loading import shipped_char_models
from lmscope.engine.rnn_model import RNNLanguageModel
from lmscope.interpret.cell_finder import find_cells
from lmscope.interpret.features import FEATURE_SETS, validation_text
from lmscope.interpret.neurons import neuron_activations

NAME = "stdlib-lstm"
FOLDER = resources.files("lmscope") / "assets" / "models" / NAME
FINDER_CHARS = 40_000  # the card's slice: the validation split from its first whole file
# the card's held-out figures: feature -> (unit with the largest |r| on the selection half,
# its r on the held-out half), and for binary features the best rule's held-out F1
CARD_R = {
    "inside_string": ("1:19 h", +0.2719),
    "inside_comment_py": ("1:252 c", +0.6297),
    "bracket_depth_py": ("1:238 h", -0.7048),
    "indent_level": ("0:99 c", -0.6253),
    "line_position": ("0:55 c", +0.8111),
}
CARD_F1 = {"inside_string": ("1:19 c", 0.406), "inside_comment_py": ("1:252 c", 0.727)}
TOLERANCE = 0.01


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny step-by-step ops


@pytest.fixture(scope="module")
def lstm():
    return lmscope.load(NAME)


@pytest.fixture(scope="module")
def card() -> str:
    return (FOLDER / "MODEL_CARD.md").read_text(encoding="utf-8")


def test_loads_by_name_with_its_card_and_timeline(lstm, card):
    assert isinstance(lstm, RNNLanguageModel) and lstm.name == NAME
    info = lstm.info()
    assert (info.arch, info.n_layer, info.hidden) == ("lstm", 2, 256)
    assert lstm.meta["training"]["corpus"] == "python-stdlib"
    size = sum(p.stat().st_size for p in FOLDER.iterdir())
    assert size < 10_000_000
    assert "python-stdlib" in card and "--seed 1337" in card and "Python 3.11.7" in card
    assert "100eccbee853ae759dd675f52b85087bfa92f1d0119d73107907a03800c3949b" in card
    timeline = json.loads((FOLDER / "timeline.json").read_text(encoding="utf-8"))
    assert [s["iteration"] for s in timeline["samples"]][:3] == [100, 300, 500]
    assert (FOLDER / "timeline.md").is_file()
    # prose stays the default char model; the code model is offered beside it
    assert shipped_char_models()[:2] == ["warpeace-lstm", NAME]


@pytest.mark.slow
def test_it_predicts_python_far_better_than_chance(lstm):
    text = validation_text("python-stdlib", 3000)
    ids = lstm.tokenizer.encode(text)
    logp = torch.log_softmax(lstm.logits(ids)[:-1], dim=-1)
    loss = -float(logp[torch.arange(len(ids) - 1), torch.tensor(ids[1:])].mean())
    assert loss < 2.0 < np.log(lstm.config.vocab_size)


@pytest.mark.slow
def test_the_finder_reproduces_the_cards_held_out_figures(lstm, card):
    text = validation_text("python-stdlib", FINDER_CHARS)
    run = neuron_activations(lstm, text, kinds=("c", "h"))
    report = find_cells(run, top=3)  # the code set: the model was trained on python-stdlib
    assert [f.name for f in report.features] == list(FEATURE_SETS["code"])
    for name, (label, r) in CARD_R.items():
        s = report.feature(name).strongest_r
        assert s.label == label and abs(s.r - r) < TOLERANCE, (name, s)
        assert f"{r:+.3f}" in card, name
    for name, (label, f1) in CARD_F1.items():
        best = report.feature(name).best[0]  # the best threshold rule on the selection half
        assert best.label == label and abs(best.f1 - f1) < TOLERANCE, (name, best)
        assert f"{f1:.3f}" in card, name
    reached = [n for n in CARD_R if abs(report.feature(n).strongest_r.r) >= 0.5]
    assert reached == ["inside_comment_py", "bracket_depth_py", "indent_level", "line_position"]
    assert report.feature("inside_url").note_data["code"] == "rare"  # 2 URLs, both chosen on


@pytest.mark.slow
def test_the_cli_finds_code_cells(capsys, tmp_path):
    out = tmp_path / "cells.json"
    args = ["neurons", "--model", NAME, "--corpus", "python-stdlib", "--find"]
    assert main([*args, "--max-chars", "3000", "--top", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "stdlib-lstm" in printed and "code features" in printed
    assert "inside_comment_py: chosen on the first part: unit" in printed
    report = json.loads(out.read_text())
    assert [f["name"] for f in report["features"]] == list(FEATURE_SETS["code"])
