"""Neuron activations of char RNN/LSTM/GRUs: every unit, cell and gate per character, the
top-5 predictions, skipped characters, bad input, and the coloured-text views."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lmscope import i18n
from lmscope.engine.rnn_model import RNNLanguageModel
from lmscope.errors import InvalidInputError
from lmscope.interpret.neurons import KINDS, neuron_activations, parse_cell
from lmscope.interpret.planted import plant_quote_cell
from lmscope.models.rnn import CharRNN, CharRNNConfig
from lmscope.tokenizers import CharTokenizer

CHARS = '\n !"(),.?abcdefghijklmnopqrstuvwxyz'
TEXT = 'he said, "yes, it is."\nand then (quietly) "no."\n'


def char_model(cell: str = "lstm", hidden: int = 8, layers: int = 2, seed: int = 0):
    torch.manual_seed(seed)
    net = CharRNN(CharRNNConfig(vocab_size=len(CHARS), cell=cell, hidden=hidden, layers=layers))
    return RNNLanguageModel(net, CharTokenizer(CHARS), name=f"tiny-{cell}")


@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_every_kind_of_every_layer_matches_the_stepwise_cell(cell):
    model = char_model(cell)
    run = neuron_activations(model, TEXT, chunk=7)  # chunks carry the state across
    assert set(run.values) == set(KINDS[cell])
    assert len(run) == len(TEXT) and run.chars == list(TEXT) and not run.skipped
    ref = model.activations(TEXT)
    for layer, record in enumerate(ref.layers):
        np.testing.assert_allclose(run.values["h"][layer], record.h.numpy(), atol=1e-6)
        if cell == "lstm":
            np.testing.assert_allclose(run.values["c"][layer], record.c.numpy(), atol=1e-6)
        for gate, value in record.gates.items():
            np.testing.assert_allclose(run.values[gate][layer], value.numpy(), atol=1e-6)
    assert run.values["h"].shape == (2, len(TEXT), 8)


def test_top5_predictions_are_the_models_own():
    model = char_model("gru")
    run = neuron_activations(model, TEXT)
    probs = torch.softmax(model.logits(TEXT), dim=-1)
    top = probs.topk(5, dim=-1)
    np.testing.assert_array_equal(run.top_ids, top.indices.numpy())
    np.testing.assert_allclose(run.top_probs, top.values.numpy(), rtol=1e-5)
    ids = model.encode(TEXT)
    assert run.next_probs[3] == pytest.approx(float(probs[3, ids[4]]), rel=1e-5)
    assert np.isnan(run.next_probs[-1])
    first = run.predictions(0)
    assert len(first) == 5 and first[0][1] >= first[-1][1]
    assert first[0][0] == CHARS[int(top.indices[0, 0])]


def test_unknown_characters_are_skipped_and_said():
    model = char_model()
    text = "Héllo wörld"  # H, é, ö are not in the vocabulary
    run = neuron_activations(model, text)
    assert run.skipped == [0, 1, 7]
    assert run.skipped_chars == ["H", "é", "ö"]
    assert "".join(run.chars) == "llo wrld"
    assert list(run.kept) == [2, 3, 4, 5, 6, 8, 9, 10]
    note = run.skipped_note()
    assert "skipped 3 character(s)" in note and "'é'" in note
    # the model read the text as if they were not there
    np.testing.assert_allclose(run.values["c"], neuron_activations(model, "llo wrld").values["c"])


def test_bad_input_is_one_clear_line():
    model = char_model()
    with pytest.raises(InvalidInputError, match="empty"):
        neuron_activations(model, "")
    with pytest.raises(InvalidInputError, match="none of the text's characters"):
        neuron_activations(model, "ÀÉÎ")
    with pytest.raises(InvalidInputError, match="no 'r' values"):
        neuron_activations(model, TEXT, kinds=("r",))
    run = neuron_activations(model, TEXT, kinds=("c",))
    with pytest.raises(InvalidInputError, match=r"unit 8 does not exist; each layer has units 0"):
        run.unit(0, 8, "c")
    with pytest.raises(InvalidInputError, match=r"layer 2 does not exist"):
        run.unit(2, 0, "c")
    with pytest.raises(InvalidInputError, match="did not record 'h'"):
        run.unit(0, 0, "h")
    for bad in ("1", "a:b", "1:", ":2", "-1:3"):
        with pytest.raises(InvalidInputError, match="LAYER:UNIT"):
            parse_cell(bad)
    assert parse_cell("1:42") == (1, 42)


def test_gpt_is_refused():
    import lmscope

    tiny_model = lmscope.load("shakespeare")
    with pytest.raises(InvalidInputError, match="not a char-RNN"):
        neuron_activations(tiny_model, "hello")


def test_planted_quote_cell_toggles_exactly():
    model = char_model(hidden=6, layers=1)
    plant_quote_cell(model.net, CHARS.index('"'), unit=4)
    run = neuron_activations(model, TEXT)
    inside = np.array([TEXT[: t + 1].count('"') % 2 for t in range(len(TEXT))], dtype=bool)
    c = run.unit(0, 4, "c")
    assert (c[inside] > 0.5).all() and (c[~inside] < 0.05).all()


def test_coloured_text_views(tmp_path):
    model = char_model()
    run = neuron_activations(model, 'a "b" Ω\nc')
    view = run.view(1, 3)  # an LSTM's default is the cell state
    assert view.kind == "c" and "layer 1, unit 3, cell state" in view.title
    html = view._repr_html_()
    assert html.count("<span") == len('a "b" Ω\nc')
    assert "line-through" in html  # the skipped Ω
    assert "next: " in html and "c = " in html and "&quot;" in html  # hover text, escaped
    with i18n.using("zh"):  # the Python API's views speak the language set
        zh = run.view(1, 3)
    assert "第 1 层" in zh.title or "细胞状态" in zh.title, zh.title
    assert "下一个：" in zh.to_html() and "不在词表中" in zh.to_html() and zh.lang == "zh"
    c = run.unit(1, 3, "c")
    assert np.allclose(view.shades, np.tanh(c))
    gate = run.view(0, 0, "f")
    assert gate.shades.min() >= -1 and np.allclose(gate.shades, 2 * run.unit(0, 0, "f") - 1)
    png, svg = view.save_png(tmp_path / "cell.png"), view.save_svg(tmp_path / "cell.svg")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and svg.stat().st_size > 1000
    body = view.to_dict()
    assert body["slots"][-3] is None and len(body["values"]) == len(run)


@pytest.mark.slow
def test_the_documented_neurons_example_runs(tmp_path, monkeypatch):
    """The Python block of the docs' "Char-RNN neurons" section, as written, on a short text."""
    import re
    from pathlib import Path

    page = Path(__file__).parents[2] / "docs" / "char-rnns.md"
    section = page.read_text(encoding="utf-8").split("## Char-RNN neurons", 1)[1]
    section = section.split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert blocks, "the neurons section has no Python example"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my.txt").write_text('"Yes," said Natasha. "No," he said.\n' * 12)
    scope: dict = {}
    exec(compile(blocks[0], str(page), "exec"), scope)
    assert "inside_quotes" in scope["headline"]


def test_odd_arguments_to_a_run_and_its_views_are_one_line(tmp_path):
    from lmscope.interpret.cell_finder import find_cells

    run = neuron_activations(char_model(), TEXT)
    with pytest.raises(InvalidInputError, match="position 9999 does not exist"):
        run.predictions(9999)
    assert run.predictions(-1) == run.predictions(len(run) - 1)
    with pytest.raises(InvalidInputError, match="must be a str, got list"):
        neuron_activations(char_model(), [1, 2, 3])  # not "the text is empty"
    with pytest.raises(InvalidInputError, match="reads a NeuronRun"):
        find_cells(None)
    view = run.view(0, 1, "h")
    for width in (0, -5, 2.5):
        with pytest.raises(InvalidInputError, match="width"):
            view.figure(width=width)
    with pytest.raises(InvalidInputError, match="cannot write .*x.html"):
        view.save_html(tmp_path / "missing" / "x.html")
    with pytest.raises(InvalidInputError, match="is a folder"):
        view.save_html(tmp_path)
