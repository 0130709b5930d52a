"""The API fuzzer: requests generated from the JSON API's own OpenAPI schema, with hypothesis.

`fuzz_api(n)` reads ``/openapi.json`` of the app serving the shipped model (`fuzz_client()`, a
TestClient) and builds every request from it: bodies that follow the schema (`from_schema`,
with values that reach deep into the handlers: real token ids, positions inside the prompt,
existing layers and heads) and bodies that break it (`broken`: wrong types, missing or unknown
fields, out-of-range numbers, NaN, lone surrogates, non-JSON, random JSON). `check_response`
holds the contract: every answer is a 200 with strict JSON (no NaN, no Infinity; streamed
lines too) or a 4xx/503 ``{"error": "..."}`` of one line, within a time limit. It returns the
counts per path and status.

``tests/web/test_fuzz_api.py`` runs it with a small budget in CI; ``benchmarks/bench_fuzz.py``
with a larger one. Needs hypothesis (a test extra).
"""

from __future__ import annotations

import json
import math
import time
from collections import Counter
from functools import lru_cache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

CASE_TIME_LIMIT_S = 20.0  # one request slower than this is a hang
ERROR_STATUSES = {400, 404, 405, 413, 422, 503}

# --- JSON Schema -> hypothesis ---------------------------------------------------------------

ANY_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
WEIRD_TEXT = st.text(
    st.characters(codec=None, exclude_categories=()), max_size=40
) | st.sampled_from(["\ud800", "a\udfffb", "<|endoftext|>", "\x00", "\u202e", "🙂" * 50, " " * 300])


def _resolve(schema: dict, components: dict) -> dict:
    while "$ref" in schema:
        schema = components[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def from_schema(schema: dict, components: dict, hints: dict | None = None, name: str = ""):
    """Values that follow ``schema``; ``hints`` gives better strategies for named fields (ids
    of a real prompt, positions inside it) that are mixed in with the schema's own."""
    schema = _resolve(schema, components)
    own = _from_schema(schema, components, hints or {})
    if hints and name in hints:  # mostly the model-aware values, sometimes the schema's own
        return st.one_of(hints[name], hints[name], hints[name], own)
    return own


def _from_schema(schema: dict, components: dict, hints: dict):
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "anyOf" in schema or "oneOf" in schema:
        options = schema.get("anyOf") or schema["oneOf"]
        return st.one_of(*(from_schema(o, components, hints) for o in options))
    kind = schema.get("type")
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        low = schema.get("minimum", schema.get("exclusiveMinimum", -(2**64)) + 1)
        high = schema.get("maximum", schema.get("exclusiveMaximum", 2**64) - 1)
        return st.integers(int(math.ceil(low)), int(math.floor(high)))
    if kind == "number":
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        high = schema.get("maximum", schema.get("exclusiveMaximum"))
        return st.floats(
            min_value=low,
            max_value=high,
            exclude_min="exclusiveMinimum" in schema,
            exclude_max="exclusiveMaximum" in schema,
            allow_nan=False,
            allow_infinity=False,
        )
    if kind == "string":
        low, high = schema.get("minLength", 0), min(schema.get("maxLength", 200), 200)
        return st.text(min_size=low, max_size=high)
    if kind == "array":
        items = from_schema(schema.get("items", {}), components, hints)
        low, high = schema.get("minItems", 0), min(schema.get("maxItems", 40), 40)
        return st.lists(items, min_size=low, max_size=max(low, high))
    if kind == "object" or "properties" in schema:
        return _object(schema, components, hints)
    return ANY_JSON


def _object(schema: dict, components: dict, hints: dict):
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    fields = {k: from_schema(v, components, hints, k) for k, v in props.items()}
    optional = [k for k in props if k not in required]

    @st.composite
    def build(draw):
        out = {k: draw(fields[k]) for k in props if k in required}
        for k in optional:
            if draw(st.booleans()):
                out[k] = draw(fields[k])
        return out

    return build()


# --- breaking a valid body -----------------------------------------------------------------


@st.composite
def broken(draw, valid_body):
    """A valid body with one thing wrong, or something that is not a body at all."""
    body = draw(valid_body)
    how = draw(
        st.sampled_from(
            ["wrong-type", "drop", "unknown", "weird-number", "weird-text", "replace", "raw"]
        )
    )
    keys = sorted(body) if isinstance(body, dict) else []
    if how == "raw":
        raw = draw(
            st.sampled_from([b"", b"{", b"null", b"[]", b'"x"', b"\xff\xfe", b"{'a': 1}"])
            | st.binary(max_size=60)
        )
        return raw
    if how == "replace" or not keys:
        return draw(ANY_JSON)
    key = draw(st.sampled_from(keys))
    body = dict(body)
    if how == "drop":
        del body[key]
    elif how == "unknown":
        body[draw(st.text(min_size=1, max_size=10))] = draw(ANY_JSON)
    elif how == "wrong-type":
        body[key] = draw(ANY_JSON)
    elif how == "weird-number":
        body[key] = draw(
            st.sampled_from(
                [math.nan, math.inf, -math.inf, 1e308, -1e308, 2**63, -(2**63), 2**200, -1, 0.5]
            )
        )
    elif how == "weird-text":
        body[key] = draw(WEIRD_TEXT)
    return body


def encode_body(body) -> bytes:
    """JSON as a browser or script might send it: NaN and lone surrogates included (escaped)."""
    if isinstance(body, bytes):
        return body
    return json.dumps(body, ensure_ascii=True, allow_nan=True).encode("ascii")


# --- the app under test ----------------------------------------------------------------------


@lru_cache(maxsize=1)
def fuzz_client():
    """A TestClient on the shipped model, with itself offered for comparison, plus what the
    schema does not say: the model's facts and a real prompt's token ids."""
    from fastapi.testclient import TestClient

    import lmscope
    from lmscope.web import create_app

    model = lmscope.load("shakespeare")  # small and quick: the fuzz is about the API
    client = TestClient(create_app(model, compare=[model]))
    client.__enter__()
    spec = client.get("/openapi.json").json()
    ids = model.encode("ROMEO: But soft, what light through yonder window breaks?")
    return client, spec, model, ids


def operations(spec: dict) -> list[tuple[str, str, dict | None, list[dict]]]:
    """(method, path, body schema, parameters) for every API operation in the spec."""
    ops = []
    for path, methods in sorted(spec["paths"].items()):
        for method, op in methods.items():
            content = op.get("requestBody", {}).get("content", {})
            schema = content.get("application/json", {}).get("schema")
            ops.append((method.upper(), path, schema, op.get("parameters", [])))
    return ops


@st.composite
def filled_path(
    draw, path: str, parameters: list[dict], components: dict, hints: dict | None = None
) -> str:
    """The path with its {parameters} filled in (URL-quoted), and a query string: an optional
    query parameter is left out half the time (every explainer route takes ?model=, and a
    name drawn at random is refused before anything else is looked at), else drawn from its
    schema, from ``hints`` (by name), or weird."""
    from urllib.parse import quote, urlencode

    query = {}
    for param in parameters:
        optional = param.get("in") == "query" and not param.get("required")
        if optional and draw(st.booleans()):
            continue
        hinted = (hints or {}).get(param["name"]) if param.get("in") == "query" else None
        value = draw(
            st.one_of(
                from_schema(param.get("schema", {}), components),
                WEIRD_TEXT,
                st.sampled_from(["..", "../../etc/passwd", "%00", "serial-depth", "x.png"]),
                *([hinted] if hinted is not None else []),
            )
        )
        text = json.dumps(value) if not isinstance(value, str) else value
        if param.get("in") == "path":
            raw = text.encode("utf-8", "surrogatepass")  # lone surrogates travel as bytes
            path = path.replace("{" + param["name"] + "}", quote(raw, safe=""))
        elif param.get("in") == "query":
            query[param["name"]] = text
    text = "".join(c for c in urlencode(query, errors="replace") if ord(c) < 128)
    return path + (f"?{text}" if text else "")


def hints_for(model, ids: list[int]) -> dict:
    """Model-aware values for named fields, so valid bodies get past the 400 checks."""
    c = model.config
    n = len(ids)
    any_ids = st.lists(st.integers(0, c.vocab_size - 1), min_size=1, max_size=min(c.n_ctx, 64))
    return {
        "ids": st.one_of(*[st.just(ids)] * 4, st.sampled_from([ids[:1], ids[: n // 2]]), any_ids),
        "position": st.integers(0, n - 1),
        "layer": st.integers(0, c.n_layer - 1),
        "head": st.integers(0, c.n_head - 1),
        "start": st.integers(0, n),
        "n": st.integers(1, 8),
        "text": st.sampled_from(["To be, or not", "ROMEO:", "a", "\n\n", "中文"]) | WEIRD_TEXT,
        "ablate": st.lists(
            st.sampled_from(["L0H1", "L1H*", "attn0", "mlp1", "mlp*", "L9H9", "x", "L0H"]),
            max_size=4,
        ),
        "model": st.sampled_from(["shakespeare", "shakespeare (2)", "gpt2", ""]),
    }


@st.composite
def api_cases(draw, spec, hints):
    components = spec.get("components", {}).get("schemas", {})
    method, template, schema, parameters = draw(st.sampled_from(operations(spec)))
    path = draw(filled_path(template, parameters, components, hints))
    if schema is None:
        return method, template, path, None
    valid = from_schema(schema, components, hints)
    body = draw(st.one_of(valid, broken(valid)))
    return method, template, path, body


def strict_json(text: str):
    """json.loads that refuses NaN and Infinity, which are not JSON."""

    def refuse(name):
        raise ValueError(f"response holds {name}")

    return json.loads(text, parse_constant=refuse)


def check_response(method: str, path: str, body, response, seconds: float) -> None:
    """Raise AssertionError when an answer breaks the contract."""
    where = f"{method} {path} {encode_body(body)[:300]!r}"
    assert seconds < CASE_TIME_LIMIT_S, f"{where}: took {seconds:.1f} s"
    status = response.status_code
    assert status < 500, f"{where}: {status} {response.text[:300]}"
    if status != 200:
        assert status in ERROR_STATUSES, f"{where}: unexpected status {status}"
        error = strict_json(response.text).get("error")
        assert isinstance(error, str) and error.strip(), f"{where}: no error message"
        assert "\n" not in error and len(error) < 2000, f"{where}: error is not one line"
        return
    if path == "/api/generate":
        lines = [line for line in response.text.splitlines() if line]
        events = [strict_json(line) for line in lines]
        assert events and events[-1]["type"] in ("done", "error"), f"{where}: stream cut short"
        for event in events:
            assert event["type"] != "error", f"{where}: error event {event}"
        return
    strict_json(response.text)


def fuzz_api(examples: int, seed: int | None = None) -> dict:
    """Send ``examples`` generated requests; returns counts per path and status."""
    client, spec, model, ids = fuzz_client()
    statuses: Counter = Counter()
    paths: Counter = Counter()

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=seed is not None,
        suppress_health_check=list(HealthCheck),
    )
    @given(api_cases(spec, hints_for(model, ids)))
    def case(generated):
        method, template, path, body = generated
        start = time.perf_counter()
        if method == "GET":
            response = client.get(path)
        else:
            headers = {"content-type": "application/json"}
            response = client.post(path, content=encode_body(body), headers=headers)
        check_response(method, path, body, response, time.perf_counter() - start)
        statuses[response.status_code] += 1
        paths[template] += 1

    case()
    return {
        "cases": sum(statuses.values()),
        "statuses": dict(sorted(statuses.items())),
        "paths": dict(sorted(paths.items())),
        "operations": len(operations(spec)),
    }
