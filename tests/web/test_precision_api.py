"""The precision the page and the API show: GET /api/model says it (``dtype``), POST
/api/precision measures a lower precision against float32 on a prompt, and ``lmscope serve
--dtype bfloat16`` serves the model in bfloat16."""

from __future__ import annotations

import pytest
import torch
from fastapi.testclient import TestClient

import lmscope
from lmscope.cli import main
from lmscope.web import create_app

PROMPT = "ROMEO: But soft, what light through yonder window breaks?"


@pytest.fixture(scope="module")
def half():
    return lmscope.load("shakespeare", dtype="bfloat16")


@pytest.fixture(scope="module")
def half_client(half):
    with TestClient(create_app(half)) as client:
        yield client


@pytest.mark.slow
def test_model_facts_name_the_precision(half_client, client):
    assert half_client.get("/api/model").json()["dtype"] == "bfloat16"
    assert client.get("/api/model").json()["dtype"] == "float32"


@pytest.mark.slow
def test_bf16_costs_are_measured_against_the_float32_weights(half_client, half):
    r = half_client.post("/api/precision", json={"text": PROMPT, "top_k": 5})
    assert r.status_code == 200, r.text
    d = r.json()
    assert d["dtype"] == "bfloat16" and d["reference"] == "float32"
    assert d["tokens"] == len(half.encode(PROMPT)) and d["top_k"] == 5
    assert 0 < d["max_abs_delta_last"] <= d["max_abs_delta_logit"] < 0.5
    assert d["same_top_k"] == (d["top_ids"] == d["reference_top_ids"])
    # the numbers are the model's: float32 logits of the float32 model, this model's own
    full = lmscope.load("shakespeare")
    ids = half.encode(PROMPT)
    delta = (half.logits(ids) - full.logits(ids)).abs()
    assert d["max_abs_delta_logit"] == pytest.approx(float(delta.max()), rel=1e-6)
    assert d["reference_top_ids"] == full.logits(ids)[-1].topk(5).indices.tolist()
    again = half_client.post("/api/precision", json={"ids": ids, "top_k": 5}).json()
    assert again == d


def test_float32_costs_nothing(client):
    d = client.post("/api/precision", json={"text": "the quick brown fox"}).json()
    assert d["dtype"] == "float32" and d["max_abs_delta_logit"] == 0.0
    assert d["same_top_k"] and d["top1_changed_positions"] == 0


def test_precision_requests_are_checked(half_client):
    assert half_client.post("/api/precision", json={"text": PROMPT, "top_k": 0}).status_code == 422
    assert half_client.post("/api/precision", json={}).status_code == 422


def test_without_the_originals_the_reference_is_these_weights_upcast(tiny_model):
    from lmscope.engine.transformer import LanguageModel

    net = type(tiny_model.net)(tiny_model.config)
    net.load_state_dict(tiny_model.net.state_dict())
    model = LanguageModel(net.to(torch.bfloat16), tiny_model.tokenizer, "copy")
    cost = model.precision_cost("the quick brown fox", top_k=3)
    assert cost.reference == "upcast" and cost.top_k == 3
    assert model.float32_reference().dtype == torch.float32
    assert model.float32_reference() is model.float32_reference()  # made once, then kept


@pytest.mark.slow
def test_serve_dtype_serves_the_model_in_that_precision(monkeypatch, tiny_model, capsys):
    import uvicorn

    from lmscope.commands import serve

    served = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: served.update(app=app))
    monkeypatch.setattr(serve, "_check_free", lambda host, port: None)

    def load(name=None, **kwargs):
        net = type(tiny_model.net)(tiny_model.config)
        net.load_state_dict(tiny_model.net.state_dict())
        return type(tiny_model)(net, tiny_model.tokenizer, "tiny")

    monkeypatch.setattr(lmscope, "load", load)
    assert main(["serve", "--dtype", "bfloat16", "--rnn", "none"]) == 0
    model = served["app"].state.served.model
    assert model.precision == "bfloat16" and model.info().dtype == "bfloat16"
    assert "tiny in bfloat16" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # argparse: not one of the choices
        main(["serve", "--dtype", "int8"])
