"""Char-RNN figures in one run: training speed, stepwise-cell cost, and an equal-budget race.

    python benchmarks/bench_rnn.py [--budget SECONDS] [--threads N] [--json]

1. Training throughput (characters/s) at the same hidden size (100, chunks of 25): the NumPy
   min-char-rnn (one stream, hand-written BPTT, Adagrad) against the fused PyTorch LSTM (Adam),
   both at batch 1, and the LSTM at the batch it is usually trained with.
2. Stepwise cell (every gate recorded, one Python step per character) against the fused
   ``torch.nn.LSTM`` kernel on the same weights: forward and forward+backward.
3. Tiny Shakespeare through lmscope's trainer: RNN, LSTM and GRU at (nearly) equal parameter
   counts, each trained at a constant learning rate until the same number of seconds of
   training have passed, then scored on the whole validation split.

``run(**settings)`` returns every figure as a dict. The machine's load changes these numbers;
the ratios within one run are the meaningful part.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from lmscope.models.numpy_rnn import MinCharRNN, Vocab
from lmscope.models.rnn import CharRNN, CharRNNConfig, param_count

RACE_ARCHS = ("rnn", "lstm", "gru")
RACE_LSTM_HIDDEN = 128  # the LSTM sets the parameter count the other two are matched to
RACE = dict(layers=2, context=64, batch=32, lr=2e-3, optimizer="adam", weight_decay=0.0)


def _text() -> str:
    from lmscope.data import load_corpus

    return load_corpus("shakespeare").text


def numpy_throughput(text: str, hidden: int, seq: int, seconds: float) -> float:
    """Characters per second of min-char-rnn training (forward, BPTT, Adagrad)."""
    vocab = Vocab.from_text(text)
    data = np.array(vocab.encode(text[:200_000]))
    model = MinCharRNN(len(vocab), hidden)
    h, pos, chars = model.zero_state(), 0, 0
    began = time.perf_counter()
    while time.perf_counter() - began < seconds:
        if pos + seq + 1 > len(data):
            pos, h = 0, model.zero_state()
        _, grads, h = model.loss_and_grads(data[pos : pos + seq], data[pos + 1 : pos + seq + 1], h)
        model.adagrad_step(grads, 0.1)
        pos, chars = pos + seq, chars + seq
    return chars / (time.perf_counter() - began)


def torch_throughput(vocab: int, hidden: int, seq: int, batch: int, seconds: float) -> float:
    """Characters per second of fused-LSTM training (forward, backward, Adam), state carried."""
    model = CharRNN(CharRNNConfig(vocab, "lstm", hidden, 1))
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    x = torch.randint(0, vocab, (batch, seq))
    y = torch.randint(0, vocab, (batch, seq))
    state, chars = None, 0
    began = time.perf_counter()
    while time.perf_counter() - began < seconds:
        _, loss, state = model(x, state, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        state = tuple(t.detach() for t in state)
        chars += batch * seq
    return chars / (time.perf_counter() - began)


def _best_of(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        fn()
        times.append(time.perf_counter() - began)
    return min(times)


def stepwise_vs_fused(hidden: int = 256, layers: int = 2, batch: int = 32, seq: int = 100) -> dict:
    torch.manual_seed(0)
    model = CharRNN(CharRNNConfig(82, "lstm", hidden, layers))
    x = torch.randint(0, 82, (batch, seq))
    y = torch.randint(0, 82, (batch, seq))

    def forward(path):
        with torch.no_grad():
            (model if path == "fused" else model.stepwise)(x)

    def train(path):
        loss = (model(x, None, y) if path == "fused" else model.stepwise(x, None, y))[1]
        loss.backward()
        model.zero_grad(set_to_none=True)

    out = {"hidden": hidden, "layers": layers, "batch": batch, "seq": seq}
    for name, work in (("forward", forward), ("train", train)):
        fused = _best_of(lambda w=work: w("fused"), 3)
        step = _best_of(lambda w=work: w("stepwise"), 3)
        out[f"{name}_fused_ms"] = 1e3 * fused
        out[f"{name}_stepwise_ms"] = 1e3 * step
        out[f"{name}_slowdown"] = step / fused
    return out


def matched_hidden(arch: str, vocab: int, target: int, layers: int) -> int:
    """The hidden size whose parameter count comes closest to ``target``."""
    return min(range(8, 1024), key=lambda h: abs(param_count(arch, vocab, h, layers) - target))


class _BudgetSpent(Exception):
    pass


@torch.no_grad()
def val_loss(model: CharRNN, ids: list[int], streams: int = 16, chunk: int = 256) -> float:
    """Mean cross-entropy over the whole validation split, read as contiguous streams."""
    model.eval()
    n = len(ids) // streams
    data = torch.tensor(ids[: n * streams]).view(streams, n)
    state, total, count = None, 0.0, 0
    for start in range(0, n - 1, chunk):
        x = data[:, start : min(start + chunk, n - 1)]
        y = data[:, start + 1 : start + 1 + x.shape[1]]
        logits, _, state = model(x, state)
        flat = logits.reshape(-1, logits.shape[-1])
        total += float(torch.nn.functional.cross_entropy(flat, y.reshape(-1), reduction="sum"))
        count += y.numel()
    return total / count


def race(budget_s: float, folder: Path, log=print) -> dict:
    """RNN, LSTM, GRU with equal parameters and equal training time on Tiny Shakespeare.

    Each trains through lmscope's trainer at a constant learning rate until ``budget_s`` seconds
    of training have passed (a time limit, not an iteration count, so a busy machine slows all
    three alike), then is scored on the whole validation split."""
    from lmscope.data import load_corpus
    from lmscope.train import TrainConfig, Trainer

    text = load_corpus("shakespeare").text
    vocab = len(set(text))
    target = param_count("lstm", vocab, RACE_LSTM_HIDDEN, RACE["layers"])
    results = {}
    for arch in RACE_ARCHS:
        hidden = matched_hidden(arch, vocab, target, RACE["layers"])
        cfg = TrainConfig(
            data="shakespeare",
            arch=arch,
            dim=hidden,
            iters=1_000_000,  # the time budget ends the run
            min_lr=RACE["lr"],
            warmup=0,
            grad_clip=5.0,
            eval_every=0,
            sample_every=0,
            seed=1337,
            out=str(folder / arch),
            device="cpu",
            **RACE,
        )
        trainer = Trainer(cfg, progress=False, log=lambda text: None)
        clock = {"began": None, "first": 0, "steps": 0, "elapsed": 0.0}

        def stop_when_spent(info, clock=clock):
            now = time.perf_counter()
            if clock["began"] is None:  # the clock starts after the first step (warm-up)
                clock["began"], clock["first"] = now, info.iteration
            clock["steps"], clock["elapsed"] = info.iteration, now - clock["began"]
            if clock["elapsed"] >= budget_s:
                raise _BudgetSpent

        trainer.on_step = stop_when_spent
        with contextlib.suppress(_BudgetSpent):
            trainer.run()
        val_ids = trainer.tokenizer.encode(load_corpus("shakespeare").split(0.1)[1])
        steps = clock["steps"]
        results[arch] = {
            "hidden": hidden,
            "params": param_count(arch, vocab, hidden, RACE["layers"]),
            "iters": steps,
            "train_s": clock["elapsed"],
            "chars_per_s": (steps - clock["first"])
            * RACE["batch"]
            * RACE["context"]
            / max(clock["elapsed"], 1e-9),
            "val_loss": val_loss(trainer.model, val_ids),
        }
        log(f"{arch}: {results[arch]}")
    return {"settings": {**RACE, "budget_s": budget_s, "lstm_hidden": RACE_LSTM_HIDDEN}, **results}


def run(budget_s: float = 60.0, threads: int = 2, log=print) -> dict:
    torch.set_num_threads(threads)
    text = _text()
    vocab = len(set(text))
    began = time.perf_counter()
    throughput = {
        "hidden": 100,
        "seq": 25,
        "numpy_rnn_batch1": numpy_throughput(text, 100, 25, 8.0),
        "torch_lstm_batch1": torch_throughput(vocab, 100, 25, 1, 8.0),
        "torch_lstm_batch64": torch_throughput(vocab, 100, 25, 64, 8.0),
    }
    log(f"throughput (chars/s): {throughput}")
    cells = stepwise_vs_fused()
    log(f"stepwise vs fused: {cells}")
    with tempfile.TemporaryDirectory(prefix="lmscope-bench-rnn-") as tmp:
        os.environ.setdefault("LMSCOPE_CACHE", str(Path(tmp) / "cache"))
        races = race(budget_s, Path(tmp), log)
    return {
        "threads": threads,
        "torch": torch.__version__,
        "throughput_chars_per_s": throughput,
        "stepwise_vs_fused": cells,
        "race": races,
        "wall_s": time.perf_counter() - began,
    }


def format_report(result: dict) -> str:
    t, c, r = result["throughput_chars_per_s"], result["stepwise_vs_fused"], result["race"]
    lines = [
        f"Training throughput at hidden {t['hidden']}, chunks of {t['seq']} (chars/s):",
        f"  NumPy min-char-rnn, batch 1   {t['numpy_rnn_batch1']:>10,.0f}",
        f"  fused LSTM, batch 1           {t['torch_lstm_batch1']:>10,.0f}",
        f"  fused LSTM, batch 64          {t['torch_lstm_batch64']:>10,.0f}",
        f"Stepwise vs fused LSTM (hidden {c['hidden']}, {c['layers']} layers, "
        f"batch {c['batch']} x {c['seq']}):",
        f"  forward        {c['forward_fused_ms']:8.1f} ms fused, "
        f"{c['forward_stepwise_ms']:8.1f} ms stepwise ({c['forward_slowdown']:.1f}x)",
        f"  forward+back   {c['train_fused_ms']:8.1f} ms fused, "
        f"{c['train_stepwise_ms']:8.1f} ms stepwise ({c['train_slowdown']:.1f}x)",
        f"Tiny Shakespeare, {r['settings']['budget_s']:.0f} s each, equal parameters:",
    ]
    for arch in RACE_ARCHS:
        a = r[arch]
        lines.append(
            f"  {arch:<5} hidden {a['hidden']:>4}  {a['params']:>8,} params  "
            f"{a['iters']:>5} iters  {a['train_s']:6.1f} s  val loss {a['val_loss']:.4f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=float, default=60.0, help="seconds per race entrant")
    parser.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    result = run(args.budget, args.threads, log=lambda text: None if args.json else print(text))
    print(json.dumps(result, indent=1) if args.json else "\n" + format_report(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
