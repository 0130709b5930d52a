"""After the restructure (engine/, formats/, explain/, web routers): is anything slower?

    python -m benchmarks --only restructure        # or: python -m benchmarks.restructure

Two comparisons for the model, web and load benchmarks, ratios after / before:

- the figures saved before the restructure (``benchmarks/results/NAME.json`` at ``BEFORE``,
  the last commit before it) against the ones saved now (the latest run of each, a snapshot
  of its comparable figures taken here). The runs were made at different times on a shared
  machine, so each names its load average; the model's figures are ratios to transformers
  measured within each run, which carry across runs better than times;
- the code at ``BEFORE`` and the code at ``HEAD`` (both from ``git archive``, so edits in
  progress in the working tree play no part) run in turn in fresh processes, best of N each:
  GPT-2 small's forward and full trace at 16 and 128 tokens (with transformers' forward beside
  them as a gauge of the machine), the web API's response times (bench_web's ``measure_api``)
  and each request kind's latency on an idle ``lmscope serve`` (bench_load's one-client pass).
  Both sides share the machine's load.

A figure more than 15% worse counts as a slowdown (5% for response sizes).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "f107447"  # the last commit before the restructure
SLOWER = 1.15  # after/before above this (on a comparable figure) counts as a slowdown


# --- the comparable figures of each benchmark -------------------------------------------------


def _model(result: dict) -> dict:
    """lmscope over transformers, measured in the same run: comparable across runs. Rows of
    the float32/bfloat16 bench_model (what, dtype, tokens) get the earlier rows' names."""
    names = {
        "forward": "forward, {n} tokens",
        "trace": "full trace, {n} tokens (vs HF forward)",
        "trace+top20": "full trace + every position's top-20, {n} tokens",
    }
    figures = {}
    for row in result["rows"]:
        if "dtype" not in row:
            figures[row["what"]] = row["ratio"]
        elif row["dtype"] == "float32" and row["what"] in names:
            figures[names[row["what"]].format(n=row["tokens"])] = row["ratio"]
    for gen in result.get("generation") or []:
        if gen.get("dtype") == "float32":
            figures[f"greedy generation, {gen['tokens']} tokens (tokens/s)"] = gen["ratio"]
    return figures


def _first(value):
    return min(value) if isinstance(value, list) else value


def _web(result: dict) -> dict:
    figures = {}
    for kind, row in result.items():
        if isinstance(row, dict) and "first_trace_32_server_ms" in row:
            figures[f"{kind}: first 32-token response (ms)"] = _first(
                row["first_trace_32_server_ms"]
            )
            figures[f"{kind}: cached response (ms)"] = _first(row["cached_trace_32_server_ms"])
            figures[f"{kind}: 64-token response (KB)"] = round(
                _first(row["first_trace_64_bytes"]) / 1024, 1
            )
    return figures


def _load(result: dict) -> dict:
    loaded, alone = result["loaded"], result["alone"]
    views = loaded.get("latency_without_generation", loaded["latency"])
    figures = {
        f"{kind} alone, p50 (ms)": row["p50_ms"]
        for kind, row in alone["by_kind"].items()
        if row.get("p50_ms")
    }
    figures.update(
        {
            "under load: requests/s": loaded["requests_per_s"],
            "under load: p50 but generation (ms)": views["p50_ms"],
            "under load: p95 but generation (ms)": views["p95_ms"],
            "under load: errors": loaded["errors"],
            "peak resident memory (MiB)": result["rss_mb"]["peak"],
        }
    )
    return figures


FIGURES = {"model": _model, "web": _web, "load": _load}
HIGHER_IS_BETTER = ("tokens/s", "requests/s")


def _load_average(entry: dict) -> str:
    start = entry.get("machine", {}).get("load_average") or [None]
    end = entry.get("load_average_after") or start
    values = [v for v in (start[0], end[0]) if v is not None]
    if not values:
        return "not recorded"
    low, high = min(values), max(values)
    return f"{low:.1f}" if round(low, 1) == round(high, 1) else f"{low:.1f}-{high:.1f}"


# --- the same figures from the old code and this code, in turn --------------------------------

AB_WEB_KINDS = ("shakespeare-shaped", "small", "gpt2-small")
_AB_WEB = """
import json, torch
torch.set_num_threads({threads})
from benchmarks import bench_web as b
print(json.dumps({{k: b.measure_api(b.build_model(k), {repeats}) for k in {kinds!r}}}))
"""
_AB_MODEL = """
import json, tempfile, time, warnings, torch
torch.set_num_threads({threads})
from transformers import GPT2Config, GPT2LMHeadModel
import lmscope

with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
    warnings.simplefilter("ignore")
    torch.manual_seed(0)
    hf = GPT2LMHeadModel(GPT2Config(bos_token_id=None, eos_token_id=None)).eval()
    hf.save_pretrained(tmp)
    ours = lmscope.load(tmp)
net = ours.net if hasattr(ours, "net") else ours.gpt
gen = torch.Generator().manual_seed(0)
out = {{}}
with torch.no_grad():
    for n in (16, 128):
        ids = torch.randint(0, 50257, (1, n), generator=gen)
        fns = {{
            "hf": lambda: hf(ids),
            "forward": lambda: net(ids),
            "trace": lambda: ours.trace(ids[0].tolist()),
        }}
        times = {{k: [] for k in fns}}
        for fn in fns.values():
            fn()
        for _ in range({repeats}):
            for k, fn in fns.items():
                start = time.perf_counter()
                fn()
                times[k].append(time.perf_counter() - start)
        out[f"forward, {{n}} tokens (ms)"] = round(min(times["forward"]) * 1e3, 1)
        out[f"full trace, {{n}} tokens (ms)"] = round(min(times["trace"]) * 1e3, 1)
        out[f"transformers forward, {{n}} tokens (ms)"] = round(min(times["hf"]) * 1e3, 1)
print(json.dumps(out))
"""
_AB_LOAD = """
import asyncio, json, torch
from benchmarks import bench_load as b
with b.server("shakespeare", cache_mb=128, threads={threads}) as (url, pid):
    s = b._summary(asyncio.run(b._drive(url, 1, {seconds}, 1)))
print(json.dumps({{k: v["p50_ms"] for k, v in s["by_kind"].items() if v.get("p50_ms")}}))
"""


def _old_tree(commit: str, folder: Path) -> Path:
    archive = subprocess.run(
        ["git", "archive", commit, "src", "benchmarks"], cwd=ROOT, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def _in_tree(tree: Path, code: str, timeout: float = 1800) -> dict:
    import os

    env = {**os.environ, "PYTHONPATH": f"{tree / 'src'}{os.pathsep}{tree}", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise RuntimeError(f"A/B run in {tree} failed: {done.stderr.strip()[-1500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _ab_figures(name: str, out: dict) -> dict:
    if name == "web":
        return _web(out)
    if name == "model":
        return out
    return {f"{kind} alone, p50 (ms)": value for kind, value in out.items()}


def ab(
    name: str,
    rounds: int = 2,
    threads: int = 1,
    commit: str = BEFORE,
    after: str = "HEAD",
    log=print,
) -> dict:
    """The code at ``commit`` and at ``after`` (both from ``git archive``, so edits in progress
    in the working tree play no part) in turn, ``rounds`` times; the best figure of each side."""
    import tempfile

    if name == "web":
        code = _AB_WEB.format(threads=threads, repeats=5, kinds=AB_WEB_KINDS)
    elif name == "load":
        code = _AB_LOAD.format(threads=threads, seconds=15)
    elif name == "model":
        code = _AB_MODEL.format(threads=threads, repeats=5)
    else:
        raise ValueError(f"no A/B run for {name!r}; there is one for model, web and load")
    sides: dict[str, list[dict]] = {"before": [], "after": []}
    after_commit = subprocess.run(
        ["git", "rev-parse", "--short", after], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    with (
        tempfile.TemporaryDirectory(prefix="lmscope-before-") as tmp_old,
        tempfile.TemporaryDirectory(prefix="lmscope-after-") as tmp_new,
    ):
        old = _old_tree(commit, Path(tmp_old))
        new = _old_tree(after_commit, Path(tmp_new))
        for i in range(rounds):
            for side, tree in (("before", old), ("after", new)):
                sides[side].append(_ab_figures(name, _in_tree(tree, code)))
            log(f"{name} A/B round {i + 1}/{rounds} done")
    best = {
        side: {k: min(run[k] for run in runs if k in run) for k in runs[0]}
        for side, runs in sides.items()
    }
    return {
        "commit": commit,
        "after_commit": after_commit,
        "rounds": rounds,
        "threads": threads,
        **best,
        "runs": sides,
    }


# --- the two comparisons ---------------------------------------------------------------------


def saved_entry(name: str, commit: str | None = None, results: Path | None = None) -> dict:
    """A benchmark's saved entry: as committed at ``commit``, or the file in ``results``."""
    if commit is None:
        from benchmarks import suite

        return json.loads(((results or suite.RESULTS) / f"{name}.json").read_text("utf-8"))
    text = subprocess.run(
        ["git", "show", f"{commit}:benchmarks/results/{name}.json"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(text)


def _run_facts(entry: dict) -> dict:
    return {
        "date": entry.get("date"),
        "load_average": _load_average(entry),
        "arguments": entry.get("arguments"),
        "quick": entry.get("quick", False),
    }


def run(
    names=("model", "web", "load"),
    *,
    ab_rounds: dict | None = None,
    threads: int = 1,
    commit: str = BEFORE,
    results: Path | None = None,
    log=print,
) -> dict:
    """Both comparisons for each of ``names``; ``ab_rounds`` {name: rounds}, 0 skips one."""
    rounds = {"model": 2, "web": 2, "load": 3, **(ab_rounds or {})}
    out: dict = {"before_commit": commit, "slower_than": SLOWER, "benchmarks": {}}
    for name in names:
        old, new = saved_entry(name, commit), saved_entry(name, results=results)
        item = {
            "before": {**_run_facts(old), "figures": FIGURES[name](old["result"])},
            "after": {**_run_facts(new), "figures": FIGURES[name](new["result"])},
        }
        if rounds.get(name):
            item["ab"] = ab(name, rounds=rounds[name], threads=threads, commit=commit, log=log)
        out["benchmarks"][name] = item
    return out


def compare(name: str, before: dict, after: dict) -> list[dict]:
    """Each figure both sides have: before, after and after/before."""
    rows = []
    for key, old in before.items():
        new = after.get(key)
        if new is None or old is None:
            continue
        ratio = new / old if old else (1.0 if new == old else float("inf"))
        rows.append({"what": key, "before": old, "after": new, "ratio": ratio})
    return rows


def _slower(name: str, row: dict) -> bool:
    """A figure worse by more than the noise margin."""
    what = row["what"]
    if name == "model" and "tokens/s" in what:  # generation: lmscope/transformers tokens/s
        return row["ratio"] < 1 / SLOWER
    if any(h in what for h in HIGHER_IS_BETTER):
        return row["ratio"] < 1 / SLOWER
    if "errors" in what:
        return row["after"] > row["before"]
    if "(KB)" in what:
        return row["ratio"] > 1.05
    return row["ratio"] > SLOWER


UNITS = ("ms", "KB", "MiB", "tokens/s")


def _item(row: dict) -> str:
    what, unit = row["what"], ""
    if what.endswith(")") and " (" in what and what[:-1].rsplit(" (", 1)[1] in UNITS:
        what, unit = what[:-1].rsplit(" (", 1)
    old, new = row["before"], row["after"]
    if not unit and max(abs(old), abs(new)) < 10 and not float(old).is_integer():
        return f"{what} {old:.2f}x -> {new:.2f}x ({row['ratio']:.2f}x)"  # ratios to a reference
    whole = float(old).is_integer() and float(new).is_integer()
    digits = 0 if whole or max(abs(old), abs(new)) >= 20 else 1
    unit = f" {unit}" if unit else ""
    return f"{what} {old:,.{digits}f} -> {new:,.{digits}f}{unit} ({row['ratio']:.2f}x)"


def _verdict(name: str, rows: list[dict]) -> tuple[str, list[dict]]:
    slower = [r for r in rows if _slower(name, r)]
    if not slower:
        return f"no figure more than {SLOWER - 1:.0%} worse", slower
    return f"{len(slower)} of {len(rows)} figures more than {SLOWER - 1:.0%} worse", slower


TITLES = {
    "model": "GPT-2 small vs transformers (`bench_model`)",
    "web": "web API response times (`bench_web`)",
    "load": "a class at one server, shakespeare (`bench_load`)",
}
WHAT_SAVED = {
    "model": "lmscope over transformers within each run (generation: tokens/s over "
    "transformers'; lower is better for the rest)",
    "web": "server time of the responses (TestClient), and sizes",
    "load": "one client on the idle server (alone), and 32 learners for 60 s",
}


def _wrap(text: str) -> str:
    return textwrap.fill(text, width=100, break_on_hyphens=False, break_long_words=False)


def markdown(result: dict) -> str:
    commit = result["before_commit"]
    lines = [
        f"## After the restructure: {commit} against now (`benchmarks/restructure.py`)",
        "",
        _wrap(
            "The issue asks that the benchmarks show no slowdown after the code was reorganised "
            "into engine/, formats/, explain/ and web routers. Two comparisons, ratios after / "
            f"before; a figure more than {result['slower_than'] - 1:.0%} worse counts as "
            "slower. **Saved runs**: the figures saved at "
            f"{commit} (the last commit before the restructure) against the latest saved run. "
            f"**Old and new code in turn**: the code at {commit} and at HEAD (git archives) in "
            "fresh processes, alternately, best of each side, one torch thread, so both share "
            "the machine's load at the time."
        ),
    ]
    for name, item in result["benchmarks"].items():
        b, a = item["before"], item["after"]
        rows = compare(name, b["figures"], a["figures"])
        verdict, _ = _verdict(name, rows)
        lines += [
            "",
            f"**{TITLES.get(name, name)}.** "
            + _wrap(
                f"Saved runs ({WHAT_SAVED.get(name, '')}; before {b['date']}, load average "
                f"{b['load_average']}; after {a['date']}{' quick' if a['quick'] else ''}, load "
                f"average {a['load_average']}): {verdict}. "
                + "; ".join(_item(r) for r in rows)
                + "."
            ),
        ]
        ab_run = item.get("ab")
        if ab_run:
            ab_rows = compare(name, ab_run["before"], ab_run["after"])
            gauge = [r for r in ab_rows if r["what"].startswith("transformers")]
            ab_rows = [r for r in ab_rows if r not in gauge]
            verdict, _ = _verdict(name, ab_rows)
            text = (
                f"Old and new code in turn ({ab_run['commit']} and {ab_run['after_commit']}, "
                f"{ab_run['rounds']} rounds): {verdict}. "
                + "; ".join(_item(r) for r in ab_rows)
                + "."
            )
            if gauge:
                text += (
                    " The same transformers code timed beside each, a gauge of the machine: "
                    + "; ".join(_item(r) for r in gauge)
                    + "."
                )
            lines += ["", _wrap(text)]
    if result.get("notes"):
        lines += ["", _wrap(" ".join(result["notes"]))]
    lines += [
        "",
        _wrap(
            "Reproduce: `python -m benchmarks --only restructure` (after rerunning model, web "
            "and load; the old code's side needs the git history)."
        ),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m benchmarks.restructure")
    parser.add_argument("names", nargs="*", default=list(FIGURES), choices=list(FIGURES))
    parser.add_argument("--rounds", type=int, default=None, help="A/B rounds (0: none)")
    args = parser.parse_args(argv)
    rounds = None if args.rounds is None else {n: args.rounds for n in args.names}
    print(markdown(run(args.names, ab_rounds=rounds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
