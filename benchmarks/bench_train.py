"""Training reference point: nanoGPT's Shakespeare-char run on a CPU, with lmscope's trainer.

    python benchmarks/bench_train.py [--iters N] [--out DIR] [--json]

The settings are the ones nanoGPT's README gives for a CPU ("context 64, batch 12, 4 layers,
4 heads, 128 dims, 2000 iterations, dropout 0, eval_iters 20"), on top of its
config/train_shakespeare_char.py (lr 1e-3 cosine to 1e-4, warm-up 100, AdamW betas 0.9/0.99,
weight decay 0.1, clip 1.0). nanoGPT reports a validation loss of about 1.88 after about
3 minutes on a CPU. `run(**overrides)` returns the figures as a dict so a collector can
gather them.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

import torch

REFERENCE = {
    "val_loss": 1.88,
    "minutes": 3,
    "source": "karpathy/nanoGPT README, 'I only have a macbook' (shakespeare_char on CPU)",
}
SETTINGS = dict(
    data="shakespeare",
    tokenizer="char",
    layers=4,
    heads=4,
    dim=128,
    context=64,
    batch=12,
    iters=2000,
    lr=1e-3,
    min_lr=1e-4,
    warmup=100,
    dropout=0.0,
    beta1=0.9,
    beta2=0.99,
    weight_decay=0.1,
    grad_clip=1.0,
    eval_every=250,
    eval_iters=20,
    sample_every=0,
    seed=1337,
    device="cpu",
)
PRECISE_EVAL_BATCHES = 200  # nanoGPT's own default eval_iters, for a steadier final figure


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@torch.no_grad()
def precise_val_loss(out: Path, n_batches: int = PRECISE_EVAL_BATCHES) -> float:
    """Mean val loss of the saved model over ``n_batches`` fixed random windows."""
    import lmscope
    from lmscope.data import encode_corpus, load_corpus
    from lmscope.train import TrainConfig, eval_batches

    cfg = TrainConfig.from_dict(json.loads((out / "trainer.json").read_text())["config"])
    model = lmscope.load(out)
    encoded = encode_corpus(load_corpus(cfg.data), model.tokenizer, val_fraction=cfg.val_fraction)
    batches = eval_batches("random", encoded.val, cfg.batch, cfg.context, n_batches, cfg.seed + 1)
    losses = [model.gpt(b.x, b.y)[1].item() for b in batches]
    return sum(losses) / len(losses)


def run(out: str | Path | None = None, *, log=print, **overrides) -> dict:
    """Train with the reference settings (``overrides`` change any) and return the figures."""
    from lmscope.train import TrainConfig, train

    keep = out is not None
    folder = Path(out) if keep else Path(tempfile.mkdtemp(prefix="lmscope-bench-train-"))
    target = folder if keep else folder / "shakespeare-char"
    settings = {**SETTINGS, **overrides}
    cfg = TrainConfig(**settings, out=str(target))
    try:
        started = time.perf_counter()
        result = train(cfg, overwrite=True, progress=False, log=log)
        wall = time.perf_counter() - started
        precise = precise_val_loss(target)
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
    last = result.evals[-1] if result.evals else {}
    return {
        "benchmark": "train_shakespeare_char_cpu",
        "settings": settings,
        "val_loss": last.get("val"),  # over eval_iters batches, as nanoGPT reports it
        "train_loss": last.get("train"),
        f"val_loss_{PRECISE_EVAL_BATCHES}_batches": precise,
        "evals": result.evals,
        "wall_s": wall,
        "train_s": result.train_s,
        "tokens_per_s": result.tokens_per_s,
        "reference": REFERENCE,
        "meets_reference": last.get("val", float("inf")) <= REFERENCE["val_loss"],
        "hardware": {
            "cpu": cpu_name(),
            "cores": os.cpu_count(),
            "torch": torch.__version__,
            "torch_threads": torch.get_num_threads(),
            "python": platform.python_version(),
        },
        "date": dt.date.today().isoformat(),
        "checkpoint": str(target) if keep else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=SETTINGS["iters"])
    parser.add_argument("--out", default=None, help="keep the checkpoint in this folder")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON only")
    args = parser.parse_args(argv)
    figures = run(args.out, iters=args.iters, log=(lambda s: None) if args.json else print)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    ref = REFERENCE["val_loss"]
    gap = figures["val_loss"] - ref
    verdict = "meets" if gap <= 0 else f"misses by {gap:.3f}"
    print(
        f"val loss {figures['val_loss']:.4f} ({figures['settings']['eval_iters']} batches; "
        f"{figures[f'val_loss_{PRECISE_EVAL_BATCHES}_batches']:.4f} over "
        f"{PRECISE_EVAL_BATCHES}), {verdict} nanoGPT's {ref}; wall {figures['wall_s']:.0f} s, "
        f"{figures['tokens_per_s']:,.0f} tokens/s on {figures['hardware']['cpu']} "
        f"({figures['hardware']['torch_threads']} threads, torch {figures['hardware']['torch']})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
