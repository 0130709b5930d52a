"""Bursts at one server: N heavy requests at the same instant, and cheap ones during them.

    python -m benchmarks.burst [--sizes 100,300,1000] [--tokens 1000] [--src DIR] [--json]

Starts `lmscope serve` on 127.0.0.1 with a small random GPT-2 (2 layers, 4 heads, d_model 64,
GPT-2's 50,257-token vocabulary, 1,024 positions: the shape of issue 16's probe), then sends
``size`` concurrent ``POST /api/trace`` with distinct ``tokens``-token prompts (each one
forward pass and its per-position predictions, about a second of model time on 2 busy cores)
while one client asks for the cheap things a page needs (``GET /api/model``, ``/api/steps``,
a static file, ``/docs``) one after another. Every answer is recorded: its status, when it
came, and the ``Retry-After`` of a 503. The promise checked: every heavy request is answered
200 or 503 within the server's wait limit (60 s by default), and no cheap one waits for the
model (under 1 s).

``--src`` runs another copy of lmscope's source (``git archive <commit> src | tar -x -C DIR``)
for the figures before a change. The harness is ``lmscope.testing.burst``: `run_bursts(...)`
returns the figures; `markdown(result)` renders them. Only loopback traffic, bounded in count
and time.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

from lmscope.testing.burst import RESTED_S, SHAPE, batching, run_bursts

BEFORE = "281fbc0^"  # the last commit before the work queue (issue 16)
ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def source(commit: str):
    """lmscope's ``src`` at ``commit``, in a temporary folder (``git archive``): the figures
    of a commit, whatever the working tree holds while they are measured."""
    with tempfile.TemporaryDirectory(prefix="lmscope-src-") as tmp:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", commit, "src"], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        yield tmp


def run(
    sizes=(100, 300, 1000),
    *,
    before: str | None = BEFORE,
    after: str = "HEAD",
    workers_size: int | None = 300,
    batch: bool = True,
    tokens: int = 1000,
    limit_s: float = 60.0,
    log=print,
) -> dict:
    """The bursts against ``after`` (and ``before``, the same way), the same burst with two
    worker processes, and the batching measurement: BENCHMARKS.md's figures."""
    result = {"benchmark": "burst", "before_commit": before, "after_commit": after}
    for name, commit in (("after", after), ("before", before)):
        if commit is None:
            continue
        with source(commit) as src:
            result[name] = run_bursts(sizes, tokens=tokens, limit_s=limit_s, src=src, log=log)
            if name == "after" and workers_size:
                two = run_bursts(
                    (workers_size,), tokens=tokens, limit_s=limit_s, src=src, workers=2, log=log
                )
                result["workers"] = {
                    "size": workers_size,
                    "1": result["after"]["bursts"].get(str(workers_size)),
                    "2": two["bursts"][str(workers_size)],
                }
    result["model"], result["tokens"], result["limit_s"] = SHAPE, tokens, limit_s
    if batch:
        result["batching"] = batching(log=log)
    return result


def markdown(result: dict) -> str:
    """The BENCHMARKS.md section: bursts before and after, two workers, batching."""
    shape = result["model"]
    lines = [
        "## A class at one server: bursts of heavy requests (`benchmarks/burst.py`)",
        "",
        f"N concurrent `POST /api/trace` sent at the same instant to `lmscope serve --threads 1` "
        f"on 127.0.0.1, each a distinct {result['tokens']:,}-token prompt for a random GPT-2 "
        f"({shape['n_layer']} layers, {shape['n_head']} heads, d_model {shape['n_embd']}, "
        "GPT-2's 50,257-token vocabulary: one forward pass and its per-position predictions, "
        f"{_model_time(result.get('after'))} of model time each on these busy cores), while "
        "another process asks for the cheap things a page needs (`GET /api/model`, "
        "`/api/steps`, a static file, `/docs`) one after another. Latencies are the client's, "
        "from sending a request to the end of its answer. The server's limit is "
        f"{result['limit_s']:g} s. Before: {_before_words(result.get('before_commit'))}; "
        "after: the work queue of `lmscope.web.work`. Both ran in turn in one run, each burst "
        "against a fresh server, so they share the machine's load (other people's tests and "
        "benchmarks on the same 2 cores; the load average is below).",
        "",
        "| burst | code | first answer | p50 | p95 | p99 | max | 200 | 503 | past the limit | "
        "cheap p50 | cheap max | cheap over 1 s |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for size in result.get("after", {}).get("bursts", {}):
        for name in ("before", "after"):
            found = result.get(name, {}).get("bursts", {}).get(size)
            if found:
                lines.append(_row(size, name, found))
    lines += _promise_lines(result)
    lines += _workers_lines(result.get("workers"))
    lines += _batching_lines(result.get("batching"))
    lines += [
        "",
        "Reproduce: `python -m benchmarks --only burst` (or `python -m benchmarks.burst "
        "--sizes 100,300,1000 [--src DIR]`); `tests/web/test_burst.py` runs the 100-request "
        "burst in CI (with `--max-wait 20`).",
    ]
    return "\n".join(lines)


def _s(value) -> str:
    return "-" if value is None else f"{value:.2f} s" if value < 10 else f"{value:.0f} s"


def _row(size: str, name: str, found: dict) -> str:
    lat, cheap, st = found["latency"], found["cheap"], found["statuses"]
    return (
        f"| {int(size):,} | {name} | {_s(found['first_answer_s'])} | {_s(lat.get('p50_s'))} | "
        f"{_s(lat.get('p95_s'))} | {_s(lat.get('p99_s'))} | {_s(lat.get('max_s'))} | "
        f"{st.get('200', 0):,} | {st.get('503', 0):,} | {found['past_limit']:,} | "
        f"{_s(cheap.get('p50_s'))} | {_s(cheap.get('max_s'))} | "
        f"{found.get('cheap_over_1s', 0):,} of {cheap.get('n', 0):,} |"
    )


def _before_words(commit: str | None) -> str:
    if not commit:
        return "not measured in this run"
    return f"`{commit}`, every model request in FastAPI's 40-thread pool waiting for the model gate"


def _model_time(after: dict | None) -> str:
    """Seconds of model time per answered request, from the spacing of the 200s after the
    change (one job at a time): (last 200 - first 200) / (answered - 1), per burst."""
    spans = []
    for found in (after or {}).get("bursts", {}).values():
        ok = found.get("latency_200", {})
        if ok.get("n", 0) > 1:
            spans.append((ok["max_s"] - found["first_200_s"]) / (ok["n"] - 1))
    if not spans:
        return "seconds"
    low, high = min(spans), max(spans)
    return f"about {low:.1f} s" if round(low, 1) == round(high, 1) else f"{low:.1f}-{high:.1f} s"


def _promise_lines(result: dict) -> list[str]:
    """What the figures after the change say of the promise: every heavy request answered
    200 or 503 within the limit, no cheap one over 1 s."""
    after = result.get("after", {}).get("bursts", {})
    if not after:
        return []
    held, broken = [], []
    for size, found in after.items():
        late, slow = found["past_limit"], found.get("cheap_over_1s", 0)
        if not late and not slow:
            held.append(f"{int(size):,}")
            continue
        what = []
        if late:
            what.append(f"{late} heavy request(s) past the limit or not 200/503")
        if slow:
            what.append(
                f"{slow} cheap request(s) over 1 s (the slowest {_s(found['cheap']['max_s'])})"
            )
        broken.append(f"at {int(size):,}, {' and '.join(what)}")
    verdict = f"held at {', '.join(held)}" if held else "held at no burst size"
    if broken:
        verdict += "; broken " + "; ".join(broken)
    refusals = ", ".join(
        f"{_s(f.get('latency_503', {}).get('p50_s'))} at {int(n):,} "
        f"(Retry-After {_retry(f)}, max {_s(f.get('latency_503', {}).get('max_s'))})"
        for n, f in after.items()
    )
    return [
        "",
        f"**The promise after the change** (every heavy request answered 200 or 503 within "
        f"{result['limit_s']:g} s, no cheap request over 1 s): {verdict}. The 503s came in p50 "
        f"{refusals}. A 503 long after the burst's start is a job the queue took, then "
        "withdrew once the measured rate made it late; the later p50 at 1,000 is the time one "
        "event loop on two busy cores takes to read the whole burst before refusing it.",
    ]


def _retry(found: dict) -> str:
    r = found.get("retry_after_s", {})
    if not r.get("n"):
        return "-"
    return f"{r['p50_s']:g} s" if r["p50_s"] == r["max_s"] else f"{r['p50_s']:g}-{r['max_s']:g} s"


def _workers_lines(workers: dict | None) -> list[str]:
    if not workers or not workers.get("1") or not workers.get("2"):
        return []
    one, two = workers["1"], workers["2"]
    mem = two.get("memory", {}).get("after", {})
    each = ", ".join(f"{m:.0f}" for m in mem.get("workers_mb", []))
    single = one.get("memory", {}).get("after", {}).get("server_mb")
    rested = one.get("memory", {}).get("rested", {}).get("server_mb")
    rested_words = (
        f" ({rested:.0f} MiB {RESTED_S:g} s after the burst, its queue idle)" if rested else ""
    )
    return [
        "",
        f"**`--workers 2`** (uvicorn's process manager, each worker its own model, cache and "
        f"queue, one thread each) on the {workers['size']:,}-request burst: "
        f"{two['statuses'].get('200', 0)} answered 200 within the limit against "
        f"{one['statuses'].get('200', 0)} with one worker, first answer "
        f"{_s(two['first_answer_s'])} against {_s(one['first_answer_s'])}, cheap max "
        f"{_s(two['cheap'].get('max_s'))} against {_s(one['cheap'].get('max_s'))} "
        f"({two.get('cheap_over_1s', 0)} and {one.get('cheap_over_1s', 0)} over 1 s). Resident "
        f"memory: {single:.0f} MiB for one server{rested_words}; with two workers {each} MiB "
        f"each and "
        f"{mem.get('server_mb', 0):.0f} MiB for the manager. On these 2 shared cores a second "
        "worker has little CPU left to add; on a machine with free cores each worker adds its "
        "share of model throughput for its share of memory.",
    ]


def _batching_lines(batching: dict | None) -> list[str]:
    from lmscope.web.store import BATCH_PROMPT_TOKENS, BATCH_TOKENS

    if not batching:
        return []
    lines = [
        "",
        "**Batching.** Would one forward pass over several prompts beat one pass per prompt? "
        "Milliseconds per prompt, 8 prompts, one thread (`burst.batching`):",
        "",
        "| model | work | one at a time | 8 in one pass | gain |",
        "| --- | --- | --- | --- | --- |",
    ]
    names = {"prefill_16": "16-token prompt", "prefill_128": "128-token prompt"}
    names |= {"prefill_1000": "1,000-token prompt", "step_128": "generated token (128 cached)"}
    for model, row in batching.items():
        for key, label in names.items():
            if key in row:
                r = row[key]
                lines.append(
                    f"| {model} ({row['params_m']}M) | {label} | {r['one_ms']:.1f} | "
                    f"{r['batched_ms']:.1f} | {r['gain']:.2f}x |"
                )

    def span(keys) -> str:
        gains = [row[k]["gain"] for row in batching.values() for k in keys if k in row]
        return f"{min(gains):.1f}-{max(gains):.1f}x" if gains else "-"

    lines += [
        "",
        f"Prompts of 128 tokens and more, the work a burst of traces queues, gain "
        f"{span(('prefill_128', 'prefill_1000'))}: their products are large already. "
        f"Generation steps gain {span(('step_128',))}: the server now runs the queued steps "
        "of several generation streams as one batch (`web.generation.steps_together`, each "
        f"row with its own cache). 16-token prompts gain {span(('prefill_16',))}; when this "
        "was measured the engine could not split one pass into per-prompt traces, and since "
        "then it can (`LanguageModel.trace_many`): the server traces new prompts of up to "
        f"{BATCH_PROMPT_TOKENS} tokens queued together in one pass "
        f"(`web.store.BATCH_PROMPT_TOKENS`, about {BATCH_TOKENS} tokens a pass), and longer "
        "ones one at a time, where a batch saved 3-9%.",
    ]
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,300,1000")
    parser.add_argument("--tokens", type=int, default=1000)
    parser.add_argument("--limit", type=float, default=60.0, help="the server's wait limit")
    parser.add_argument("--src", help="a copy of lmscope's source to serve instead")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    result = run_bursts(
        sizes, tokens=args.tokens, limit_s=args.limit, src=args.src, workers=args.workers
    )
    text = json.dumps(result, indent=2)
    if args.json:
        args.json.write_text(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
