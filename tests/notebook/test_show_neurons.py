"""lmscope.show.neurons on a tiny random char-LSTM: the widget is sent the run's own values (the
web API's /api/rnn/activations body of the kernel's run), another layer, unit or kind is read
from that run, the static snapshot is the library's coloured text, and the widget draws with
/rnn's own module."""

from __future__ import annotations

import re

import pytest
import torch

pytest.importorskip("anywidget")

import lmscope  # noqa: E402
import lmscope.show  # noqa: E402
from lmscope.engine.rnn_model import RNNLanguageModel  # noqa: E402
from lmscope.interpret.neurons import neuron_activations  # noqa: E402
from lmscope.models.rnn import CharRNN, CharRNNConfig  # noqa: E402
from lmscope.show import bundle  # noqa: E402
from lmscope.tokenizers import CharTokenizer  # noqa: E402

CHARS = '\n !"(),.?abcdefghijklmnopqrstuvwxyz'
TEXT = 'he said, "yes (it is)."\n'


@pytest.fixture(scope="module")
def run():
    torch.manual_seed(0)
    net = CharRNN(CharRNNConfig(vocab_size=len(CHARS), cell="lstm", hidden=8, layers=2))
    model = RNNLanguageModel(net, CharTokenizer(CHARS), name="tiny-lstm")
    return neuron_activations(model, TEXT + "Z")  # Z: not in the vocabulary, skipped


@pytest.fixture(scope="module")
def widget(run):
    """The widget (the first widget made builds the front end once)."""
    return lmscope.show.neurons(run, layer=1, unit=3, kind="c")


def test_the_widget_is_sent_the_runs_values(run, widget):
    r = widget.setup["result"]
    assert (r["layer"], r["unit"], r["kind"], r["text"]) == (1, 3, "c", TEXT + "Z")
    assert r["values"] == pytest.approx(run.unit(1, 3, "c").tolist(), abs=1e-5)
    assert set(r["gates"]) == {"i", "f", "o"}
    assert r["gates"]["f"] == pytest.approx(run.unit(1, 3, "f").tolist(), abs=1e-5)
    assert r["skipped"] == ["Z"] and r["slots"][-1] is None
    assert [p["char"] for p in r["top"][0]] == [c for c, _ in run.predictions(0)]
    assert widget.setup["model"]["kinds"] == ["h", "c", "i", "f", "g", "o"]

    # the controls ask the kernel for another unit of the same run
    body = {"model": "tiny-lstm", "text": TEXT + "Z", "layer": 0, "unit": 7, "kind": "h"}
    reply = widget.answers.answer("/api/rnn/activations", body)
    assert reply["ok"]
    assert reply["data"]["values"] == pytest.approx(run.unit(0, 7, "h").tolist(), abs=1e-5)
    for bad, said in (({"unit": 8}, "8"), ({"kind": "z"}, "z"), ({"text": "other"}, "text")):
        reply = widget.answers.answer("/api/rnn/activations", {**body, **bad})
        assert not reply["ok"] and said in reply["error"], reply

    # the snapshot: the library's coloured text, a value in each character's tooltip
    tips = re.findall(r"c = ([-+][0-9.]+)", widget.snapshot)
    assert [float(v) for v in tips] == pytest.approx(r["values"], abs=1e-4)
    assert repr(widget) == "lmscope.show.neurons(tiny-lstm)"


def test_a_model_needs_its_text(run):
    with pytest.raises(lmscope.InvalidInputError, match="text"):
        lmscope.show.neurons(object())


def test_the_neuron_widget_draws_with_the_rnn_pages_module():
    modules = bundle.modules()
    assert modules["rnn_view.js"] == (bundle.PAGE_JS / "rnn_view.js").read_text(encoding="utf-8")
    assert ".rnn-colored" in bundle.styles()
