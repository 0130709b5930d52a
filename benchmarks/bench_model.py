"""lmscope's GPT-2 against Hugging Face transformers on the same GPT-2-small-shaped weights,
in float32 and bfloat16, with the machine's own limits measured in the same run.

Measured in one run, interleaved (each contender in turn, best of N), CPU:
- the machine: matrix-product peak (2048x2048, float32 and bfloat16) and memory bandwidth (a
  256 MiB ``copy_``), before and after the comparisons (``benchmarks/machine.py``);
- plain forward and full trace (every probe recorded) at 16, 128, 512 and 1,024 tokens in
  float32 and bfloat16, each over transformers' forward in the same precision; goals: float32
  forward <= 1.0x, float32 trace <= 1.15x, bfloat16 trace <= 1.0x; each row's GFLOPS and its
  fraction of the measured peak of its precision;
- greedy generation of 50 tokens in both precisions: tokens/s against transformers', and
  against the memory limit (a step reads every weight once: bandwidth / weight bytes tokens/s);
  goals: float32 >= 75% of that limit, bfloat16 >= 1.6x transformers' float32 tokens/s; the
  per-token overhead (a step's time beyond its matrix-vector products alone);
- where a goal is missed, a profile (torch.profiler, one short run) of the missed measure.

One torch thread by default, as ``bench_llama.py``: on a shared 2-core machine another job
holding a core makes two threads wait on each other at every parallel region (a matrix-vector
product measured 5-10x slower with 2 threads than with 1 while other jobs ran), which measures
the scheduler rather than the code; the limits are then one core's, measured at the same
thread count. ``--threads 2`` on a quiet machine.

    python benchmarks/bench_model.py [--repeats 7] [--threads 1] [--markdown]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import warnings
from pathlib import Path

import torch

DTYPES = ("float32", "bfloat16")
LENGTHS = (16, 128, 512, 1024)
GOALS = {
    ("forward", "float32"): "<= 1.0",
    ("trace", "float32"): "<= 1.15",
    ("trace", "bfloat16"): "<= 1.0",
}
BANDWIDTH_GOAL = 0.75  # float32 generation: this fraction of bandwidth / weight bytes
BF16_OVER_HF_F32 = 1.6  # bfloat16 generation: this many times transformers' float32 tokens/s


def _paired_times(fns: dict, repeats: int) -> dict[str, float]:
    """Best time of each function over runs in alternation (``machine.paired_runs``): the
    minimum is the least disturbed run."""
    from benchmarks import machine

    return {name: min(ts) for name, ts in machine.paired_runs(fns, repeats).items()}


def build_models(folder: Path):
    """lmscope's and transformers' GPT-2 from one folder of random weights, in each precision."""
    from transformers import GPT2Config, GPT2LMHeadModel

    import lmscope

    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        GPT2LMHeadModel(GPT2Config(bos_token_id=None, eos_token_id=None)).save_pretrained(folder)
        ours = {d: lmscope.load(folder, dtype=d) for d in DTYPES}
        hf = {
            d: GPT2LMHeadModel.from_pretrained(folder, dtype=getattr(torch, d)).eval()
            for d in DTYPES
        }
    return ours, hf


def holds(ratio: float, goal: str) -> bool | None:
    if goal.startswith("<="):
        return ratio <= float(goal[2:])
    if goal.startswith(">="):
        return ratio >= float(goal[2:])
    return None


def _forward_rows(ours, hf, n: int, repeats: int, gen) -> list[dict]:
    from benchmarks import machine

    ids = torch.randint(0, 50257, (1, n), generator=gen)
    row_ids = ids[0].tolist()
    fns = {}
    for d in DTYPES:
        fns[f"hf {d}"] = lambda d=d: hf[d](ids)
        fns[f"forward {d}"] = lambda d=d: ours[d].net(ids)
        fns[f"trace {d}"] = lambda d=d: ours[d].trace(row_ids)
    if n <= 128:
        fns["trace+top20 float32"] = lambda: ours["float32"].trace(row_ids).predictions
    t = _paired_times(fns, repeats)
    net = ours["float32"].net
    flops = {
        "forward": machine.forward_flops(net, n, n),
        "trace": machine.forward_flops(net, n, 1),
    }
    rows = []
    for d in DTYPES:
        for what in ("forward", "trace"):
            seconds, reference = t[f"{what} {d}"], t[f"hf {d}"]
            goal = GOALS.get((what, d), "-")
            rows.append(
                {
                    "what": what,
                    "dtype": d,
                    "tokens": n,
                    "lmscope_s": seconds,
                    "reference_s": reference,
                    "ratio": seconds / reference,
                    "goal": goal,
                    "holds": holds(seconds / reference, goal),
                    "gflops": flops[what] / seconds / 1e9,
                    "reference_gflops": flops["forward"] / reference / 1e9,
                }
            )
    if "trace+top20 float32" in t:
        seconds, reference = t["trace+top20 float32"], t["hf float32"]
        rows.append(
            {
                "what": "trace+top20",
                "dtype": "float32",
                "tokens": n,
                "lmscope_s": seconds,
                "reference_s": reference,
                "ratio": seconds / reference,
                "goal": "-",
                "holds": None,
                "gflops": flops["forward"] / seconds / 1e9,
                "reference_gflops": flops["forward"] / reference / 1e9,
            }
        )
    return rows


def _generation(ours, hf, gen_tokens: int, repeats: int, gen) -> tuple[dict, dict]:
    from benchmarks import machine
    from lmscope.engine.generation import generate_ids
    from lmscope.engine.sampling import SamplingParams

    prompt = torch.randint(0, 50257, (1, 16), generator=gen)
    greedy = SamplingParams(greedy=True)

    def ours_generate(d):
        return generate_ids(ours[d], prompt[0].tolist(), gen_tokens, greedy, stop_at_eot=False)

    def hf_generate(d):
        return (
            hf[d]
            .generate(
                prompt,
                max_new_tokens=gen_tokens,
                min_new_tokens=gen_tokens,
                do_sample=False,
                pad_token_id=0,
            )[0]
            .tolist()
        )

    fns = {}
    for d in DTYPES:
        fns[f"ours {d}"] = lambda d=d: ours_generate(d)
        fns[f"hf {d}"] = lambda d=d: hf_generate(d)
        # the prompt and the first token alone: the rest of a run is its steady per-token cost
        fns[f"ours {d} first"] = lambda d=d: generate_ids(
            ours[d], prompt[0].tolist(), 1, greedy, stop_at_eot=False
        )
        fns[f"products {d}"] = machine.step_products(ours[d].net)
    t = _paired_times(fns, repeats)  # all interleaved: a memory-hungry neighbour hits all alike
    same = {d: ours_generate(d) == hf_generate(d) for d in DTYPES}
    bf16_as_f32 = ours_generate("bfloat16") == ours_generate("float32")
    return t, {"same_as_transformers": same, "bf16_same_as_f32": bf16_as_f32}


def run(
    repeats: int = 7,
    threads: int = 1,
    gen_tokens: int = 50,
    lengths: tuple[int, ...] = LENGTHS,
    profile_missed: bool = True,
) -> dict:
    from benchmarks import machine

    torch.set_num_threads(threads)
    before = machine.measure(repeats)
    with tempfile.TemporaryDirectory() as tmp:
        ours, hf = build_models(Path(tmp))
    gen = torch.Generator().manual_seed(0)
    rows = []
    with torch.no_grad():
        for n in lengths:
            # long prompts take seconds a pass: fewer repeats there
            reps = repeats if n <= 128 else max(2, repeats // 2)
            rows += _forward_rows(ours, hf, n, reps, gen)
        t, agreement = _generation(ours, hf, gen_tokens, repeats, gen)
        floors = {d: t[f"products {d}"] for d in DTYPES}
    limits = machine.best_of(before, machine.measure(repeats))
    bandwidth = limits["bandwidth_gb_s"]
    for row in rows:  # fractions of the best limits of the run
        peak = limits["matmul_gflops"][row["dtype"]]
        row["peak_fraction"] = row["gflops"] / peak
        step = machine.step_bytes(ours[row["dtype"]].net)
        row["bandwidth_fraction"] = step / row["lmscope_s"] / 1e9 / bandwidth
    generation = []
    hf_f32 = gen_tokens / t["hf float32"]
    for d in DTYPES:
        step = machine.step_bytes(ours[d].net)
        ceiling = bandwidth * 1e9 / step  # tokens/s if a step only read its weights
        tok_s = gen_tokens / t[f"ours {d}"]
        step_s = (t[f"ours {d}"] - t[f"ours {d} first"]) / max(1, gen_tokens - 1)
        generation.append(
            {
                "dtype": d,
                "tokens": gen_tokens,
                "lmscope_tok_s": tok_s,
                "reference_tok_s": gen_tokens / t[f"hf {d}"],
                "ratio": tok_s / (gen_tokens / t[f"hf {d}"]),
                "over_hf_float32": tok_s / hf_f32,
                "step_bytes": step,
                "ceiling_tok_s": ceiling,
                "bandwidth_fraction": tok_s / ceiling,
                "step_ms": step_s * 1e3,
                "matvec_floor_ms": floors[d] * 1e3,
                "overhead_ms": (step_s - floors[d]) * 1e3,
                "same_as_transformers": agreement["same_as_transformers"][d],
            }
        )
    f32, bf16 = generation
    goals = [
        {
            "what": "float32 generation, fraction of the memory limit",
            "value": f32["bandwidth_fraction"],
            "goal": f">= {BANDWIDTH_GOAL}",
            "holds": f32["bandwidth_fraction"] >= BANDWIDTH_GOAL,
        },
        {
            "what": "bfloat16 generation over transformers' float32 tokens/s",
            "value": bf16["over_hf_float32"],
            "goal": f">= {BF16_OVER_HF_F32}",
            "holds": bf16["over_hf_float32"] >= BF16_OVER_HF_F32,
        },
    ]
    result = {
        "threads": threads,
        "clock": machine.clock_name(),
        "torch": torch.__version__,
        "limits": limits,
        "rows": rows,
        "generation": generation,
        "generation_goals": goals,
        "bf16_greedy_same_as_float32": agreement["bf16_same_as_f32"],
        "profiles": {},
    }
    if profile_missed:
        result["profiles"] = _profiles(ours, hf, rows, goals, gen_tokens)
    return result


# --- profiles of missed goals -------------------------------------------------------------------


def profile(fn, top: int = 8) -> list[dict]:
    """The ops that took the most time in one run of ``fn`` (torch.profiler, self CPU time)."""
    fn()
    with torch.profiler.profile() as prof:
        fn()
    events = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
    total = sum(e.self_cpu_time_total for e in events) or 1
    return [
        {
            "op": e.key,
            "ms": e.self_cpu_time_total / 1e3,
            "calls": e.count,
            "share": e.self_cpu_time_total / total,
        }
        for e in events[:top]
    ]


def _profiles(ours, hf, rows, goals, gen_tokens: int) -> dict:
    from lmscope.engine.generation import generate_ids
    from lmscope.engine.sampling import SamplingParams

    def ours_pass(what: str, d: str, ids: list[int]):
        if what == "trace":
            return lambda: ours[d].trace(ids)
        return lambda: ours[d].net(torch.tensor([ids]))

    def hf_pass(d: str, ids: list[int]):
        return lambda: hf[d](torch.tensor([ids]))

    def generation(d: str):
        greedy = SamplingParams(greedy=True)
        return lambda: generate_ids(ours[d], list(range(16)), gen_tokens, greedy, stop_at_eot=False)

    out = {}
    with torch.no_grad():
        for row in rows:
            if row["holds"] is False:
                what, d, ids = row["what"], row["dtype"], list(range(row["tokens"]))
                out[f"{what} {d} {row['tokens']}"] = {
                    "lmscope": profile(ours_pass(what, d, ids)),
                    "transformers": profile(hf_pass(d, ids)),
                }
    for goal, d in zip(goals, DTYPES, strict=True):
        if not goal["holds"]:
            out[f"generation {d}"] = {"lmscope": profile(generation(d))}
    return out


# --- the BENCHMARKS.md section ------------------------------------------------------------------


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f} ms"


def _mark(holds_goal) -> str:
    return {True: " (met)", False: " (**missed**)", None: ""}[holds_goal]


def markdown(result: dict) -> str:
    """The section's tables (``benchmarks.sections.model`` adds the machine and the verdict)."""
    limits = result["limits"]
    peak = limits["matmul_gflops"]
    threads = f"{result['threads']} thread" + ("s" if result["threads"] != 1 else "")
    lines = [
        "## GPT-2 forward, trace and generation vs Hugging Face transformers "
        "(`benchmarks/bench_model.py`)",
        "",
        f"GPT-2 small's shape (124M parameters, random weights), CPU, {threads}, torch "
        f"{result['torch']}; float32 and bfloat16 (`lmscope.load(..., "
        'dtype="bfloat16")`, transformers\' `from_pretrained(..., dtype=torch.bfloat16)`); '
        f"best of interleaved runs, timed in {result.get('clock', 'wall-clock time')}.",
        "",
        f"**The machine, measured in this run:** matrix products (2048x2048) "
        f"{peak['float32']:.0f} GFLOPS in float32 and {peak['bfloat16']:.0f} GFLOPS in "
        f"bfloat16; memory bandwidth {limits['bandwidth_gb_s']:.1f} GB/s (a 256 MiB `copy_`, "
        "bytes read + written). The best of a measurement before and one after the "
        "comparisons.",
        "",
        "| measure | tokens | lmscope | transformers | ratio | goal | lmscope GFLOPS (of peak) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    names = {
        "forward": "forward",
        "trace": "full trace (vs HF forward)",
        "trace+top20": "full trace + every position's top-20",
    }
    for row in result["rows"]:
        lines.append(
            f"| {names[row['what']]}, {row['dtype']} | {row['tokens']:,} | "
            f"{_ms(row['lmscope_s'])} | {_ms(row['reference_s'])} | {row['ratio']:.2f}x | "
            f"{row['goal']}{_mark(row['holds'])} | {row['gflops']:.0f} "
            f"({row['peak_fraction']:.0%}) |"
        )
    lines += [
        "",
        "| greedy generation | lmscope | transformers | ratio | memory limit | of the limit "
        "| a step after the first | its matrix-vector products alone | overhead a step |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for g in result["generation"]:
        lines.append(
            f"| {g['tokens']} tokens, {g['dtype']} | {g['lmscope_tok_s']:.1f} tok/s | "
            f"{g['reference_tok_s']:.1f} tok/s | {g['ratio']:.2f}x | "
            f"{g['ceiling_tok_s']:.1f} tok/s ({g['step_bytes'] / 1e6:.0f} MB a step) | "
            f"{g['bandwidth_fraction']:.0%} | {g['step_ms']:.1f} ms | "
            f"{g['matvec_floor_ms']:.1f} ms | {g['overhead_ms']:.1f} ms |"
        )
    lines += ["", "| generation goal | measured | goal |", "| --- | --- | --- |"]
    for goal in result["generation_goals"]:
        value = goal["value"]
        shown = f"{value:.0%}" if "fraction" in goal["what"] else f"{value:.2f}x"
        lines.append(f"| {goal['what']} | {shown} | {goal['goal']}{_mark(goal['holds'])} |")
    lines += [
        "",
        "Ratios are lmscope time over transformers time in the same precision, except "
        "generation (tokens per second, lmscope over transformers). A full trace records every "
        "probe of every layer; it computes full-vocabulary logits for the last position only "
        "(its GFLOPS count that), and the top-20 predictions of every position on first access "
        "(the row that includes it). GFLOPS count every matrix product, attention's over the "
        "causal half; the memory limit is the bandwidth over the bytes a step must read (every "
        "weight once). A step after the first is (a run's time - the time of the prompt and the "
        "first token) / the tokens after the first; its overhead is that beyond the step's "
        "matrix-vector products run alone on the same weights (attention, norms, sampling, the "
        "Python of the loop).",
    ]
    lines += ["", _kernel_speeds(result)]
    for name, sides in result.get("profiles", {}).items():
        lines += ["", f"**Profile of the missed goal: {name}** (torch.profiler, one run):", ""]
        for side, ops in sides.items():
            words = ", ".join(
                f"`{op['op']}` {op['share']:.0%} ({op['calls']} calls)" for op in ops[:6]
            )
            lines.append(f"- {side}: {words}.")
    return "\n".join(lines)


def _kernel_speeds(result: dict) -> str:
    """What the matrix-vector kernels alone read per second in each precision, and the most
    bfloat16 generation could gain over transformers' float32 with them: the floor, not a goal."""
    by = {g["dtype"]: g for g in result["generation"]}
    f32, bf16 = by["float32"], by["bfloat16"]
    speed = {d: g["step_bytes"] / (g["matvec_floor_ms"] / 1e3) / 1e9 for d, g in by.items()}
    cap = (1e3 / bf16["matvec_floor_ms"]) / f32["reference_tok_s"]
    gain = f32["matvec_floor_ms"] / bf16["matvec_floor_ms"]
    return (
        f"**The kernels' own speed.** A step's matrix-vector products alone read "
        f"{speed['float32']:.1f} GB/s in float32 and {speed['bfloat16']:.1f} GB/s in bfloat16 "
        f"(PyTorch's `mv` on {result['threads']} thread{'s' if result['threads'] != 1 else ''}),"
        f" so bfloat16 halves the bytes but its products take {1 / gain:.2f}x the time, not 0.5x"
        f": with those kernels and nothing else in a step, bfloat16 generation "
        f"would reach {cap:.2f}x transformers' float32 tokens/s at most."
    )


def print_table(results: dict):
    print(markdown(results))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `benchmarks` as a package
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--markdown", action="store_true", help="print the BENCHMARKS.md section")
    args = parser.parse_args()
    figures = run(args.repeats, args.threads)
    print_table(figures)
