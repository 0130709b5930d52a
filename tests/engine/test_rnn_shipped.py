"""The shipped char-LSTM (assets/models/warpeace-lstm): loads by name, small, has learned."""

from __future__ import annotations

import json
from importlib import resources

import numpy as np
import pytest
import torch

import lmscope
from lmscope.cli import main
from lmscope.data import load_corpus
from lmscope.engine.rnn_model import RNNLanguageModel

NAME = "warpeace-lstm"
FOLDER = resources.files("lmscope") / "assets" / "models" / NAME


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny step-by-step ops


@pytest.fixture(scope="module")
def lstm():
    return lmscope.load(NAME)


@pytest.fixture(scope="module")
def val_text():
    return load_corpus("warpeace-novel").split(0.1)[1]


def test_loads_by_name_with_its_card_and_timeline(lstm):
    assert isinstance(lstm, RNNLanguageModel) and lstm.name == NAME
    info = lstm.info()
    assert (info.arch, info.n_layer, info.hidden, info.vocab_size) == ("lstm", 2, 384, 82)
    assert NAME in lmscope.engine.loading.shipped_models()
    size = sum(p.stat().st_size for p in FOLDER.iterdir())
    assert size < 10_000_000
    card = (FOLDER / "MODEL_CARD.md").read_text(encoding="utf-8")
    assert "warpeace-novel" in card and "--seed 1337" in card
    timeline = json.loads((FOLDER / "timeline.json").read_text(encoding="utf-8"))
    assert [s["iteration"] for s in timeline["samples"]][:2] == [100, 300]


@pytest.mark.slow
def test_it_predicts_war_and_peace_far_better_than_chance(lstm, val_text):
    ids = lstm.tokenizer.encode(val_text[:3000])
    logp = torch.log_softmax(lstm.logits(ids)[:-1], dim=-1)
    loss = -float(logp[torch.arange(len(ids) - 1), torch.tensor(ids[1:])].mean())
    assert loss < 1.8 < np.log(82)  # the card reports 1.51 over the whole val split


@pytest.mark.slow
def test_a_unit_tracks_being_inside_quotes(lstm, val_text):
    text = val_text[:3000]
    inside, flag = [], 0
    for ch in text:
        flag ^= ch == '"'
        inside.append(flag)
    run = lstm.activations(text)
    unit = run.layers[1].h[:, 234].numpy()  # the card's unit
    assert abs(np.corrcoef(unit, np.array(inside, float))[0, 1]) > 0.5


def test_sample_command_streams_from_the_shipped_model(capsys):
    argv = ["sample", NAME, "--prime", '"Well, Prince', "--length", "40", "--seed", "2"]
    assert main([*argv, "--temperature", "0.8"]) == 0
    out = capsys.readouterr().out
    assert out.startswith('"Well, Prince') and len(out) == len('"Well, Prince') + 41
