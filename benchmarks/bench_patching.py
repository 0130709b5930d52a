"""Activation patching on SmolLM2: lmscope's grid against the same patching with hooks on
transformers.

The grid of ``lmscope.interpret.circuits.patch`` for a 12-token prompt pair (an indirect-object
sentence: "When Mary and John went home, John gave a book to" -> " Mary", its corruption with
the second name swapped), every site: the residual stream entering each of the 30 layers at
each of the 12 positions, each of the 270 heads' outputs, each of the 30 MLPs' outputs (660
patched runs). The reference is what a researcher writes with transformers: one clean pass
that keeps the activations (forward hooks), then one forward pass of the corrupted prompt per
site with a hook that puts the clean activation in (a pre-hook on the decoder layer for the
residual stream, on ``o_proj`` for a head's slice of its input, a forward hook on the MLP).
Both return the same numbers: the largest difference of any patched logit is reported.

lmscope starts each patched run at its layer from the corrupted run's recorded residual stream
and runs the runs that start at a layer as rows of one batch; the reference runs every pass
whole, one at a time. Timings alternate the two contenders; with one torch thread (default)
they are this thread's CPU time, which other jobs on a shared machine delay without adding to.

    python -m benchmarks.bench_patching [--repeats 2] [--threads 1] [--json]
    python -m benchmarks --only patching   # the same, saved, and BENCHMARKS.md rebuilt
"""

from __future__ import annotations

import os
import statistics

from benchmarks.command import run_alone

CLEAN = "When Mary and John went home, John gave a book to"
CORRUPT = "When Mary and John went home, Mary gave a book to"
RIGHT, WRONG = " Mary", " John"
GOAL = "<= 1.0"


def _hf_sites(hf, n_layer: int, n_head: int, d_head: int, T: int):
    """Every site as (module, kind, index, layer): kind 'pre' (decoder layer input at a
    position), 'head' (o_proj's input slice), 'mlp' (the MLP's output)."""
    layers = hf.model.layers
    for layer in range(n_layer):
        block = layers[layer]
        for position in range(T):
            yield block, "pre", position, layer
        for head in range(n_head):
            yield block.self_attn.o_proj, "head", head, layer
        yield block.mlp, "mlp", None, layer


def hf_patching(hf, clean_ids, corrupt_ids, answers, n_head: int, d_head: int):
    """The reference: the patched logits of ``answers`` for every site, [site, 2], and the
    clean and corrupted runs' own."""
    import torch

    n_layer = hf.config.num_hidden_layers
    T = len(clean_ids)
    kept: dict = {}
    handles = []
    for layer in range(n_layer):
        block = hf.model.layers[layer]

        def keep_pre(mod, args, layer=layer):
            kept[("pre", layer)] = args[0]

        def keep_head(mod, args, layer=layer):
            kept[("head", layer)] = args[0]

        def keep_mlp(mod, args, output, layer=layer):
            kept[("mlp", layer)] = output

        handles += [
            block.register_forward_pre_hook(keep_pre),
            block.self_attn.o_proj.register_forward_pre_hook(keep_head),
            block.mlp.register_forward_hook(keep_mlp),
        ]
    with torch.no_grad():
        clean_logits = hf(torch.tensor([clean_ids]), use_cache=False).logits[0, -1, answers]
        for handle in handles:
            handle.remove()
        corrupt = torch.tensor([corrupt_ids])
        corrupt_logits = hf(corrupt, use_cache=False).logits[0, -1, answers]
        out = []
        for module, kind, index, layer in _hf_sites(hf, n_layer, n_head, d_head, T):
            clean = kept[(kind, layer)]
            if kind == "mlp":
                handle = module.register_forward_hook(lambda m, a, o, clean=clean: clean)
            else:
                part = index if kind == "pre" else slice(index * d_head, (index + 1) * d_head)

                def put(mod, args, clean=clean, kind=kind, part=part):
                    x = args[0].clone()
                    if kind == "pre":
                        x[:, part] = clean[:, part]
                    else:
                        x[..., part] = clean[..., part]
                    return (x, *args[1:])

                handle = module.register_forward_pre_hook(put)
            out.append(hf(corrupt, use_cache=False).logits[0, -1, answers])
            handle.remove()
    return torch.stack(out), clean_logits, corrupt_logits


def ours_in_hf_order(result) -> list:
    """lmscope's patched logits, site by site in the reference's order (per layer: the
    positions, the heads, the MLP)."""
    import torch

    rows = []
    sites = result.sites
    for r in range(len(sites["resid_pre"].rows)):
        for kind in ("resid_pre", "attn_head", "mlp_out"):
            site = sites[kind]
            rows += [
                torch.stack([site.right_logits[r, c], site.wrong_logits[r, c]])
                for c in range(len(site.cols))
            ]
    return torch.stack(rows)


def run(repeats: int = 2, threads: int = 1, log=print) -> dict:
    import torch
    import transformers

    from benchmarks import machine
    from benchmarks.bench_llama import load_lmscope, load_transformers
    from lmscope.interpret.circuits import patch

    torch.set_num_threads(threads)
    ours = load_lmscope()
    hf, _ = load_transformers()
    hf.set_attn_implementation("sdpa")
    clean_ids, corrupt_ids = ours.to_ids(CLEAN), ours.to_ids(CORRUPT)
    right, wrong = (ours.tokenizer.encode(t)[0] for t in (RIGHT, WRONG))
    answers = torch.tensor([right, wrong])
    c = ours.config
    log("checking that both give the same numbers ...")
    result = patch(ours, CLEAN, CORRUPT, RIGHT, WRONG)
    reference, clean_ref, corrupt_ref = hf_patching(
        hf, clean_ids, corrupt_ids, answers, c.n_head, c.d_head
    )
    largest = float((ours_in_hf_order(result) - reference).abs().max())
    runs = len(reference)
    log(f"{runs} patched runs; timing {repeats} rounds ...")
    now = machine.clock()
    times: dict[str, list[float]] = {"lmscope": [], "transformers": []}
    before = [round(x, 2) for x in os.getloadavg()]
    for _ in range(repeats):
        start = now()
        patch(ours, CLEAN, CORRUPT, RIGHT, WRONG)
        times["lmscope"].append(now() - start)
        start = now()
        hf_patching(hf, clean_ids, corrupt_ids, answers, c.n_head, c.d_head)
        times["transformers"].append(now() - start)
        ours_s, theirs_s = times["lmscope"][-1], times["transformers"][-1]
        log(f"  lmscope {ours_s:.2f} s, transformers {theirs_s:.2f} s")
    after = [round(x, 2) for x in os.getloadavg()]
    best = {name: min(values) for name, values in times.items()}
    ratio = best["lmscope"] / best["transformers"]
    return {
        "benchmark": "patching",
        "model": "SmolLM2-135M-Instruct",
        "clean": CLEAN,
        "corrupt": CORRUPT,
        "right": RIGHT,
        "wrong": WRONG,
        "tokens": len(clean_ids),
        "sites": runs,
        "threads": threads,
        "clock": machine.clock_name(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "repeats": repeats,
        "times": times,
        "best": best,
        "ratio": ratio,
        "ratio_medians": statistics.median(times["lmscope"])
        / statistics.median(times["transformers"]),
        "goal": GOAL,
        "holds": ratio <= 1.0,
        "largest_logit_difference": largest,
        "clean_diff": result.clean_diff,
        "corrupt_diff": result.corrupt_diff,
        "reference_clean_diff": float(clean_ref[0] - clean_ref[1]),
        "reference_corrupt_diff": float(corrupt_ref[0] - corrupt_ref[1]),
        "load_average_before": before,
        "load_average_after": after,
        "notes": [
            f"Load average {before[0]:.1f} before the timed rounds and {after[0]:.1f} after, on "
            f"{os.cpu_count()} cores: other jobs shared the machine."
        ],
    }


def markdown(result: dict) -> str:
    """The BENCHMARKS.md section for these figures."""
    from benchmarks.sections import _wrap

    best, times = result["best"], result["times"]
    verdict = "holds" if result["holds"] else "missed"
    lines = [
        "## Activation patching on SmolLM2 vs hooks on transformers "
        "(`benchmarks/bench_patching.py`)",
        "",
        _wrap(
            f"The whole patching grid of `lmscope circuits patch` for a {result['tokens']}-token "
            f"prompt pair (clean {result['clean']!r}, corrupted {result['corrupt']!r}, "
            f"{result['right']!r} vs {result['wrong']!r}): {result['sites']} patched runs (the "
            "residual stream at every layer and position, every head's output, every MLP's "
            "output), against the same patching written with forward hooks on transformers "
            f"{result['transformers']} (one clean pass keeping the activations, then one "
            "forward pass per site). CPU, float32, "
            f"{result['threads']} torch thread{'s' if result['threads'] != 1 else ''}, "
            f"{result['clock']}, best of {result['repeats']} alternating rounds."
        ),
        "",
        "| measure | lmscope | transformers | ratio (best) | ratio (medians) | goal | verdict |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        f"| patching grid, {result['sites']} runs | {best['lmscope']:.2f} s | "
        f"{best['transformers']:.2f} s | {result['ratio']:.3f}x | "
        f"{result['ratio_medians']:.3f}x | {result['goal']} | {verdict} |",
        "",
        _wrap(
            "Every round: lmscope "
            + ", ".join(f"{t:.2f}" for t in times["lmscope"])
            + " s; transformers "
            + ", ".join(f"{t:.2f}" for t in times["transformers"])
            + f" s. The two agree: the largest difference of any patched logit is "
            f"{result['largest_logit_difference']:.1e}; logit differences clean "
            f"{result['clean_diff']:.3f} (transformers {result['reference_clean_diff']:.3f}), "
            f"corrupted {result['corrupt_diff']:.3f} "
            f"(transformers {result['reference_corrupt_diff']:.3f})."
        ),
    ]
    if result.get("notes"):
        lines += ["", _wrap(" ".join(result["notes"]))]
    return "\n".join(lines)


def main() -> None:
    run_alone(__doc__, run, markdown, repeats=2)


if __name__ == "__main__":
    main()
