"""A class at one server: concurrent clients against `lmscope serve` on loopback.

    python benchmarks/bench_load.py [--clients 32] [--seconds 60] [--cache-mb 128] [--json]
    python benchmarks/bench_load.py --model smollm2 --cache-mb 1024   # the real default model

Starts `lmscope serve` (``--model``, default `lmscope serve`'s own: SmolLM2 when installed)
in a subprocess on 127.0.0.1, measures each request kind alone (one client, the reference),
then lets ``clients`` simulated browsers loose for ``seconds``: each types a prompt (a fresh
slice of Shakespeare, or one of a few prompts the whole class shares), opens step views on it,
moves the sampling controls and generates. Every answer is checked: any status but 200, an
error event in a stream, a timeout or a dropped connection is an error. The server's resident
memory is sampled throughout. The goal: 0 errors and a p95 of every request but generation
<= 2 s.

The harness (the server, the learners, the figures) is ``lmscope.testing.load``; `run(...)`
returns every figure as a dict; `markdown(result)` renders the BENCHMARKS.md section.
"""

from __future__ import annotations

import argparse
import json
import sys

# the harness; restructure.py's A/B runs use server, _drive and _summary from here
from lmscope.testing.load import (  # noqa: F401 - re-exported
    GOAL_P95_MS,
    PAGE_LENS_SIZE,
    _drive,
    _summary,
    allowed_over,
    percentiles,
    run,
    server,
)


def markdown(result: dict) -> str:
    """The BENCHMARKS.md section for these figures."""
    loaded, alone, rss = result["loaded"], result["alone"], result["rss_mb"]
    lat = loaded["latency"]
    views = loaded.get("latency_without_generation", lat)
    n = result["leak_after"]
    served = result.get("served") or {}
    name = served.get("name") or result["model"]
    model = result["model"]
    if served.get("name"):
        model = f"{name}: {served['n_layer']} layers, d_model {served['d_model']}"
    title = "" if name.startswith("shakespeare") else f" with {name}"
    if result.get("dtype", "float32") != "float32":
        title += f" in {result['dtype']}"
    if result.get("join_s"):
        title += f", learners joining over {result['join_s']:g} s"
    lines = [
        f"## A class at one server: load on `lmscope serve`{title} (`benchmarks/bench_load.py`)",
        "",
        f"{result['clients']} simulated learners against one `lmscope serve` on 127.0.0.1 for "
        f"{result['seconds']:g} s ({model}, `--threads {result['server_threads']}`, "
        f"`--cache-mb {result['cache_mb']}`, at most {result['limits']['max_active']} API "
        f"requests in progress and a {result['limits']['wait_s']:g} s wait for the model). "
        "Each types a prompt (a fresh slice of Shakespeare, or one of a few the whole class "
        "shares), opens step views on it, moves the sampling controls and generates 1-40 "
        "tokens. A learner does not stop to read: the next request goes the moment the last "
        "one is answered, so the class asks for all the model work the server can do, a harsher "
        "test than people reading between clicks. The reference is the same mix from one client "
        "on the idle server, measured in the same run. " + _start_words(result),
        "",
        f"**{loaded['requests']:,} requests, {loaded['errors']} errors**; "
        f"{loaded['requests_per_s']:.1f} requests/s and "
        f"{loaded['generated_tokens_per_s']:.1f} generated tokens/s overall. Latency of "
        f"every request but generation: p50 {views['p50_ms']:.0f} ms, p95 "
        f"{views['p95_ms']:.0f} ms, p99 {views['p99_ms']:.0f} ms, max {views['max_ms']:.0f} ms; "
        f"all requests, generation streams (1-40 tokens each) included: p50 "
        f"{lat['p50_ms']:.0f} ms, p95 {lat['p95_ms']:.0f} ms, p99 {lat['p99_ms']:.0f} ms.",
        "",
        "| request | count | p50 alone | p50 | p95 | p99 | p50 loaded / alone |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for kind, row in loaded["by_kind"].items():
        ref = alone["by_kind"].get(kind, {}).get("p50_ms")
        ratio = result["p50_ratio_loaded_over_alone"].get(kind)
        lines.append(
            f"| {kind} | {row['n']:,} | {f'{ref:.0f} ms' if ref else '-'} | "
            f"{row['p50_ms']:.0f} ms | {row['p95_ms']:.0f} ms | {row['p99_ms']:.0f} ms | "
            f"{f'{ratio:.1f}x' if ratio else '-'} |"
        )
    first = loaded["first_token"]
    after = rss.get(f"after_{n}")
    lines += [
        "",
        "Generation is timed to the end of its stream; its first token arrived after "
        f"p50 {first.get('p50_ms', 0):.0f} ms, p99 {first.get('p99_ms', 0):.0f} ms. One "
        "forward pass runs at a time, so under load a request mostly waits for the model: "
        "the ratio column is that queue.",
        "",
        f"**Memory.** Server resident memory {rss['start']:.0f} MiB after the single-client "
        f"pass, {after:.0f} MiB after {n:,} requests under load, "
        f"{rss['end']:.0f} MiB at the end (peak {rss['peak']:.0f} MiB); the trace cache held "
        f"{loaded['cache']['bytes'] / 2**20:.0f} of {loaded['cache']['max_bytes'] / 2**20:.0f} "
        f"MiB in {loaded['cache']['entries']} entries."
        if after is not None
        else f"**Memory.** Server resident memory {rss['start']:.0f} MiB before the load, "
        f"{rss['end']:.0f} MiB after (peak {rss['peak']:.0f} MiB; fewer than {n:,} requests).",
    ]
    if loaded["errors"]:
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(loaded["errors_by_kind"].items()))
        refusals = all(": 503 " in e for e in loaded["error_examples"])
        what = " (every one shown is the work queue's 503 with a Retry-After)" if refusals else ""
        lines += ["", f"Errors by kind: {kinds}. Examples{what}:", ""]
        lines += [f"- `{e}`" for e in loaded["error_examples"]]
    lines += ["", *_by_window_lines(result), "", goal_line(result)]
    if cost := _first_wave_words(result):
        lines += ["", *cost]
    for note in result.get("notes") or []:  # what was observed, saved with the figures
        lines += ["", note]
    dtype = result.get("dtype", "float32")
    bench = "load" if name.startswith("shakespeare") else f"load-{name}"
    bench += {"float32": "", "bfloat16": "-bf16"}.get(dtype, f"-{dtype}")
    bench += "-joining" if result.get("join_s") else ""
    flags = f" --model {result['model']}" if served.get("name") else ""
    flags += f" --dtype {dtype}" if dtype != "float32" else ""
    flags += f" --cache-mb {result['cache_mb']}" if result["cache_mb"] != 128 else ""
    flags += f" --join-s {result['join_s']:g}" if result.get("join_s") else ""
    lines += [
        "",
        f"Reproduce: `python -m benchmarks --only {bench}` (or `python benchmarks/bench_load.py "
        f"--clients {result['clients']} --seconds {result['seconds']:g}{flags}`); "
        "`tests/web/test_server_load.py` runs a short version in CI.",
    ]
    return "\n".join(lines)


def _start_words(result: dict) -> str:
    join = result.get("join_s", 0.0)
    if not join:
        return (
            "All the learners start in the same instant, so every first trace is queued at "
            "once: a class pressing Run together."
        )
    gap = join / result["clients"]
    return (
        f"The learners join one by one over the first {join:g} s (one every {gap:.2g} s), as a "
        "class opening the page does; the run that starts them all in the same instant is "
        "reported on its own."
    )


def _by_window_lines(result: dict) -> list[str]:
    """Latency of every request but generation by when it was sent, and the count of answers
    over the goal by kind."""
    loaded = result["loaded"]
    windows = loaded.get("without_generation_by_window") or []
    if not windows:
        return []
    lines = [
        "| requests sent | count | p50 | p95 | max |",
        "| --- | --- | --- | --- | --- |",
    ]
    for w in windows:
        lines.append(
            f"| {w['from_s']:g}-{w['to_s']:g} s | {w['n']:,} | {w['p50_ms']:,.0f} ms | "
            f"{w['p95_ms']:,.0f} ms | {w['max_ms']:,.0f} ms |"
        )
    over = loaded.get("over_goal_by_kind", {})
    total = loaded.get("latency_without_generation", {}).get("n", 0)
    counted = ", ".join(f"{k} {n}" for k, n in over.items()) or "none"
    allowed = allowed_over(total)
    return [
        "Every request but generation, by when it was sent:",
        "",
        *lines,
        "",
        f"Answers over {GOAL_P95_MS / 1e3:g} s: {sum(over.values())} of {total:,} ({counted}); "
        f"a p95 within the goal allows {allowed}.",
    ]


def _first_wave_words(result: dict) -> list[str]:
    """What a simultaneous start costs, from the figures: the first traces' model work against
    the goal's 2 s (nothing when the learners joined over time or the goal was met)."""
    loaded = result["loaded"]
    trace = result["alone"]["by_kind"].get("trace", {}).get("p50_ms")
    total = loaded.get("latency_without_generation", {}).get("n", 0)
    late = loaded.get("over_goal_by_kind", {}).get("trace", 0)
    if result.get("join_s") or result["goal"]["met"] or not trace or not total:
        return []
    clients, goal_s, allowed = result["clients"], GOAL_P95_MS / 1e3, allowed_over(total)
    fit = int(GOAL_P95_MS // trace)
    must_wait = max(0, clients - fit)
    if must_wait > allowed:
        verdict = (
            f"more than the {allowed} a p95 leaves: by this estimate no order of the work "
            "meets the goal with a simultaneous start on this machine"
        )
    else:
        verdict = (
            f"within the {allowed} a p95 leaves, so the arithmetic alone does not rule the goal "
            "out; the learners answered first sent their lens and next prompts at once, which "
            "waited with the rest"
        )
    return [
        f"**What a simultaneous start costs.** Alone, a trace takes {trace:.0f} ms (p50): the "
        f"{clients} first traces sent in one instant are about {clients * trace / 1e3:.1f} s "
        f"of model work, and {goal_s:g} s holds about {fit} of median length, so about "
        f"{must_wait} must wait longer, {verdict}. The queue runs the shortest first, so as "
        f"many as can answer in time do; in this run {late} traces answered after {goal_s:g} "
        f"s ({late / total:.1%} of the {total:,} requests). The requests sent after the first "
        "wave are in the table above."
    ]


def goal_line(result: dict) -> str:
    """The goal (0 errors, p95 of every request but generation <= 2 s) and whether it held."""
    loaded = result["loaded"]
    p95 = loaded.get("latency_without_generation", loaded["latency"]).get("p95_ms", 0.0)
    errors_ok, p95_ok = loaded["errors"] == 0, p95 <= GOAL_P95_MS
    verdict = "met" if errors_ok and p95_ok else "missed"
    why = []
    why.append(f"{loaded['errors']} errors ({'met' if errors_ok else 'missed'})")
    why.append(
        f"p95 {p95 / 1e3:.2f} s, {p95 / GOAL_P95_MS:.2f}x the goal "
        f"({'met' if p95_ok else 'missed'})"
    )
    return (
        f"**Goal: 0 errors and a p95 of every request but generation <= "
        f"{GOAL_P95_MS / 1e3:g} s: {verdict}**; {', '.join(why)}."
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--cache-mb", type=int, default=128)
    parser.add_argument("--model", default=None, help="a model lmscope.load accepts")
    parser.add_argument("--threads", type=int, default=1, help="the server's torch threads")
    parser.add_argument("--dtype", default="float32", help="the server's precision (--dtype)")
    parser.add_argument(
        "--join-s", type=float, default=0.0, help="learners join over this many seconds"
    )
    parser.add_argument("--json", action="store_true", help="print every figure as JSON")
    args = parser.parse_args(argv)
    quiet = (lambda text: None) if args.json else print
    result = run(
        args.clients,
        args.seconds,
        cache_mb=args.cache_mb,
        model=args.model,
        threads=args.threads,
        dtype=args.dtype,
        join_s=args.join_s,
        log=quiet,
    )
    print(json.dumps(result, indent=1) if args.json else markdown(result))
    return 0 if result["loaded"]["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
