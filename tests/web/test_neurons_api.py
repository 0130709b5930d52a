"""The char-RNN endpoints: served models, one unit's values and gates with the top-5
predictions, the finder, sampling, and one-line errors. Models come from the server's start,
never from a request."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient

import lmscope
from lmscope.engine.rnn_model import RNNLanguageModel
from lmscope.interpret.neurons import neuron_activations
from lmscope.interpret.planted import plant_quote_cell
from lmscope.models.rnn import CharRNN, CharRNNConfig
from lmscope.tokenizers import CharTokenizer
from lmscope.web import create_app

CHARS = "\n !\"',-.:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
TEXT = 'He said, "Yes, it is." And then: "No."\n'


def planted(cell: str = "lstm", name: str = "quote-lstm"):
    torch.manual_seed(0)
    net = CharRNN(CharRNNConfig(vocab_size=len(CHARS), cell=cell, hidden=10, layers=2))
    if cell == "lstm":
        plant_quote_cell(net, CHARS.index('"'), unit=7)
    meta = {"training": {"corpus": "tinyshakespeare"}}
    return RNNLanguageModel(net, CharTokenizer(CHARS), name=name, meta=meta)


@pytest.fixture(scope="module")
def models():
    return [planted("lstm"), planted("gru", "tiny-gru")]


@pytest.fixture(scope="module")
def app(models):
    return create_app(lmscope.load("shakespeare"), rnn=models)


@pytest.mark.slow
def test_models_and_page(client):
    body = client.get("/api/rnn/models").json()
    lstm, gru = body["models"]
    assert lstm["name"] == "quote-lstm" and lstm["kinds"] == ["h", "c", "i", "f", "g", "o"]
    assert lstm["gates"] == ["i", "f", "o"] and lstm["default_kind"] == "c"
    assert gru["gates"] == ["r", "z"] and gru["default_kind"] == "h"
    assert lstm["corpus"] == "tinyshakespeare" and lstm["hidden"] == 10
    page = client.get("/rnn")
    assert page.status_code == 200 and "/bundle/rnn.js?v=" in page.text


def test_one_unit_with_gates_and_predictions(client, models):
    r = client.post("/api/rnn/activations", json={"text": TEXT + "é", "layer": 0, "unit": 7})
    assert r.status_code == 200, r.text
    body = r.json()
    run = neuron_activations(models[0], TEXT)
    assert body["kind"] == "c" and body["model"] == "quote-lstm"
    np.testing.assert_allclose(body["values"], run.unit(0, 7, "c"), atol=1e-4)
    np.testing.assert_allclose(body["gates"]["f"], run.unit(0, 7, "f"), atol=1e-4)
    assert set(body["gates"]) == {"i", "f", "o"}
    assert len(body["top"]) == len(TEXT) and len(body["top"][0]) == 5
    assert body["top"][3][0]["char"] == run.predictions(3)[0][0]
    assert body["slots"][-1] is None and body["skipped"] == ["é"]
    assert "skipped 1 character(s)" in body["note"]
    gru = client.post(
        "/api/rnn/activations", json={"model": "tiny-gru", "text": TEXT, "unit": 3, "kind": "z"}
    ).json()
    assert gru["kind"] == "z" and set(gru["gates"]) == {"r", "z"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"text": TEXT, "unit": 10}, "unit 10 does not exist; each layer has units 0..9"),
        ({"text": TEXT, "layer": 2}, "layer 2 does not exist"),
        ({"text": TEXT, "kind": "z"}, "an LSTM has no 'z' values"),
        ({"text": ""}, "the text is empty"),
        ({"text": "éèê"}, "none of the text's characters"),
        ({"text": TEXT, "model": "/etc/passwd"}, "is not served here"),
    ],
)
def test_bad_requests_are_one_line(client, body, message):
    r = client.post("/api/rnn/activations", json=body)
    assert r.status_code == 400 and message in r.json()["error"], r.text
    assert "\n" not in r.json()["error"]


@pytest.mark.slow
def test_finder_on_text_and_on_the_corpus(client):
    text = (TEXT * 12 + 'and "so" on, line after line\n') * 3
    r = client.post("/api/rnn/cells", json={"text": text, "top": 2})
    assert r.status_code == 200, r.text
    quotes = next(f for f in r.json()["features"] if f["name"] == "inside_quotes")
    assert (quotes["best"][0]["layer"], quotes["best"][0]["unit"]) == (0, 7)
    assert len(quotes["best"]) == 2 and quotes["best"][0]["f1"] > 0.99
    short = client.post("/api/rnn/cells", json={"text": "too short"})
    assert short.status_code == 400 and "at least 200 characters" in short.json()["error"]
    corpus = client.post("/api/rnn/cells", json={"model": "tiny-gru"}).json()
    assert corpus["source"].startswith("tinyshakespeare") and corpus["chars_read"] > 7000


@pytest.mark.slow
def test_sampling_is_seeded(client):
    body = {"prompt": "He said", "n": 40, "temperature": 0.8, "seed": 7}
    a = client.post("/api/rnn/sample", json=body).json()
    b = client.post("/api/rnn/sample", json=body).json()
    assert a["sample"] == b["sample"] and len(a["sample"]) == 40 and a["seed"] == 7
    greedy = client.post("/api/rnn/sample", json={**body, "temperature": 0, "seed": 1}).json()
    again = client.post("/api/rnn/sample", json={**body, "temperature": 0, "seed": 2}).json()
    assert greedy["sample"] == again["sample"]
    bad = client.post("/api/rnn/sample", json={**body, "n": 0})
    assert bad.status_code == 422


@pytest.mark.slow
def test_a_server_without_char_models_says_how_to_start_one():
    client = TestClient(create_app(lmscope.load("shakespeare")))
    assert client.get("/api/rnn/models").json() == {"models": []}
    r = client.post("/api/rnn/activations", json={"text": "abc"})
    assert r.status_code == 400 and "lmscope serve --rnn MODEL" in r.json()["error"]


@pytest.mark.slow
def test_serve_loads_char_models_at_start(monkeypatch, tmp_path, capsys):
    import uvicorn

    from lmscope.cli import main
    from lmscope.commands import serve
    from lmscope.engine.loading import save_model

    calls = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.update(app=app))
    monkeypatch.setattr(serve, "_check_free", lambda host, port: None)
    folder = save_model(
        planted().net, tmp_path / "q", tokenizer=CharTokenizer(CHARS), meta={"name": "q"}
    )
    assert main(["serve", "--model", "shakespeare", "--rnn", str(folder)]) == 0
    assert list(calls["app"].state.rnn) == ["q"]
    assert "char-RNN neurons of q at http://127.0.0.1:8000/rnn" in capsys.readouterr().err
    assert main(["serve", "--model", "shakespeare", "--rnn", "none"]) == 0
    assert calls["app"].state.rnn == {}
    assert main(["serve", "--model", "shakespeare", "--rnn", "shakespeare"]) == 2
    assert "not a char-RNN/LSTM/GRU" in capsys.readouterr().err


CODE = (
    'def parse(line, sep=","):\n'
    '    """Split a line into fields (quotes keep a field whole)."""\n'
    '    fields, word = [], ""  # the fields so far\n'
    "    for ch in line.strip():\n"
    "        if ch == sep and not word.startswith('\"'):\n"
    "            fields.append((word, len(fields)))\n"
    '            word = ""\n'
    "        else:\n"
    '            word += ch  # still inside (or after) "quotes"\n'
    "    return [f.strip('\"') for f in fields + [word]]\n"
)


@pytest.mark.slow
def test_serve_offers_the_shipped_prose_and_code_lstms(monkeypatch, capsys):
    import uvicorn

    from lmscope.cli import main
    from lmscope.commands import serve
    from lmscope.interpret.features import FEATURE_SETS

    calls = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.update(app=app))
    monkeypatch.setattr(serve, "_check_free", lambda host, port: None)
    assert main(["serve", "--model", "shakespeare"]) == 0
    app = calls["app"]
    assert list(app.state.rnn) == ["warpeace-lstm", "stdlib-lstm"]  # prose first: the default
    assert "char-RNN neurons of warpeace-lstm, stdlib-lstm" in capsys.readouterr().err
    with TestClient(app) as client:
        models = {m["name"]: m for m in client.get("/api/rnn/models").json()["models"]}
        code = models["stdlib-lstm"]
        assert (code["corpus"], code["features"], code["layers"], code["hidden"]) == (
            "python-stdlib",
            "code",
            2,
            256,
        )
        assert models["warpeace-lstm"]["features"] == "prose"
        body = {"model": "stdlib-lstm", "text": CODE * 3, "top": 2}
        cells = client.post("/api/rnn/cells", json=body)
        assert cells.status_code == 200, cells.text
        found = cells.json()
        assert found["model"] == "stdlib-lstm"
        assert [f["name"] for f in found["features"]] == list(FEATURE_SETS["code"])
        strings = next(f for f in found["features"] if f["name"] == "inside_string")
        assert len(strings["best"]) == 2 and strings["best"][0]["f1"] > 0.5
        unit = strings["best"][0]
        body = {"model": "stdlib-lstm", "text": CODE, "layer": unit["layer"], "unit": unit["unit"]}
        view = client.post("/api/rnn/activations", json={**body, "kind": unit["kind"]}).json()
        assert view["model"] == "stdlib-lstm" and view["text"] == CODE
        assert len(view["values"]) == len(CODE) and not view["skipped"]
