"""Error answers carry the catalog id of their message and its values (web/error_codes.py), so
the page renders them in its own language; the line itself is English unless the request asks
for another (?lang=, Accept-Language). HTTP's own errors have ids of their own."""

from __future__ import annotations

import re

import pytest
from fastapi import FastAPI, Query
from fastapi.testclient import TestClient
from pydantic import BaseModel, ConfigDict, Field

from lmscope.errors import InvalidInputError
from lmscope.i18n import Message
from lmscope.i18n.pseudo import CLOSE, OPEN
from lmscope.web.error_codes import accepted_language, error_body, json_value
from lmscope.web.errors import NotFound, add_error_handlers
from lmscope.web.limits import Busy
from lmscope.web.middleware import BodyLimit
from lmscope.web.schemas import TraceRequest


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(..., min_length=1)
    k: int = Field(3, ge=1, le=9)


@pytest.fixture(scope="module")
def client():
    app = FastAPI()
    add_error_handlers(app)
    app.add_middleware(BodyLimit, max_bytes=2048)

    @app.get("/missing")
    def missing():
        raise InvalidInputError("error.no-such-file", name="x/y")

    @app.get("/gone")
    def gone():
        raise NotFound("error.web.no-such-step", key="'nine'")

    @app.get("/busy")
    def busy():
        raise Busy("error.web.busy.queued", 7, wait=8, limit=10, retry=7)

    @app.get("/bug")
    def bug():
        raise ZeroDivisionError("oops")

    @app.get("/query")
    def query(k: int = Query(..., ge=1)):
        return {"k": k}

    @app.post("/body")
    def body(req: Body):
        return {"ok": True}

    @app.post("/trace")
    def trace(req: TraceRequest):
        return {"ok": True}

    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


def test_a_library_error_is_its_catalog_id_and_values(client):
    r = client.get("/missing")
    assert r.status_code == 400
    assert r.json() == {
        "error": "no such file or folder: x/y",
        "code": "error.no-such-file",
        "params": {"name": "x/y"},
    }


def test_the_line_is_in_the_language_the_request_asks_for(client):
    english = client.get("/missing").json()
    chinese = client.get("/missing?lang=zh").json()
    assert chinese["code"] == english["code"] and chinese["params"] == english["params"]
    assert chinese["error"] != english["error"] and "x/y" in chinese["error"]
    assert re.search(r"[\u4e00-\u9fff]", chinese["error"])
    by_header = client.get("/missing", headers={"accept-language": "zh-CN,zh;q=0.9,en;q=0.8"})
    assert by_header.json()["error"] == chinese["error"]
    pseudo = client.get("/missing?lang=pseudo").json()["error"]
    assert pseudo.startswith(OPEN) and pseudo.endswith(CLOSE)
    # the query wins over the header; an unknown language is English
    assert client.get("/missing?lang=en", headers={"accept-language": "zh"}).json() == english
    assert client.get("/missing?lang=klingon").json() == english


def test_accept_language_takes_the_best_weighted_language_lmscope_speaks():
    assert accepted_language("") == "en"
    assert accepted_language("fr-FR,fr;q=0.9") == "en"
    assert accepted_language("fr;q=1, zh;q=0.5, en;q=0.4") == "zh"
    assert accepted_language("en;q=0.5, zh-Hans;q=0.8") == "zh"
    assert accepted_language("zh;q=0, en") == "en"
    assert accepted_language("*") == "en"


@pytest.mark.parametrize(
    ("path", "status", "code", "params"),
    [
        ("/nothing/here", 404, "error.web.not-found", {"path": "/nothing/here"}),
        ("/gone", 404, "error.web.no-such-step", {"key": "'nine'"}),
        ("/bug", 500, "error.web.internal", {"name": "ZeroDivisionError"}),
        ("/busy", 503, "error.web.busy.queued", {"wait": 8, "limit": 10, "retry": 7}),
        ("/query?k=0", 422, "error.web.invalid-field", None),
    ],
)
def test_http_errors_have_ids_of_their_own(client, path, status, code, params):
    r = client.get(path)
    body = r.json()
    assert r.status_code == status and body["code"] == code, body
    if params is not None:
        assert body["params"] == params
    if status == 503:
        assert r.headers["retry-after"] == "7" and body["error"].endswith("try again in 7 s")


def test_a_method_not_allowed_names_it(client):
    r = client.post("/missing")
    assert r.status_code == 405 and r.headers["allow"] == "GET"
    assert r.json()["code"] == "error.web.method-not-allowed"
    assert r.json()["params"] == {"method": "POST", "path": "/missing"}
    assert r.json()["error"] == "POST is not allowed on /missing"


def test_a_body_too_large_or_not_json(client):
    r = client.post("/body", content=b"{" + b" " * 4000 + b"}")
    assert r.status_code == 413 and r.json()["code"] == "error.web.body-too-large"
    assert r.json()["params"] == {"kib": 2}

    def chunks():  # no Content-Length: refused while it streams in
        yield from (b" " * 1000 for _ in range(4))

    r = client.post("/body", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.json()["code"] == "error.web.body-too-large"
    r = client.post("/body", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 422 and r.json()["code"] == "error.web.bad-json"
    assert r.json()["error"] == "the request body is not valid JSON"


def test_a_body_that_breaks_the_schema_names_its_field_and_problem(client):
    r = client.post("/body", json={"text": ""})
    body = r.json()
    assert r.status_code == 422 and body["code"] == "error.web.invalid-field"
    assert body["params"] == {
        "field": "text",
        "problem": {"code": "error.web.schema.string-too-short", "params": {"min_length": 1}},
    }
    assert body["error"] == "text: String should have at least 1 character"
    r = client.post("/body", json={"text": "a", "k": 10, "extra": 1}).json()
    assert r["code"] == "error.web.invalid-field.more" and r["params"]["more"] == 1
    assert r["error"] == "k: Input should be less than or equal to 9 (and 1 more problem)"
    zh = client.post("/body?lang=zh", json={"text": "a", "k": 10, "extra": 1}).json()["error"]
    assert zh == "k：输入应不大于 9（另有 1 处问题）"
    missing = client.post("/body", json={}).json()
    assert missing["error"] == "text: Field required"


def test_a_validators_own_error_is_its_catalog_message(client):
    r = client.post("/trace", json={}).json()
    assert r["code"] == "error.web.invalid-body"
    assert r["params"] == {"problem": {"code": "error.web.text-or-ids", "params": {}}}
    assert "exactly one of 'text' or 'ids'" in r["error"]
    r = client.post("/trace", json={"ids": [1], "chat": True}).json()
    assert r["params"]["problem"]["code"] == "error.web.chat-needs-text"


def test_params_are_json_values():
    assert json_value(3) == 3 and json_value(0.5) == 0.5 and json_value(True) is True
    assert json_value(float("nan")) == "nan"
    assert json_value(Message("error.web.part.an-lstm")) == {
        "code": "error.web.part.an-lstm",
        "params": {},
    }
    error = InvalidInputError(
        "error.web.rnn-no-such-values",
        arch=Message("error.web.part.an-lstm"),
        kind="'z'",
        known="h, c",
    )
    body = error_body(error)
    assert body["error"] == "an LSTM has no 'z' values; use one of h, c"
    assert error_body(error, "zh")["error"] == "LSTM 没有 'z' 值；请用 h, c 之一"
    assert body["params"]["arch"] == {"code": "error.web.part.an-lstm", "params": {}}


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("get", "/nothing/here", None),
        ("post", "/missing", None),
        ("get", "/bug", None),
        ("get", "/busy", None),
        ("get", "/query?k=0", None),
        ("post", "/body", {"text": "", "extra": 1}),
        ("post", "/trace", {}),
    ],
)
def test_every_http_error_is_said_in_the_pseudo_language(client, method, path, body):
    """Under ?lang=pseudo a Latin word outside the brackets is a text outside the catalog;
    names (the path, the field, the method, the error's class) stay as they are."""
    sep = "&" if "?" in path else "?"
    kwargs = {} if body is None else {"json": body}
    said = getattr(client, method)(f"{path}{sep}lang=pseudo", **kwargs).json()["error"]
    while re.search(f"{OPEN}[^{OPEN}{CLOSE}]*{CLOSE}", said):
        said = re.sub(f"{OPEN}[^{OPEN}{CLOSE}]*{CLOSE}", " ", said)
    names = {"nothing", "here", "POST", "missing", "ZeroDivisionError", "text", "query", "k"}
    assert [w for w in re.findall(r"[A-Za-z]{2,}", said) if w not in names] == [], said
