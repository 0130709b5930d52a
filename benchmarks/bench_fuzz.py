"""Fuzzing budgets larger than CI's: the JSON API from its own OpenAPI schema, the tokenizer,
sampling and traces, with hypothesis.

    python benchmarks/bench_fuzz.py [--api 3000] [--tokenizer 500] [--sampling 2000]
                                    [--trace 300] [--files 300] [--schemathesis 300] [--json]

The API fuzzer reads ``/openapi.json`` of the app serving the shipped model and builds every
request from it: bodies that follow the schema (with values that reach deep into the handlers:
real token ids, positions inside the prompt, existing layers and heads) and bodies that break it
(wrong types, missing or unknown fields, out-of-range numbers, NaN, lone surrogates, non-JSON,
random JSON). Every answer must be a 200 with strict JSON (no NaN, no Infinity; streamed lines
too) or a 4xx/503 ``{"error": "..."}`` of one line, within a time limit. The other targets are
the library properties of ``tests/*/test_fuzz_*.py`` run with bigger budgets (damaged model
files among them), and schemathesis against a served model (``schemathesis_api``).

`run(...)` returns the counts (cases tried, failures) as a dict; `markdown(result)` renders the
BENCHMARKS.md section. The same checks run in CI with small budgets.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
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
def filled_path(draw, path: str, parameters: list[dict], components: dict) -> str:
    """The path with its {parameters} filled in (URL-quoted), and a query string."""
    from urllib.parse import quote, urlencode

    query = {}
    for param in parameters:
        value = draw(
            st.one_of(
                from_schema(param.get("schema", {}), components),
                WEIRD_TEXT,
                st.sampled_from(["..", "../../etc/passwd", "%00", "serial-depth", "x.png"]),
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
    path = draw(filled_path(template, parameters, components))
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


# --- the library targets, with bigger budgets -------------------------------------------------


def _run_property(test, examples: int) -> int:
    """Run a ``tests/*/test_fuzz_*`` property with ``examples`` cases; returns how many ran."""
    calls = [0]
    inner = test.hypothesis.inner_test

    def counted(*args, **kwargs):
        calls[0] += 1
        return inner(*args, **kwargs)

    # The tests carry their CI settings; hypothesis reads them from this attribute per call
    # (applying @settings twice is refused), so a bigger budget replaces them for this run.
    ci = test._hypothesis_internal_use_settings
    test.hypothesis.inner_test = counted
    test._hypothesis_internal_use_settings = settings(
        ci, max_examples=examples, deadline=None, database=None
    )
    try:
        test()
    finally:
        test.hypothesis.inner_test = inner
        test._hypothesis_internal_use_settings = ci
    return calls[0]


def _properties(module_name: str) -> list:
    import importlib
    from pathlib import Path

    tests = Path(__file__).resolve().parents[1] / "tests"
    found = sorted(tests.rglob(f"{module_name}.py"))
    if not found:
        raise FileNotFoundError(f"no tests/**/{module_name}.py")
    for folder in (str(tests), str(found[0].parent)):  # tests/ holds the shared helpers
        if folder not in sys.path:
            sys.path.insert(0, folder)
    module = importlib.import_module(module_name)
    return [
        getattr(module, name)
        for name in sorted(dir(module))
        if name.startswith("test_") and hasattr(getattr(module, name), "hypothesis")
    ]


# Properties whose every case is heavy (200,000-character runs through four tokenizers).
CAPS = {"test_huge_runs_stay_fast": 100}


def fuzz_module(module_name: str, examples: int) -> dict:
    counts = {}
    for test in _properties(module_name):
        budget = min(examples, CAPS.get(test.__name__, examples))
        counts[test.__name__] = _run_property(test, budget)
    return {"cases": sum(counts.values()), "properties": counts}


TARGETS = {
    "tokenizer": "test_fuzz_tokenizer",
    "sampling": "test_fuzz_sampling",
    "trace": "test_fuzz_trace",
    "files": "test_fuzz_files",
}


def run(
    api: int = 3000,
    tokenizer: int = 500,
    sampling: int = 2000,
    trace: int = 300,
    files: int = 300,
    schemathesis_s: int = 300,
    *,
    log=print,
) -> dict:
    """Run every fuzz target with its budget (cases per property); returns the counts. A
    failing property raises, with hypothesis's shrunk example."""
    import datetime as dt

    import torch

    torch.set_num_threads(1)
    result = {"benchmark": "fuzz", "date": dt.date.today().isoformat(), "targets": {}}
    began = time.perf_counter()
    start = time.perf_counter()
    result["targets"]["api"] = {**fuzz_api(api), "seconds": round(time.perf_counter() - start)}
    log(f"api: {result['targets']['api']['cases']} cases")
    budgets = {"tokenizer": tokenizer, "sampling": sampling, "trace": trace, "files": files}
    for name, module in TARGETS.items():
        start = time.perf_counter()
        found = fuzz_module(module, budgets[name])
        result["targets"][name] = {**found, "seconds": round(time.perf_counter() - start)}
        log(f"{name}: {found['cases']} cases")
    result["cases"] = sum(t["cases"] for t in result["targets"].values())
    result["failures"] = 0  # a failure raises with the example; a finished run found none
    if schemathesis_s:
        from benchmarks import schemathesis_api

        result["schemathesis"] = schemathesis_api.run(budget_s=schemathesis_s, log=log)
    result["wall_s"] = round(time.perf_counter() - began)
    return result


def markdown(result: dict) -> str:
    """The BENCHMARKS.md section for these figures."""
    api = result["targets"]["api"]
    lines = [
        "## Fuzzing: bad input never crashes or hangs (`benchmarks/bench_fuzz.py`)",
        "",
        f"**{result['cases']:,} generated cases, {result['failures']} failures** "
        f"({result['wall_s']} s). Every API answer was a 200 with strict JSON (no NaN or "
        'Infinity, streamed lines included) or a 4xx/503 `{"error": "..."}` of one line, '
        f"within {CASE_TIME_LIMIT_S:g} s; every library call returned a valid result or raised "
        "lmscope's own one-line error.",
        "",
        "| target | cases | what is generated |",
        "| --- | --- | --- |",
        f"| JSON API ({api['operations']} operations from `/openapi.json`) | {api['cases']:,} | "
        "bodies that follow the schema (real token ids, positions, layers and heads mixed in) "
        "and bodies that break it: wrong types, missing or unknown fields, NaN, 1e308, 2^200, "
        "lone surrogates, random JSON, non-JSON bytes |",
    ]
    what = {
        "tokenizer": "arbitrary Unicode, lone surrogates, runs of up to 200,000 characters, "
        "special-token text; shipped BPE (tiktoken and pure Python), GPT-2, characters",
        "sampling": "logits of any length in float16/bfloat16/float32/float64 with huge, "
        "tiny, -inf, +inf and NaN entries; every parameter combination, valid or not",
        "trace": "token ids in and out of the vocabulary and context, probe name patterns, "
        "layers, keep_logits, top_k, steps, ablation specs; float32/float16/bfloat16",
        "files": "damaged model folders (Hugging Face GPT-2 and lmscope): bytes overwritten, "
        "0xFF runs (NaN), files cut or grown, safetensors headers rewritten (dtypes, shapes, "
        "offsets, length prefix), config.json/lmscope.json values replaced by any JSON (huge, "
        "negative, fractional, strings, null), keys dropped, non-JSON; each loads and traces "
        "or is one line",
    }
    for name in TARGETS:
        if name not in result["targets"]:
            continue  # a run from before this target existed
        target = result["targets"][name]
        lines.append(
            f"| {name} ({len(target['properties'])} properties) | "
            f"{target['cases']:,} | {what[name]} |"
        )
    statuses = ", ".join(f"{k}: {v:,}" for k, v in api["statuses"].items())
    lines += ["", f"API answers by status: {statuses}."]
    lines += schemathesis_lines(result.get("schemathesis"))
    lines += [
        "",
        "Reproduce: `python -m benchmarks --only fuzz` (or `python benchmarks/bench_fuzz.py`, "
        "budgets per target as flags); CI runs the same properties with small budgets "
        "(`tests/*/test_fuzz_*.py`).",
    ]
    return "\n".join(lines)


def schemathesis_lines(found: dict | None) -> list[str]:
    """The schemathesis run's totals, and the limits the schema cannot carry."""
    if not found:
        return []
    phases = ", ".join(found.get("phases", {}))
    n = found["failures"]
    verdict = f"{n} failure{'' if n == 1 else 's'}"
    lines = [
        "",
        f"**Schemathesis {found.get('version')}** against `lmscope serve` on loopback (a small "
        "GPT-2, itself offered for comparison, and a tiny char-LSTM): every check, positive and "
        f"negative data, phases {phases}, {found['seconds']:g} s: **{found['cases']:,} cases "
        f"over {found['operations']} operations, {verdict}**. A body over the server's 256 KiB "
        "limit is refused 413 before it is read (a status every operation declares), so 413 "
        "counts as rejecting schema-breaking data. Schema-valid requests the model alone can "
        "refuse are answered 400 in one line, and counted as accepted:",
        "",
    ]
    lines += [f"- {limit}" for limit in found.get("model_dependent", [])]
    warnings = found.get("warnings") or {}
    if warnings:
        noted = "; ".join(
            f"{k.replace('_', ' ')}: {len(v)} operation(s)" for k, v in warnings.items()
        )
        lines += ["", f"Schemathesis's warnings (not failures): {noted}."]
    lines += [
        "",
        "CI runs the same for 60 s (`tests/web/test_schemathesis.py`); "
        "`python -m benchmarks.schemathesis_api --budget N` runs it alone.",
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--api", type=int, default=3000, help="API requests")
    parser.add_argument("--tokenizer", type=int, default=500, help="cases per property")
    parser.add_argument("--sampling", type=int, default=2000, help="cases per property")
    parser.add_argument("--trace", type=int, default=300, help="cases per property")
    parser.add_argument("--files", type=int, default=300, help="cases per property")
    parser.add_argument("--schemathesis", type=int, default=300, help="seconds; 0: skip it")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    quiet = (lambda text: None) if args.json else print
    result = run(
        args.api,
        args.tokenizer,
        args.sampling,
        args.trace,
        args.files,
        args.schemathesis,
        log=quiet,
    )
    print(json.dumps(result, indent=1) if args.json else markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
