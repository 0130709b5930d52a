"""The schema tells the truth (issue 16, item 6): request bodies are strict (no bool, int or
string coercion), the bounds the schema can carry are in it (ids >= 0, exactly one of text and
ids), every status an operation can answer is declared, a missing lab result is a 404, and a
405 says which methods are allowed. ``test_schemathesis.py`` checks all of it from outside."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def schema(client) -> dict:
    return client.get("/openapi.json").json()


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/tokenizer", {"ids": [0], "position": False}),  # accepted as 0 before
        ("/api/tokenizer", {"ids": [0], "position": "0"}),
        ("/api/tokenizer", {"ids": [True], "position": 0}),
        ("/api/tokenizer", {"ids": [1.5], "position": 0}),
        ("/api/tokenizer", {"ids": [-1], "position": 0}),
        ("/api/pool", {"ids": [1], "position": 0, "sampling": {"greedy": 0}}),
        ("/api/pool", {"ids": [1], "position": 0, "sampling": {"top_k": "5"}}),
        ("/api/generate", {"ids": [1], "stop_at_eot": 0}),
        ("/api/generate", {"ids": [1], "n": 2.5}),
        ("/api/trace", {"text": "a", "ids": [1]}),
        ("/api/trace", {"text": "a", "ids": None}),
        ("/api/trace", {"chat": 1, "text": "a"}),
        ("/api/trace", {}),
    ],
)
def test_no_coercion_between_types(client, path, body):
    r = client.post(path, json=body)
    assert r.status_code == 422, r.text
    assert r.json()["error"]


def test_numbers_are_json_numbers(client):
    """JSON has one number type: a float field takes 1, an integer field takes 1.0 (JSON
    Schema counts it as an integer), never 1.5, true or "1"."""
    body = {"ids": [1], "position": 0, "sampling": {"temperature": 1, "top_p": 1}}
    assert client.post("/api/pool", json=body).status_code == 200
    body = {"ids": [1.0, 2.0], "position": 1.0, "sampling": {"top_k": 5.0}}
    assert client.post("/api/pool", json=body).status_code == 200


@pytest.mark.slow
def test_the_schema_carries_the_bounds_it_can(schema):
    bodies = schema["components"]["schemas"]
    for name in ("TraceRequest", "PositionRequest", "LayerRequest", "GenerateRequest"):
        ids = bodies[name]["properties"]["ids"]
        assert ids["items"] == {"type": "integer", "minimum": 0, "maximum": 2**31 - 1}, name
        assert ids["minItems"] == 1
    trace = bodies["TraceRequest"]
    assert trace["oneOf"] == [{"required": ["text"]}, {"required": ["ids"]}]
    assert trace["properties"]["text"]["type"] == "string"  # null is refused, not "no text"


def test_every_operation_declares_what_it_can_answer(schema):
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            declared = set(operation["responses"])
            assert {"200", "400", "413", "422", "503"} <= declared, (method, path, declared)
            if path.startswith("/api/lab/"):
                assert "404" in declared, path
            retry = operation["responses"]["503"].get("headers", {})
            assert "Retry-After" in retry, (method, path)


def test_a_missing_lab_result_or_plot_is_a_404(client):
    for path in ("/api/lab/nothing", "/api/lab/race/plot/none.png", "/api/lab/race?source=local"):
        r = client.get(path)
        if path.endswith("local") and r.status_code == 200:
            continue  # this machine has a local race result
        assert r.status_code == 404, (path, r.text)


def test_every_405_says_which_methods_are_allowed(client, schema):
    for path, operations in schema["paths"].items():
        concrete = path.replace("{name}", "race").replace("{file}", "x.png")
        r = client.request("TRACE", concrete)
        assert r.status_code == 405, (path, r.status_code)
        allowed = {m.strip() for m in r.headers["allow"].split(",")}
        assert {m.upper() for m in operations} <= allowed, (path, allowed)
