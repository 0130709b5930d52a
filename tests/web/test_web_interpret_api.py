"""The research endpoints against the library: /api/lens equals trace.logit_lens() and its last
row is the model's real output, /api/ablate equals ablation_effect, /api/compare equals
compare() and only ever uses a model the server was started with. Bad input is a 4xx JSON
error, never a 500."""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402
from webtools import assert_readable_error, char_model, post  # noqa: E402

import lmscope  # noqa: E402
from lmscope.interpret.ablation import ablation_effect  # noqa: E402
from lmscope.interpret.compare import compare  # noqa: E402
from lmscope.web import create_app  # noqa: E402

PROMPT = "Data visualization empowers users to"


@pytest.fixture(scope="module")
def app(tiny_model, other_gpt2):
    return create_app(tiny_model, compare=[other_gpt2, char_model()])


@pytest.fixture(scope="module")
def ids(tiny_model):
    return tiny_model.encode(PROMPT)


# --- logit lens ---------------------------------------------------------------------------


@pytest.mark.slow
def test_lens_equals_the_library_and_its_last_row_is_the_output(client, tiny_model, ids):
    d = post(client, "/api/lens", {"ids": ids, "k": 5})
    n_layer = tiny_model.config.n_layer
    assert d["stages"] == ["embed"] + [f"block {i}" for i in range(n_layer)]
    assert d["positions"] == list(range(len(ids))) and d["start"] == 0
    assert [t["id"] for t in d["tokens"]] == ids
    assert [t and t["id"] for t in d["next"]] == ids[1:] + [None]

    expected = tiny_model.trace(ids).logit_lens(k=5).to_dict(tiny_model.tokenizer.piece)
    for got_row, want_row in zip(d["cells"], expected["cells"], strict=True):
        for got, want in zip(got_row, want_row, strict=True):
            assert [x["id"] for x in got["top"]] == [x["id"] for x in want["top"]]
            assert [x["prob"] for x in got["top"]] == pytest.approx(
                [x["prob"] for x in want["top"]], abs=2e-6
            )
            assert got["final_rank"] == want["final_rank"]

    # the last row is what the model really outputs at every position
    probs = torch.softmax(tiny_model.logits(ids).double(), -1)
    top = probs.topk(5, dim=-1)
    for j, cell in enumerate(d["cells"][-1]):
        assert [x["id"] for x in cell["top"]] == top.indices[j].tolist()
        assert [x["prob"] for x in cell["top"]] == pytest.approx(top.values[j].tolist(), abs=2e-6)
        assert cell["final_rank"] == 0
        assert d["final"][j]["id"] == int(probs[j].argmax())


@pytest.mark.slow
def test_lens_window_on_a_long_prompt(client, tiny_model):
    long = list(range(1000, 1100))  # 100 tokens: the answer is a window, not the whole grid
    d = post(client, "/api/lens", {"ids": long, "position": 90, "size": 12, "k": 3})
    assert d["n_tokens"] == 100 and len(d["positions"]) == 12
    assert d["positions"][0] <= 90 <= d["positions"][-1]
    assert all(len(row) == 12 and len(row[0]["top"]) == 3 for row in d["cells"])
    end = post(client, "/api/lens", {"ids": long, "start": 95, "size": 12})
    assert end["positions"] == list(range(88, 100))  # clamped inside the sequence
    expected = tiny_model.trace(long).logit_lens(k=5, positions=[99])
    assert end["cells"][-1][-1]["top"][0]["id"] == int(expected.top_ids[-1, 0, 0])


@pytest.mark.slow
def test_lens_and_heads_on_a_trace_recorded_in_parts(client, tiny_model):
    """A small cache makes the server record a light base trace and layers on demand; the
    answers must not change."""
    long = list(range(2000, 2100))
    with TestClient(create_app(tiny_model, cache_bytes=1 << 20)) as small:
        assert not small.app.state.store.is_full(tuple(long))
        for path, body in [
            ("/api/lens", {"ids": long, "position": 50}),
            ("/api/heads", {"ids": long, "position": 70}),
        ]:
            assert post(small, path, body) == post(client, path, body)


def test_heads_are_the_attention_patterns(client, tiny_model, ids):
    d = post(client, "/api/heads", {"ids": ids, "position": 4})
    trace = tiny_model.trace(ids)
    assert (d["start"], d["size"]) == (0, 5)
    assert len(d["layers"]) == 2 and len(d["layers"][0]) == 4
    import base64

    pattern = trace["blocks.1.attn.hook_pattern"][2, :5, :5]
    expected = (pattern * 255).round().to(torch.uint8).flatten().tolist()
    assert list(base64.b64decode(d["layers"][1][2])) == expected


# --- ablation -------------------------------------------------------------------------------


def test_ablating_nothing_changes_nothing(client, ids):
    d = post(client, "/api/ablate", {"ids": ids, "ablate": []})
    assert d["ablations"] == [] and d["kl"] == 0.0
    assert d["before"] == d["after"]
    assert all(x["change"] == 0.0 for x in d["diff"])


@pytest.mark.parametrize(
    ("specs", "mode", "position"),
    [(["L0H1"], "zero", None), (["L1H3", "mlp0"], "mean", 2), (["attn1"], "zero", 4)],
)
def test_ablation_equals_ablation_effect(client, tiny_model, ids, specs, mode, position):
    body = {"ids": ids, "ablate": specs, "mode": mode, "k": 10}
    if position is not None:
        body["position"] = position
    d = post(client, "/api/ablate", body)
    want = ablation_effect(
        tiny_model, ids, specs, mode=mode, position=-1 if position is None else position, k=10
    ).to_dict()
    assert d["position"] == want["position"] and d["mode"] == mode
    assert sorted(d["ablations"]) == sorted(want["ablations"])
    assert d["kl"] == pytest.approx(want["kl"], rel=1e-5) and d["kl"] > 0
    for key in ("before", "after"):
        assert [x["id"] for x in d[key]] == [x["id"] for x in want[key]]
        assert [x["prob"] for x in d[key]] == pytest.approx([x["prob"] for x in want[key]])
    assert [x["id"] for x in d["diff"]] == [x["id"] for x in want["diff"]]
    assert [x["change"] for x in d["diff"]] == pytest.approx(
        [x["change"] for x in want["diff"]], abs=1e-7
    )


def test_ablation_specs_are_canonical(client, ids):
    d = post(client, "/api/ablate", {"ids": ids, "ablate": ["mlp1", "0.1", "L0H1", "L1H*"]})
    assert d["ablations"] == ["L0H1", "L1H0", "L1H1", "L1H2", "L1H3", "mlp1"]


# --- compare --------------------------------------------------------------------------------


def test_compare_lists_the_allowlist(client, tiny_model, other_gpt2):
    d = client.get("/api/compare/models").json()
    assert d == {"model": tiny_model.name, "models": [other_gpt2.name, "char-gpt"]}


def test_compare_per_token_equals_the_library(client, tiny_model, other_gpt2, ids):
    d = post(client, "/api/compare", {"model": other_gpt2.name, "text": PROMPT})
    want = compare(tiny_model, other_gpt2, PROMPT).to_dict()
    assert d["unit"] == "token" and d["pieces"] == want["pieces"]
    assert d["names"] == [tiny_model.name, other_gpt2.name]
    for key in ("loss_a", "loss_b", "diff"):
        assert d[key] == pytest.approx(want[key], rel=1e-6)
    assert d["mean_a"] == pytest.approx(want["mean_a"]) and d["mean_b"] == pytest.approx(
        want["mean_b"]
    )
    # the page sends the served model's ids; the server decodes them to the same text
    assert post(client, "/api/compare", {"model": other_gpt2.name, "ids": ids}) == d


def test_compare_falls_back_to_characters(client, tiny_model):
    d = post(client, "/api/compare", {"model": "char-gpt", "text": PROMPT})
    assert d["unit"] == "character" and d["pieces"] == list(PROMPT)
    assert "characters" in d["note"]
    assert d["loss_b"][0] is None  # nothing predicts a char model's first character
    want = compare(tiny_model, char_model(), PROMPT)
    assert d["mean_b"] == pytest.approx(want.mean_b)


def test_compare_never_loads_a_model_named_by_a_request(client, monkeypatch, tiny_hf_dir):
    loads = []
    monkeypatch.setattr(lmscope, "load", lambda *a, **k: loads.append(a))
    for name in (str(tiny_hf_dir), "gpt2", "../../etc/passwd"):
        r = client.post("/api/compare", json={"model": name, "text": PROMPT})
        assert r.status_code == 400 and "not offered" in r.json()["error"]
        assert "char-gpt" in r.json()["error"]  # says what can be chosen
    assert loads == []


def test_a_server_without_compare_models_says_how_to_add_one(tiny_model):
    with TestClient(create_app(tiny_model)) as c:
        assert c.get("/api/compare/models").json()["models"] == []
        r = c.post("/api/compare", json={"model": "gpt2", "text": PROMPT})
        assert r.status_code == 400 and "--compare" in r.json()["error"]


# --- bad input ------------------------------------------------------------------------------

BAD = [
    ("/api/ablate", {"ids": [1, 2], "ablate": ["L0H4"]}, 400, "head 4 does not exist"),
    ("/api/ablate", {"ids": [1, 2], "ablate": ["L2H0"]}, 400, "layer 2 does not exist"),
    ("/api/ablate", {"ids": [1, 2], "ablate": ["mlp9"]}, 400, "layer 9"),
    ("/api/ablate", {"ids": [1, 2], "ablate": ["heads please"]}, 400, "cannot read"),
    ("/api/ablate", {"ids": [1, 2], "ablate": [""]}, 422, "ablate"),
    ("/api/ablate", {"ids": [1, 2], "ablate": ["L0H1"] * 5000}, 422, "ablate"),
    ("/api/ablate", {"ids": [1, 2], "mode": "half"}, 422, "mode"),
    ("/api/ablate", {"ids": [1, 2], "position": 2}, 400, "position 2"),
    ("/api/ablate", {"ids": []}, 422, "ids"),
    ("/api/ablate", {"ids": [50257]}, 400, "vocabulary"),
    ("/api/lens", {"ids": [1, 2], "position": 5}, 400, "position 5"),
    ("/api/lens", {"ids": [1, 2], "size": 33}, 422, "size"),
    ("/api/lens", {"ids": [1, 2], "k": 0}, 422, "k"),
    ("/api/lens", {"ids": [1] * 129}, 400, "context"),
    ("/api/heads", {"ids": [1, 2], "position": 3}, 400, "position 3"),
    ("/api/compare", {"model": "char-gpt", "text": ""}, 422, "at least 1 character"),
    ("/api/compare", {"model": "char-gpt", "ids": []}, 422, "at least 1 item"),
    ("/api/compare", {"model": "char-gpt"}, 422, "exactly one"),
    ("/api/compare", {"model": "char-gpt", "text": "x" * 4001}, 422, "text"),
    ("/api/compare", {"model": "char-gpt", "text": "你好"}, 400, "vocabulary"),
    ("/api/compare", {"text": "hello"}, 422, "model"),
]


@pytest.mark.parametrize(("path", "body", "status", "words"), BAD)
def test_bad_input_is_a_readable_4xx(client, path, body, status, words):
    assert_readable_error(client, path, body, status, words)


@pytest.mark.slow
def test_openapi_documents_the_new_endpoints(client):
    spec = client.get("/openapi.json").json()
    for path in ("/api/lens", "/api/heads", "/api/ablate", "/api/compare", "/api/compare/models"):
        assert path in spec["paths"]
    assert {"LensResponse", "AblateResponse", "CompareResponse"} <= set(
        spec["components"]["schemas"]
    )


# --- lmscope serve --compare ----------------------------------------------------------------


@pytest.mark.slow
def test_serve_loads_the_compare_allowlist_at_start(monkeypatch, tiny_model, capsys):
    import uvicorn

    from lmscope.cli import main
    from lmscope.commands import serve

    calls, loaded = {}, []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.update(app=app))
    monkeypatch.setattr(serve, "_check_free", lambda host, port: None)

    def load(name=None, **kwargs):
        loaded.append(name)
        return char_model(name) if name else tiny_model

    monkeypatch.setattr(lmscope, "load", load)
    assert main(["serve", "--compare", "char-a", "--compare", "char-b"]) == 0
    assert loaded == [None, "char-a", "char-b"]  # the served model, then the allowlist
    assert list(calls["app"].state.compare) == ["char-a", "char-b"]
    assert "compare it with char-a, char-b" in capsys.readouterr().err
