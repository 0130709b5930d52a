"""A mixture of experts: lmscope's full trace against transformers' forward pass (issue 35).

Two random configs of the layouts lmscope runs, built with transformers and saved as a Hugging
Face folder that ``lmscope.load`` opens: Mixtral (Mistral's attention, every layer sparse, 8
experts, top 2) and Qwen3-MoE (QK-norm attention, experts of their own width, 8 experts, top 2).
Each is small enough to time at 16, 128 and 1,024 tokens on a laptop CPU and large enough that
the experts, not the bookkeeping, take the time (d_model 512, 4 layers).

Measured in one run, float32, the same torch thread count for both: lmscope's full trace (every
probe of every layer, the router's probabilities and choices included) and its fast path
(``model.logits``) over transformers' plain forward (goal for the trace: <= 1.0x, as for the
dense models). Timings alternate the contenders and keep the best of N, so other work on a
shared machine hits both alike. Before timing, the logits of both are compared (the largest
difference is reported) and so are the experts each token is routed to.

    python -m benchmarks.bench_moe [--repeats 3] [--threads 1] [--json]
    python -m benchmarks --only moe   # the same, saved, and BENCHMARKS.md rebuilt
"""

from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path

from benchmarks.command import run_alone

LENGTHS = (16, 128, 1024)
GOAL = "<= 1.0"
COMMON = dict(
    vocab_size=8192,
    hidden_size=512,
    num_hidden_layers=4,
    num_attention_heads=8,
    num_key_value_heads=2,
    max_position_embeddings=2048,
    num_experts_per_tok=2,
    rms_norm_eps=1e-6,
    tie_word_embeddings=False,
)
LAYOUTS = {
    "mixtral": (
        "MixtralConfig",
        "MixtralForCausalLM",
        dict(num_local_experts=8, intermediate_size=1024),
    ),
    "qwen3_moe": (
        "Qwen3MoeConfig",
        "Qwen3MoeForCausalLM",
        dict(num_experts=8, moe_intermediate_size=512, intermediate_size=1024, head_dim=64),
    ),
}


def build(layout: str, folder: Path):
    """A random transformers model of ``layout`` (weights at a scale where every layer matters),
    saved in ``folder``; the model in eval mode, float32."""
    import torch
    import transformers

    config_name, model_name, own = LAYOUTS[layout]
    config = getattr(transformers, config_name)(**COMMON, **own)
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hf = getattr(transformers, model_name)(config).eval()
        with torch.no_grad():
            for name, p in hf.named_parameters():
                p.uniform_(0.5, 1.5) if "norm" in name else p.normal_(0.0, 0.05)
        hf.save_pretrained(folder, safe_serialization=True)
    return hf


def routed_experts(hf, ids) -> list:
    """The experts transformers routes each token to, [layer][token] -> sorted expert ids."""
    import torch

    chosen = []

    def keep(module, args, output):
        # transformers 5's router returns (logits, top-k weights, top-k expert ids)
        top = output[2]
        chosen.append(sorted(map(tuple, top.sort(-1).values.tolist())))

    gates = [m for n, m in hf.named_modules() if n.endswith(".gate") and hasattr(m, "weight")]
    handles = [g.register_forward_hook(keep) for g in gates]
    try:
        with torch.no_grad():
            hf(torch.tensor([ids]))
    finally:
        for h in handles:
            h.remove()
    if len(chosen) != len(gates):
        raise RuntimeError("transformers' routers were not all seen")
    return chosen


def lmscope_experts(trace, n_layer: int) -> list:
    """The experts lmscope's trace recorded for each token, in the same form."""
    out = []
    for layer in range(n_layer):
        top = trace.tensors[f"blocks.{layer}.mlp.hook_expert_indices"]
        out.append(sorted(map(tuple, top.long().sort(-1).values.tolist())))
    return out


def _timed(fn, now) -> float:
    start = now()
    fn()
    return now() - start


def time_lengths(ours, hf, ids: list[int], repeats: int, now, log) -> dict:
    """Best-of-``repeats`` times of the three contenders at each of LENGTHS, alternating."""
    import torch

    rows = {}
    for n in LENGTHS:
        prompt, tensor = ids[:n], torch.tensor([ids[:n]])

        def theirs(tensor=tensor):
            with torch.no_grad():
                return hf(input_ids=tensor, use_cache=False).logits

        contenders = {
            "trace": lambda prompt=prompt: ours.trace(prompt),
            "logits": lambda prompt=prompt: ours.logits(prompt),
            "transformers": theirs,
        }
        times: dict[str, list[float]] = {name: [] for name in contenders}
        for _ in range(repeats):
            for name, fn in contenders.items():
                times[name].append(_timed(fn, now))
        best = {k: min(v) for k, v in times.items()}
        rows[str(n)] = {
            "times": times,
            "best": best,
            "trace_ratio": best["trace"] / best["transformers"],
            "logits_ratio": best["logits"] / best["transformers"],
        }
        log(
            f"  {n:>5} tokens: trace {best['trace'] * 1e3:.1f} ms, logits "
            f"{best['logits'] * 1e3:.1f} ms, transformers {best['transformers'] * 1e3:.1f} ms"
        )
    return rows


def run(repeats: int = 3, threads: int = 1, log=print) -> dict:
    import torch
    import transformers

    import lmscope
    from benchmarks import machine

    torch.set_num_threads(threads)
    now = machine.clock()
    gen = torch.Generator().manual_seed(1)
    before = [round(x, 2) for x in os.getloadavg()]
    figures = {}
    for layout in LAYOUTS:
        with tempfile.TemporaryDirectory() as folder:
            hf = build(layout, Path(folder))
            ours = lmscope.load(folder)
        n_layer = ours.config.n_layer
        ids = torch.randint(0, COMMON["vocab_size"], (max(LENGTHS),), generator=gen).tolist()
        check = ids[:64]
        with torch.no_grad():
            theirs = hf(torch.tensor([check])).logits[0]
        trace = ours.trace(check)
        largest = float((ours.logits(check) - theirs).abs().max())
        same_routes = lmscope_experts(trace, n_layer) == routed_experts(hf, check)
        log(f"{layout}: largest logit difference {largest:.1e}, same experts: {same_routes}")
        rows = time_lengths(ours, hf, ids, repeats, now, log)
        figures[layout] = {
            "largest_logit_difference": largest,
            "same_experts": same_routes,
            "parameters": sum(p.numel() for p in hf.parameters()),
            "lengths": rows,
        }
    after = [round(x, 2) for x in os.getloadavg()]
    return {
        "benchmark": "moe",
        "config": {**COMMON, "layouts": {k: v[2] for k, v in LAYOUTS.items()}},
        "threads": threads,
        "clock": machine.clock_name(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "repeats": repeats,
        "goal": GOAL,
        "layouts": figures,
        "holds": all(
            row["trace_ratio"] <= 1.0 for f in figures.values() for row in f["lengths"].values()
        ),
        "load_average_before": before,
        "load_average_after": after,
        "notes": [
            f"Load average {before[0]:.1f} before and {after[0]:.1f} after, on "
            f"{os.cpu_count()} cores: other jobs shared the machine."
        ],
    }


def markdown(result: dict) -> str:
    """The BENCHMARKS.md section for these figures."""
    from benchmarks.sections import _wrap

    c = result["config"]
    threads = result["threads"]
    lines = [
        "## A mixture of experts vs transformers (`benchmarks/bench_moe.py`)",
        "",
        _wrap(
            "lmscope's full trace (every probe of every layer, the router's probabilities and "
            "chosen experts included) and its fast path (`model.logits`) against the forward pass "
            f"of transformers {result['transformers']}, on random Mixtral and Qwen3-MoE configs "
            f"saved as Hugging Face folders: d_model {c['hidden_size']}, "
            f"{c['num_hidden_layers']} layers, {c['num_attention_heads']} query heads and "
            f"{c['num_key_value_heads']} key/value heads, 8 experts, top "
            f"{c['num_experts_per_tok']}, a vocabulary of {c['vocab_size']:,}. CPU, float32, "
            f"{threads} torch thread{'s' if threads != 1 else ''}, {result['clock']}, best of "
            f"{result['repeats']} alternating rounds."
        ),
        "",
        "| layout | tokens | trace | logits | transformers | trace ratio | logits ratio | goal "
        "(trace) | verdict |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for layout, f in result["layouts"].items():
        for n, row in f["lengths"].items():
            best = row["best"]
            verdict = "holds" if row["trace_ratio"] <= 1.0 else "missed"
            lines.append(
                f"| {layout} | {int(n):,} | {best['trace'] * 1e3:.1f} ms | "
                f"{best['logits'] * 1e3:.1f} ms | {best['transformers'] * 1e3:.1f} ms | "
                f"{row['trace_ratio']:.2f}x | {row['logits_ratio']:.2f}x | {result['goal']} | "
                f"{verdict} |"
            )
    agree = "; ".join(
        f"{layout}: largest logit difference {f['largest_logit_difference']:.1e}, "
        + ("the same experts for every token" if f["same_experts"] else "DIFFERENT experts")
        for layout, f in result["layouts"].items()
    )
    lines += ["", _wrap(f"Before timing, on 64 tokens, the two agree: {agree}.")]
    if result.get("notes"):
        lines += ["", _wrap(" ".join(result["notes"]))]
    return "\n".join(lines)


def main() -> None:
    run_alone(__doc__, run, markdown, repeats=3)


if __name__ == "__main__":
    main()
