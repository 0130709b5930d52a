"""The shipped default model: loads offline with no argument and is a real, trained model."""

from __future__ import annotations

import pytest
import torch

import lmscope
from lmscope.data import load_corpus
from lmscope.engine.loading import shipped_models


@pytest.mark.slow
def test_default_model_loads_offline():
    model = lmscope.load("shakespeare")
    assert model.name == "shakespeare" and "shakespeare" in shipped_models()
    info = model.info()
    want = dict(n_layer=4, n_head=6, d_model=192, n_ctx=256, vocab_size=2048)
    assert {key: getattr(info, key) for key in want} == want
    assert info.tokenizer == "bpe-2048"
    assert lmscope.load("shakespeare").info() == info


@pytest.mark.slow
def test_default_model_is_trained():
    """Far below the uniform-guess loss (ln 2048 = 7.6) on held-out Shakespeare."""
    model = lmscope.load("shakespeare")
    text = load_corpus("shakespeare").text
    val = text[int(len(text) * 0.9) :][:4000]
    ids = torch.tensor(model.tokenizer.encode(val)[:257])
    with torch.no_grad():
        _, loss = model.gpt(ids[None, :-1], ids[None, 1:])
    assert loss.item() < 4.6


@pytest.mark.slow
def test_default_model_splits_modern_words():
    model = lmscope.load("shakespeare")
    pieces = [p.text for p in model.pieces(model.encode("Data visualization empowers users to"))]
    assert "".join(pieces) == "Data visualization empowers users to"
    assert len(pieces) > 6  # subword splits are visible


def test_default_model_card_is_there():
    card = lmscope.engine.loading.ASSET_MODELS / "shakespeare" / "MODEL_CARD.md"
    assert "scripts/train_default_model.sh" in card.read_text()
