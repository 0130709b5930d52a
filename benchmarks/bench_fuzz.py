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

The API fuzzer is ``lmscope.testing.fuzz`` and the schemathesis run
``lmscope.testing.schemathesis_api``. `run(...)` returns the counts (cases tried, failures) as
a dict; `markdown(result)` renders the BENCHMARKS.md section. The same checks run in CI with
small budgets.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from hypothesis import settings

from lmscope.testing.fuzz import CASE_TIME_LIMIT_S, fuzz_api

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
        from lmscope.testing import schemathesis_api

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
