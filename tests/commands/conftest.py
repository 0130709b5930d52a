"""Fixtures of the command tests: a char-LSTM with a planted quote cell (layer 0, unit 5)."""

from __future__ import annotations

import pytest
import torch

from lmscope.engine.loading import save_model
from lmscope.interpret.planted import plant_quote_cell
from lmscope.models.rnn import CharRNN, CharRNNConfig
from lmscope.tokenizers import CharTokenizer

CHARS = '\n "abcdefghijklmnopqrstuvwxyz'


@pytest.fixture(scope="module")
def quote_lstm(tmp_path_factory):
    """A saved one-layer char-LSTM whose cell 0:5 is on inside double quotes."""
    torch.manual_seed(0)
    net = CharRNN(CharRNNConfig(vocab_size=len(CHARS), cell="lstm", hidden=12, layers=1))
    plant_quote_cell(net, CHARS.index('"'), unit=5)
    folder = tmp_path_factory.mktemp("models") / "quote-lstm"
    return save_model(net, folder, tokenizer=CharTokenizer(CHARS), meta={"name": "quote-lstm"})
