"""Fixtures of the command tests: a char-LSTM with a planted quote cell (layer 0, unit 5), and
a folder that refuses writes as a read-only disk does."""

from __future__ import annotations

import errno
import tempfile
from pathlib import Path

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


SMALL_CHARS = "\n !',.:;?ABCDEHILMNORSTUWabcdefghiklmnoprstuvwy"


@pytest.fixture(scope="module")
def small_char_gpt(tmp_path_factory):
    """A saved two-layer GPT over a Shakespeare-like character vocabulary with a context of
    32, as `lmscope train --tokenizer char --context 32` writes one."""
    from lmscope.models.gpt2 import GPT, GPTConfig

    torch.manual_seed(0)
    config = GPTConfig(vocab_size=len(SMALL_CHARS), n_ctx=32, n_embd=32, n_layer=2, n_head=2)
    folder = tmp_path_factory.mktemp("models") / "small-char"
    return save_model(
        GPT(config), folder, tokenizer=CharTokenizer(SMALL_CHARS), meta={"name": "small-char"}
    )


@pytest.fixture(scope="module")
def broken_gpt(tmp_path_factory, small_char_gpt):
    """small_char_gpt with a NaN in its weights, saved as such."""
    import lmscope

    model = lmscope.load(small_char_gpt)
    with torch.no_grad():
        next(model.net.parameters()).view(-1)[0] = float("nan")
    folder = tmp_path_factory.mktemp("models") / "broken"
    return save_model(model.net, folder, tokenizer=model.tokenizer, meta={"name": "broken"})


@pytest.fixture
def read_only(monkeypatch):
    """``read_only(folder)``: writing a file in ``folder`` fails as on a read-only disk (the
    tests run as root, whom permissions do not stop), for the write check every --out makes."""
    real = tempfile.TemporaryFile
    folders: set[Path] = set()

    def temporary_file(*args, dir=None, **kwargs):  # noqa: A002 - tempfile's own name
        if dir is not None and Path(dir) in folders:
            raise OSError(errno.EROFS, "Read-only file system")
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "TemporaryFile", temporary_file)
    return lambda folder: folders.add(Path(folder))
