"""The circuits endpoints against the library, on a tiny random GPT-2: /api/circuits/induction
equals induction_scores (and sends the chosen head's pattern), /api/circuits/patch equals
patch, /api/circuits/attribute equals attribute; the page's bounds and bad input are one
readable 4xx line with its catalog id, before any model work; a busy model is a 503."""

from __future__ import annotations

import threading
import time

import pytest
import torch
from webtools import post

from lmscope.interpret.circuits import attribute, induction_scores, patch
from lmscope.web import create_app
from lmscope.web.schemas import circuits as s

CLEAN, CORRUPT = "The capital of France is", "The capital of Italy is"


@pytest.fixture(scope="module")
def app(tiny_model):
    return create_app(tiny_model, wait_s=600)


def refused(client, path: str, body: dict, status: int, code: str) -> dict:
    r = client.post(path, json=body)
    assert r.status_code == status, r.text
    answer = r.json()
    assert answer["code"].startswith(code) and "\n" not in answer["error"], answer
    return answer


def test_induction_equals_the_library_and_sends_the_chosen_heads_pattern(client, tiny_model):
    want = induction_scores(tiny_model, length=12, seed=3)
    got = post(client, "/api/circuits/induction", {"length": 12, "seed": 3})
    expected = want.to_json()
    for key in ("ids", "tokens", "length", "seed", "bos", "top_induction"):
        assert got[key] == expected[key], key
    torch.testing.assert_close(torch.tensor(got["scores"]), want.scores, rtol=0, atol=1e-6)
    torch.testing.assert_close(
        torch.tensor(got["previous_token"]), want.previous_token, rtol=0, atol=1e-6
    )
    torch.testing.assert_close(torch.tensor(got["loss"]), want.loss, rtol=0, atol=1e-5)
    # default: the top induction head; its causal pattern row by row
    best = int(want.scores.flatten().argmax())
    n_head = want.scores.shape[1]
    assert (got["layer"], got["head"]) == (best // n_head, best % n_head)
    pattern = want.pattern(got["layer"], got["head"])
    assert [len(row) for row in got["pattern"]] == list(range(1, len(want.ids) + 1))
    for q, row in enumerate(got["pattern"]):
        torch.testing.assert_close(torch.tensor(row), pattern[q, : q + 1], rtol=0, atol=1e-6)
    # another head of the same run: read from the kept result
    other = post(
        client, "/api/circuits/induction", {"length": 12, "seed": 3, "layer": 1, "head": 2}
    )
    assert (other["layer"], other["head"]) == (1, 2) and other["scores"] == got["scores"]
    torch.testing.assert_close(
        torch.tensor(other["pattern"][-1]), want.pattern(1, 2)[-1], rtol=0, atol=1e-6
    )


def test_patch_equals_the_library(client, tiny_model):
    want = patch(tiny_model, CLEAN, CORRUPT, " Paris", " Rome")
    got = post(
        client,
        "/api/circuits/patch",
        {"clean": CLEAN, "corrupt": CORRUPT, "right": " Paris", "wrong": " Rome"},
    )
    expected = want.to_json()
    for key in ("clean_ids", "corrupt_ids", "clean_tokens", "right", "wrong"):
        assert got[key] == expected[key], key
    assert got["clean_diff"] == pytest.approx(want.clean_diff, abs=1e-5)
    assert set(got["sites"]) == {"resid_pre", "attn_head", "mlp_out"}
    for name, site in want.sites.items():
        grid = got["sites"][name]
        assert grid["rows"] == site.rows and grid["cols"] == site.cols
        torch.testing.assert_close(torch.tensor(grid["values"]), site.values, rtol=0, atol=1e-4)
        torch.testing.assert_close(torch.tensor(grid["diffs"]), site.diffs, rtol=0, atol=1e-4)
    # answers given as token ids: the same job
    ids = {"right": expected["right"]["id"], "wrong": expected["wrong"]["id"]}
    again = post(client, "/api/circuits/patch", {"clean": CLEAN, "corrupt": CORRUPT, **ids})
    assert again == got
    # JSON has one kind of number: 6342.0 is the id 6342, as the schema says
    floats = {k: float(v) for k, v in ids.items()}
    assert (
        post(client, "/api/circuits/patch", {"clean": CLEAN, "corrupt": CORRUPT, **floats}) == got
    )


def test_attribute_equals_the_library_and_adds_up(client, tiny_model):
    want = attribute(tiny_model, CLEAN, " Paris", versus=" Rome", position=3)
    got = post(
        client,
        "/api/circuits/attribute",
        {"text": CLEAN, "token": " Paris", "versus": " Rome", "position": 3},
    )
    assert got["position"] == 3 and got["ids"] == want.ids
    assert got["versus"] == {"id": want.versus, "text": " Rome"}
    assert got["logit"] == pytest.approx(want.logit, abs=1e-5)
    assert set(got["contributions"]) == set(want.contributions)
    for name, value in want.contributions.items():
        assert got["contributions"][name] == pytest.approx(value, abs=1e-5), name
    parts = sum(got["contributions"].values()) + sum(got["remainder"].values())
    assert parts == pytest.approx(got["logit"], abs=1e-4)
    alone = post(client, "/api/circuits/attribute", {"text": CLEAN, "token": " Paris"})
    assert alone["versus"] is None and alone["position"] == len(want.ids) - 1


def test_examples_fit_the_served_model(client, tiny_model):
    got = client.get("/api/circuits/examples").json()
    assert got["max_patch_tokens"] == s.MAX_PATCH_TOKENS
    assert got["examples"], got
    for e in got["examples"]:
        clean, corrupt = tiny_model.encode(e["clean"]), tiny_model.encode(e["corrupt"])
        assert len(clean) == len(corrupt) == e["tokens"] <= s.MAX_PATCH_TOKENS
        assert len(tiny_model.encode(e["right"])) == len(tiny_model.encode(e["wrong"])) == 1


@pytest.mark.parametrize(
    ("path", "body", "status", "code"),
    [
        (
            "/api/circuits/patch",
            {"clean": CLEAN, "corrupt": CORRUPT + " not", "right": " Paris", "wrong": " Rome"},
            400,
            "error.circuits.lengths-differ",
        ),
        (
            "/api/circuits/patch",
            {"clean": CLEAN, "corrupt": CORRUPT, "right": " Parisian", "wrong": " Rome"},
            400,
            "error.circuits.not-one-token",
        ),
        (
            "/api/circuits/patch",
            {"clean": CLEAN, "corrupt": CORRUPT, "right": " Rome", "wrong": " Rome"},
            400,
            "error.circuits.same-answer",
        ),
        (
            "/api/circuits/patch",
            {"clean": "a " * 30, "corrupt": "b " * 30, "right": " Paris", "wrong": " Rome"},
            400,
            "error.circuits.web.patch-too-long",
        ),
        (
            "/api/circuits/attribute",
            {"text": "word " * 300, "token": " Paris"},
            400,
            "error.prompt.too-long",  # past the tiny model's context (128)
        ),
        (
            "/api/circuits/attribute",
            {"text": CLEAN, "token": " Paris", "position": 9},
            400,
            "error.check.no-position",
        ),
        ("/api/circuits/induction", {"layer": 7, "head": 0}, 400, "error.check.no-layer"),
        ("/api/circuits/induction", {"length": 101}, 422, "error.web.invalid-field"),
        ("/api/circuits/induction", {"length": 2.5}, 422, "error.web.invalid-field"),
        ("/api/circuits/patch", {"clean": CLEAN}, 422, "error.web.invalid-field"),
    ],
)
def test_bad_input_is_one_line_before_any_work(app, client, path, body, status, code):
    done = app.state.store.work.stats()["done"]
    refused(client, path, body, status, code)
    assert app.state.store.work.stats()["done"] == done  # nothing was queued


def test_the_pages_bound_on_attribution(client, monkeypatch):
    monkeypatch.setattr(s, "MAX_ATTRIBUTE_TOKENS", 4)
    answer = refused(
        client,
        "/api/circuits/attribute",
        {"text": CLEAN, "token": " Paris"},
        400,
        "error.circuits.web.attribute-too-long",
    )
    assert answer["params"] == {"n": 5, "most": 4}


def test_a_busy_model_answers_503(app, client):
    """While the model works (a job of the queue held here), an experiment that could not be
    answered within the server's limit is refused at once, with Retry-After."""
    store = app.state.store
    limit = store.work.limit_s
    release = threading.Event()
    job = store.work.submit(None, 1.0, lambda: release.wait(60))
    try:
        deadline = time.monotonic() + 60
        while job.state != "running":
            assert time.monotonic() < deadline, store.work.stats()
            time.sleep(0.005)
        store.work.limit_s = 1e-3  # any job queued behind it is past the limit
        body = {"clean": "The capital of Spain is", "corrupt": CORRUPT, "right": " Paris"}
        r = client.post("/api/circuits/patch", json={**body, "wrong": " Rome"})
        assert r.status_code == 503, r.text
        assert r.json()["code"].startswith("error.web.busy")
        assert int(r.headers["retry-after"]) >= 1
    finally:
        store.work.limit_s = limit
        release.set()
    assert job.future.result(timeout=60) is True


def test_the_page_is_served_with_the_catalogs_version_and_its_words(client):
    from lmscope import i18n
    from lmscope.web.pages import catalog_version

    r = client.get("/circuits")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    body = r.text
    assert f'<meta name="lmscope-catalog" content="{catalog_version()}"' in body
    assert '<script type="module" src="/bundle/circuits+model_menu.js?v=' in body
    for message in ("page.circuits.title", "page.circuits.patch.shows", "page.explainer-link"):
        assert i18n.text(message, "en").replace("'", "&#39;") in body, message
    # the other pages link to it
    assert 'href="/circuits"' in client.get("/").text
