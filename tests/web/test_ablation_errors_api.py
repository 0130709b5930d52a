"""A refused ablation names what was wrong (the page says it in Chinese from the error's
catalog id and values, error_codes.py: it said only 服务器拒绝了这个请求（invalid_input））."""

from __future__ import annotations

import pytest


def ablate(client, spec: str) -> dict:
    body = {"ids": [464, 3290, 318], "ablate": [spec], "mode": "zero", "position": 2}
    r = client.post("/api/ablate", json=body)
    assert r.status_code == 400, r.text
    return r.json()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("spec", "what", "value"),
    [("L9H0", "layer", "9"), ("L0H99", "head", "99"), ("mlp7", "layer", "7")],
)
def test_an_ablation_of_a_part_that_does_not_exist_names_it(client, spec, what, value):
    model = client.get("/api/model").json()
    last = model["n_layer"] - 1 if what == "layer" else model["n_head"] - 1
    body = ablate(client, spec)
    assert body["code"] == f"error.ablation.no-{what}"
    assert body["params"] == {"spec": repr(spec), "value": value, "last": str(last)}
    assert body["error"] == f"{spec!r}: {what} {value} does not exist (0..{last})"


def test_an_ablation_the_parser_cannot_read_is_named(client):
    body = ablate(client, "foo")
    assert body["code"] == "error.ablation.unreadable" and body["params"] == {"spec": "'foo'"}
    assert body["error"].startswith("cannot read ablation 'foo'")
