"""Recall after a distance: an LSTM, a GRU and a GPT of equal size learn to recall a list of
symbols over N filler characters, checked against the lesson's "a fixed-size hidden state
must squeeze the whole past" (``lmscope lab recall``, ``lmscope.lab.recall``).

    python benchmarks/bench_recall.py [--quick] [--out DIR] [--json]

``run()`` trains and tests on one torch thread, with no time cap (every model trains every
step), and returns the figures; ``figures(doc)`` reads the same figures from a saved result,
such as the one shipped in ``src/lmscope/assets/lab/recall/``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path


def _en(value):
    """A result's text (a model's name or shape) in English, for BENCHMARKS.md."""
    from lmscope.lab.results import shown

    return shown(value, "en") if isinstance(value, dict) and "id" in value else value


def figures(doc: dict) -> dict:
    """The numbers the BENCHMARKS.md section quotes, from a recall result.json."""
    from lmscope.lab.results import machine_line, shown

    by_key = {s["key"]: s for s in doc["sections"]}
    models, distance, amount = by_key["models"], by_key["distance"], by_key["amount"]
    keep = ("command", "quick", "sizes", "task", "steps", "batch", "budget_s", "training")
    return {
        "created": doc["created"],
        "params": {k: doc["params"].get(k) for k in keep},
        "run_s": doc["params"].get("run_s"),
        "machine": shown(machine_line(doc["hardware"]), "en"),
        "models": [
            {k: _en(r.get(k)) for k in ("size", "model", "arch", "params", "shape", "steps")}
            | {k: r.get(k) for k in ("train_s", "state_bytes", "kv_bytes_per_token")}
            for r in models["rows"]
        ],
        "distance": [_cell(r) for r in distance["rows"]],
        "amount": [_cell(r) for r in amount["rows"]],
        "verdicts": {
            k: shown(by_key[k]["verdict"], "en") for k in ("models", "distance", "amount")
        },
    }


def _cell(row: dict) -> dict:
    keys = ("size", "arch", "items", "distance", "accuracy", "low", "high", "memory_bytes")
    return {k: row[k] for k in keys}


def run(quick: bool = False, out: str | None = None, log=print) -> dict:
    """``lmscope lab recall --budget none --threads 1`` (with --quick when asked): no time cap,
    so every model trains every step whatever else the machine is doing."""
    import torch

    from lmscope.lab.recall.config import RecallConfig
    from lmscope.lab.recall.experiment import run_recall

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        settings = {"threads": 1, "budget_s": None}
        cfg = RecallConfig.quick_settings(**settings) if quick else RecallConfig(**settings)
        if out is not None:
            result = run_recall(cfg, Path(out))
        else:
            with tempfile.TemporaryDirectory(prefix="bench-recall-") as tmp:
                result = run_recall(cfg, Path(tmp))
    finally:
        torch.set_num_threads(threads)
    doc = result.to_dict()
    from lmscope.lab.results import shown

    log(shown(doc["sections"][1]["verdict"], "en"))
    return figures(doc)


def _table(cells: list[dict], x_key: str, sizes: list[int], models: list[dict]) -> list[str]:
    """One row per (size, value of x); one column per model: accuracy [95% interval]."""
    from lmscope.lab.recall.texts import accuracy_text

    archs = list(dict.fromkeys(m["arch"] for m in models))
    label = {m["arch"]: m["model"] for m in models}
    x_name = "N" if x_key == "distance" else "P"
    lines = [
        f"| size | {x_name} | " + " | ".join(label[a] for a in archs) + " |",
        "| --- | --- |" + " --- |" * len(archs),
    ]
    for size in sizes:
        mine = [c for c in cells if c["size"] == size]
        for x in dict.fromkeys(c[x_key] for c in mine):
            row = {c["arch"]: c for c in mine if c[x_key] == x}
            shown = [
                accuracy_text(row[a]["accuracy"], row[a]["low"], row[a]["high"]) for a in archs
            ]
            lines.append(f"| d{size} | {x} | " + " | ".join(shown) + " |")
    return lines


def markdown(result: dict) -> str:
    """The BENCHMARKS.md section for these figures."""
    p, models = result["params"], result["models"]
    task, sizes = p["task"], p["sizes"]
    fixed_p = result["distance"][0]["items"]
    fixed_n = result["amount"][0]["distance"]
    rows = [
        f"| d{m['size']} | {m['model']} | {m['params']:,} | {m['shape']} | "
        + (
            f"{m['state_bytes']:,} B, fixed"
            if m["state_bytes"] is not None
            else f"{m['kv_bytes_per_token']:,} B per character read"
        )
        + f" | {m['steps']:,} | {m['train_s']:.0f} s |"
        for m in models
    ]
    lines = [
        "## Recall after a distance: LSTM vs GRU vs GPT (`benchmarks/bench_recall.py`)",
        "",
        '**Claim** (the lesson "Why Transformers: the problems with RNNs"): a fixed-size hidden '
        "state must squeeze the whole past, so what an RNN can recall is bounded by its state, "
        "while attention reads the past it keeps. **Setup**: `lmscope lab recall` trains an "
        "LSTM, a GRU and a GPT with equal parameter counts through the one lmscope trainer "
        f"({p['steps']:,} steps of {p['batch']} examples, the same examples in the same order, "
        f"AdamW at {p['training']['lr']:g} for all, loss on the answers only) on lists of "
        f"1-{task['max_items']} symbols followed by 0-{task['max_distance']} filler characters "
        f"and questions about the list (e.g. `{task['example'].rstrip('.')}`, then padding). "
        "Accuracy of the first "
        "answer on fresh test examples, with 95% Wilson intervals; chance is 1 in 26.",
        "",
        "| size | model | parameters | shape | memory while waiting (float32) | steps | "
        "training time |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        *rows,
        "",
        f"Accuracy against the distance N (P = {fixed_p} symbols):",
        "",
        *_table(result["distance"], "distance", sizes, models),
        "",
        f"Accuracy against the number of symbols P (N = {fixed_n}):",
        "",
        *_table(result["amount"], "items", sizes, models),
        "",
        "**Verdict.** " + result["verdicts"]["amount"],
        "",
        result["verdicts"]["distance"],
        "",
        result["verdicts"]["models"],
    ]
    if result.get("notes"):
        lines += ["", " ".join(result["notes"])]
    run_s = result.get("run_s")
    took = f" The whole run took {run_s / 60:.1f} min." if run_s else ""
    lines += [
        "",
        f"Measured on {result['machine']} (result created {result['created']}).{took} "
        f"Reproduce: `{p['command']}`, or `python -m benchmarks --only recall`.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one size, a shorter task")
    parser.add_argument("--out", default=None, help="keep result.json and plots here")
    parser.add_argument("--json", action="store_true", help="print every figure as JSON")
    args = parser.parse_args(argv)
    result = run(args.quick, out=args.out)
    print(json.dumps(result, indent=1) if args.json else markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
