"""``lmscope race``: a char LSTM and a char GPT of equal size train on the same text for the
same time, to check the lesson's claim that "at N = 512 on the same hardware the Transformer
trains 5-10x faster per epoch".

What keeps the race fair:

- one trainer (``lmscope.train``) for every model, AdamW for all with each family's own
  learning rate, held constant after the warm-up (a time budget has no last step for a
  cosine to end at);
- the same data order: every model reads contiguous streams (``batches="stream"``), so step k
  hands each model the very same (x, y) batch, and an epoch is one pass over the training text;
- the same batch and context N; the recurrent models' hidden size is the one whose parameter
  count is nearest the GPT's (position embeddings included);
- the same budget of training-step time on the chosen clock: elapsed time, or this process's
  CPU time, which on a shared machine leaves out the time spent waiting for a core.
  Evaluations are not counted.

Reported per model: val loss against training time and against tokens seen, tokens/s, the
time an epoch takes at that speed, and the model FLOPs behind each token.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np

from lmscope.data import StreamBatches, load_corpus
from lmscope.errors import InvalidInputError
from lmscope.lab import texts
from lmscope.lab.configs import RECURRENT, RaceConfig
from lmscope.lab.plots import (
    CLOCK_WORDS,
    Panel,
    Series,
    cell_words,
    machine_words,
    plot_words,
    save_panels,
)
from lmscope.lab.progress import loss_bar
from lmscope.lab.results import (
    LANGS,
    Result,
    columns_of,
    format_seconds,
    hardware_info,
    say,
    shown,
    table,
)
from lmscope.lab.sizes import matched_hidden
from lmscope.lab.timing import Timing
from lmscope.models.gpt2 import GPT, GPTConfig
from lmscope.tokenizers import CharTokenizer
from lmscope.train import TrainConfig, Trainer, get_adapter

EXPERIMENT = "race"
LABELS = texts.MODELS  # the models as tables, verdicts and figures name them
COLORS = {"lstm": "#1f77b4", "gpt": "#d62728", "gru": "#2ca02c", "rnn": "#9467bd"}
GATE_ROWS = {"rnn": 1, "lstm": 4, "gru": 3}  # weight rows per hidden unit (PyTorch's layout)
CLAIM = (5.0, 10.0)  # the lesson's "5-10x faster per epoch"
GPT_WARMUP = 30  # steps; the trainer's default 100 would spend much of a short race warming up
# One clipping threshold for every model: char-rnn's 5.0 let an LSTM reading 512-character
# chunks swing between good and bad evaluations; at 1.0 (the GPT's) it learns steadily.
GRAD_CLIP = 1.0
BETA2 = 0.99
NEVER = 10**12  # "iters" and "eval_every" for a run that ends on time, not on a step count


def parse_budget(text: str) -> float:
    """'240', '240s', '4m', '0.5h' -> seconds."""
    raw = str(text).strip().lower()
    scale = 1.0
    for suffix, factor in (("min", 60.0), ("s", 1.0), ("m", 60.0), ("h", 3600.0)):
        if raw.endswith(suffix):
            raw, scale = raw[: -len(suffix)].strip(), factor
            break
    try:
        value = float(raw) * scale
    except ValueError:
        raise InvalidInputError("error.lab.race.budget-not-time", text=text) from None
    if not math.isfinite(value):
        raise InvalidInputError("error.lab.race.budget-infinite", text=text)
    return value


# --- model sizes ---------------------------------------------------------------------------
def vocab_and_epoch(cfg: RaceConfig) -> tuple[int, int, int]:
    """(vocabulary size, training tokens, steps per epoch) as the trainer will see them."""
    corpus = load_corpus(cfg.data)
    tokenizer = CharTokenizer.from_text(corpus.text)
    need = cfg.batch * (cfg.context + 1)  # one window per stream, plus its last target
    sizes = [len(tokenizer.encode(part)) for part in corpus.split(0.1)]  # TrainConfig's split
    for split, have in zip(("training", "validation"), sizes, strict=True):
        if have < need:  # the trainer would refuse too; say so before any model is built
            raise InvalidInputError(
                "error.lab.race.short-validation"
                if split == "validation"
                else ("error.lab.race.short-training"),
                context=cfg.context,
                batch=cfg.batch,
                need=need,
                data=cfg.data,
                have=have,
            )
    steps = len(StreamBatches(np.zeros(sizes[0], dtype=np.int32), cfg.batch, cfg.context))
    return tokenizer.vocab_size, sizes[0], steps


def gpt_params(cfg: RaceConfig, vocab: int) -> int:
    config = GPTConfig(
        vocab_size=vocab,
        n_ctx=cfg.context,
        n_embd=cfg.gpt_dim,
        n_layer=cfg.gpt_layers,
        n_head=cfg.gpt_heads,
    )
    return GPT(config).num_params()


def flops_per_token(arch: str, cfg: RaceConfig, vocab: int, hidden: int) -> int:
    """Forward-pass FLOPs per token (a multiply-add is 2): weight matrices, plus causal
    attention's scores and weighted sum over (N + 1) / 2 keys on average. Training costs
    about three times this (forward and backward)."""
    if arch == "gpt":
        d, layers = cfg.gpt_dim, cfg.gpt_layers
        matrices = layers * 12 * d * d + vocab * d  # QKV, W_O, MLP; the tied unembedding
        return 2 * matrices + layers * 2 * d * (cfg.context + 1)
    rows = GATE_ROWS[arch] * hidden
    total = hidden * vocab  # the output layer
    for layer in range(cfg.rnn_layers):
        inputs = vocab if layer == 0 else hidden  # one-hot input: a dense product all the same
        total += rows * (inputs + hidden)
    return 2 * total


def shape_text(arch: str, cfg: RaceConfig, hidden: int) -> dict:
    """A model's shape, as its table's cell says it."""
    if arch == "gpt":
        return say("lab.shape.gpt", layers=cfg.gpt_layers, heads=cfg.gpt_heads, width=cfg.gpt_dim)
    return say("lab.shape.rnn", layers=cfg.rnn_layers, hidden=hidden)


def train_config(arch: str, cfg: RaceConfig, hidden: int, out: Path):
    """The shared trainer's settings: the race's common ones over each family's defaults."""
    family = dict(get_adapter(arch).defaults)
    lr = family.get("lr", TrainConfig.lr)
    return TrainConfig(
        data=cfg.data,
        tokenizer="char",
        arch=arch,
        layers=cfg.gpt_layers if arch == "gpt" else cfg.rnn_layers,
        heads=cfg.gpt_heads,
        dim=cfg.gpt_dim if arch == "gpt" else hidden,
        context=cfg.context,
        batch=cfg.batch,
        batches="stream",
        iters=NEVER,
        optimizer="adamw",
        lr=lr,
        min_lr=lr,  # constant after warm-up
        warmup=GPT_WARMUP if arch == "gpt" else family.get("warmup", 0),
        weight_decay=family.get("weight_decay", TrainConfig.weight_decay),
        beta2=BETA2,
        grad_clip=GRAD_CLIP,
        eval_every=NEVER,  # evaluations come when the race asks (and at the end)
        eval_iters=cfg.eval_batches,
        sample_every=0,
        log_every=NEVER,
        seed=cfg.seed,
        out=str(out),
        device=cfg.device,
    )


def _training(tc) -> dict:
    return {k: getattr(tc, k) for k in ("lr", "warmup", "weight_decay", "grad_clip")}


# --- one model's run -------------------------------------------------------------------------
class Stopwatch:
    """The ``on_step`` hook: adds up step times on the race's clock, asks for evaluations at
    even fractions of the budget and stops the run when the budget is spent."""

    def __init__(self, budget: float, points: int, clock: str, show=None):
        self.budget, self.clock, self.show = budget, clock, show
        self.every = budget / points
        self.next_eval = self.every
        self.elapsed = 0.0
        self.at: dict[int, float] = {}  # iteration -> training time when it ended
        self.steps: list[float] = []  # every step's time: their spread says how noisy it was

    def __call__(self, info) -> None:
        step = info.step_cpu_s if self.clock == "cpu" else info.step_s
        self.steps.append(step)
        self.elapsed += step
        self.at[info.iteration] = self.elapsed
        if self.elapsed >= self.next_eval:
            info.evaluate = True
            while self.next_eval <= self.elapsed:
                self.next_eval += self.every
        if self.elapsed >= self.budget:
            info.stop = True
        if self.show is not None:
            self.show(min(self.elapsed, self.budget), info.loss)


def runcell_words(arch: str, cfg: RaceConfig, hidden: int, progress=None) -> dict:
    """Train one model for the budget; return its step count, time and evaluations."""
    label = shown(say("lab.race.progress", model=LABELS[arch], shape=shape_text(arch, cfg, hidden)))
    show = loss_bar(progress, label, cfg.budget_s)
    watch = Stopwatch(cfg.budget_s, cfg.eval_points, cfg.clock, show)
    with tempfile.TemporaryDirectory(prefix="lmscope-race-") as tmp:
        trainer = Trainer(
            train_config(arch, cfg, hidden, Path(tmp) / arch),
            progress=False,
            log=lambda text: None,
            on_step=watch,
        )
        result = trainer.run()
        params = sum(p.numel() for p in trainer.model.parameters())
    curve = [
        {
            "model": LABELS[arch],
            "arch": arch,
            "step": e["iteration"],
            "seconds": watch.at[e["iteration"]],
            "tokens": e["iteration"] * cfg.batch * cfg.context,
            "train_loss": e["train"],
            "val_loss": e["val"],
        }
        for e in result.evals
    ]
    # the first steps warm up (allocations, caches): the spread is that of the rest
    timing = Timing(tuple(watch.steps[len(watch.steps) // 10 :] or watch.steps))
    return {
        "steps": result.iteration,
        "seconds": watch.elapsed,
        "params": params,
        "curve": curve,
        "step_timing": timing,
    }


# --- comparing ---------------------------------------------------------------------------------
def speed_row(arch: str, cfg: RaceConfig, vocab: int, hidden: int, run: dict, epoch_steps: int):
    tokens = run["steps"] * cfg.batch * cfg.context
    tokens_per_s = tokens / run["seconds"]
    epoch_s = epoch_steps * run["seconds"] / run["steps"]
    flops = flops_per_token(arch, cfg, vocab, hidden)
    return {
        "model": LABELS[arch],
        "arch": arch,
        "params": run["params"],
        "shape": shape_text(arch, cfg, hidden),
        "steps": run["steps"],
        "tokens": tokens,
        "tokens_per_s": round(tokens_per_s),
        "epoch_s": epoch_s,
        "epochs": run["steps"] / epoch_steps,
        "flops_per_token": flops,
        "gflops": 3 * flops * tokens_per_s / 1e9,
        "val_loss": run["curve"][-1]["val_loss"],
        "spread_pct": round(100 * run["step_timing"].spread, 1)
        if run["step_timing"].spread != math.inf
        else None,
        "steady": run["step_timing"].steady,
    }


def val_at_tokens(curve: list[dict], tokens: float) -> float | None:
    """Val loss at ``tokens`` seen, read off the curve by linear interpolation."""
    points = [(r["tokens"], r["val_loss"]) for r in curve]
    if not points or tokens < points[0][0] or tokens > points[-1][0]:
        return None
    for (t0, v0), (t1, v1) in zip(points, points[1:], strict=False):
        if t0 <= tokens <= t1:
            return v0 if t1 == t0 else v0 + (v1 - v0) * (tokens - t0) / (t1 - t0)
    return points[-1][1]


def val_margin(curves: dict[str, list[dict]]) -> float | None:
    """How far apart two val losses must be to name a winner: the most any model's val loss
    moved over its last evaluation interval. A smaller gap is within what one more interval
    of training, or the noise of a few validation batches, changes (None: one point each)."""
    moves = [abs(c[-1]["val_loss"] - c[-2]["val_loss"]) for c in curves.values() if len(c) > 1]
    return max(moves) if moves else None


def summarise(rows: list[dict], curves: dict[str, list[dict]], cfg: RaceConfig, hw: dict) -> dict:
    """The numbers the verdicts quote: the epoch-time ratio against the lesson's claim, and
    who is ahead at equal time and at equal tokens."""
    by = {r["arch"]: r for r in rows}
    rival = next(a for a in RECURRENT if a in by)  # the LSTM when it raced
    ratio = by[rival]["epoch_s"] / by["gpt"]["epoch_s"]
    if ratio >= CLAIM[0]:
        held = "yes"
    elif ratio > 1:
        held = "partly"
    else:
        held = "no"
    common = min(curves[a][-1]["tokens"] for a in by)
    at_tokens = {a: val_at_tokens(curves[a], common) for a in by}
    where = hw.get("gpu") if cfg.device.startswith("cuda") else None
    threads = hw.get("torch_threads")
    return {
        "claim": list(CLAIM),
        "context": cfg.context,
        "rival": rival,
        "ratio": ratio,
        "held": held,
        "budget_s": cfg.budget_s,
        "clock": cfg.clock,
        "device": cfg.device,
        "where": where or say("lab.race.cpu-threads", threads=threads),
        "epoch_tokens": None,  # filled by the caller
        "val_end": {a: by[a]["val_loss"] for a in by},
        "common_tokens": common,
        "val_at_common_tokens": at_tokens,
        "val_margin": val_margin(curves),
        # the epoch times come from step times: a verdict needs them steady (lmscope.lab.timing)
        "steady": all(r.get("steady", True) for r in rows),
        "step_spread_pct": {r["arch"]: r.get("spread_pct") for r in rows},
    }


# --- sections and plots --------------------------------------------------------------------------
SPEED_COLUMNS = columns_of("speed")  # both in tables.json
CURVE_COLUMNS = columns_of("loss")


def plot_result(doc: dict, out_dir: Path, langs: tuple[str, ...] = LANGS) -> None:
    """Draw both figures from a result document, so a saved race can be drawn again: each in
    every language of ``langs`` (race-speed.png, race-speed.zh.png, ...)."""
    by_key = {s["key"]: s for s in doc["sections"]}
    speed, loss = by_key["speed"], by_key["loss"]
    rows, params, hw = speed["rows"], doc["params"], doc["hardware"]
    curves = {r["arch"]: [p for p in loss["rows"] if p["arch"] == r["arch"]] for r in rows}
    for lang in langs:
        plot_speed(rows, curves, speed["data"], params, hw, out_dir, lang)
        plot_loss(rows, curves, params, hw, out_dir, lang)


def plot_speed(
    rows, curves, summary: dict, params: dict, hw: dict, out_dir: Path, lang: str = "en"
) -> None:
    say = plot_words(lang)
    low, high = summary["claim"]
    rival = LABELS[summary["rival"]]
    ratio = summary["ratio"]
    faster, by = ("GPT", ratio) if ratio >= 1 else (rival, 1 / ratio)
    # two short lines: the figure is one panel wide
    claim = say(
        "lab.plot.race.speed-claim",
        low=f"{low:g}",
        high=f"{high:g}",
        context=params["context"],
        faster=cell_words(faster, lang),
        by=f"{by:.2f}",
    )
    if not summary.get("steady", True):
        claim += "\n" + say("lab.plot.race.too-noisy")

    series = []
    for row in rows:
        arch = row["arch"]
        points = curves[arch]
        series.append(
            Series(
                say(
                    "lab.plot.race.speed-series",
                    model=cell_words(row["model"], lang),
                    tokens_per_s=row["tokens_per_s"],
                    epoch=format_seconds(row["epoch_s"]),
                ),
                [0.0] + [p["seconds"] for p in points],
                [0] + [p["tokens"] for p in points],
                color=COLORS[arch],
                marker=".",
            )
        )
    save_panels(
        out_dir,
        "race-speed",
        [
            Panel(
                title=say("lab.plot.race.speed-title", batch=params["batch"]),
                xlabel=say("lab.plot.race.training-time", clock=say(CLOCK_WORDS[params["clock"]])),
                ylabel=say("lab.plot.race.tokens-seen"),
                series=series,
                x_unit="seconds",
                y_unit="decimal",
                logx=False,
                logy=False,
            )
        ],
        suptitle=claim,
        footnote=machine_words(hw, lang),
        lang=lang,
    )


def plot_loss(rows, curves, params: dict, hw: dict, out_dir: Path, lang: str = "en") -> None:
    say = plot_words(lang)

    def panel(x_key: str, title: str, xlabel: str, x_unit: str) -> Panel:
        series = [
            Series(
                say(
                    "lab.plot.race.loss-series",
                    model=cell_words(row["model"], lang),
                    millions=f"{row['params'] / 1e6:.2f}",
                ),
                [p[x_key] for p in curves[row["arch"]]],
                [p["val_loss"] for p in curves[row["arch"]]],
                color=COLORS[row["arch"]],
            )
            for row in rows
        ]
        return Panel(
            title=title,
            xlabel=xlabel,
            ylabel=say("lab.plot.race.val-loss"),
            series=series,
            x_unit=x_unit,
            logx=False,
            logy=False,
        )

    save_panels(
        out_dir,
        "race-loss",
        [
            panel(
                "seconds",
                say("lab.plot.race.loss-vs-time"),
                say("lab.plot.race.training-time", clock=say(CLOCK_WORDS[params["clock"]])),
                "seconds",
            ),
            panel(
                "tokens",
                say("lab.plot.race.loss-vs-tokens"),
                say("lab.plot.race.tokens-seen"),
                "decimal",
            ),
        ],
        suptitle=say(
            "lab.plot.race.loss-title",
            data=params["data"],
            batch=params["batch"],
            context=params["context"],
        ),
        footnote=machine_words(hw, lang),
        lang=lang,
    )


# --- the whole race ------------------------------------------------------------------------------
def run_race(cfg: RaceConfig, out_dir: Path, progress=None) -> Result:
    """Train every model for the budget, write result.json and the plots, return the Result."""
    out_dir = Path(out_dir)
    vocab, n_train, epoch_steps = vocab_and_epoch(cfg)
    target = gpt_params(cfg, vocab)
    hidden = {
        arch: matched_hidden(arch, vocab, cfg.rnn_layers, target) if arch != "gpt" else 0
        for arch in cfg.models
    }
    hw = hardware_info([cfg.device])
    runs = {arch: runcell_words(arch, cfg, hidden[arch], progress) for arch in cfg.models}
    rows = [
        speed_row(arch, cfg, vocab, hidden[arch], runs[arch], epoch_steps) for arch in cfg.models
    ]
    curves = {arch: runs[arch]["curve"] for arch in cfg.models}
    summary = summarise(rows, curves, cfg, hw)
    summary["epoch_tokens"] = epoch_steps * cfg.batch * cfg.context
    summary["epoch_steps"] = epoch_steps

    result = Result(
        experiment=EXPERIMENT,
        title=texts.RACE_TITLE,
        hardware=hw,
        params={
            "budget_s": cfg.budget_s,
            "clock": cfg.clock,
            "context": cfg.context,
            "batch": cfg.batch,
            "models": list(cfg.models),
            "data": cfg.data,
            "vocab_size": vocab,
            "train_tokens": n_train,
            "gpt": {"layers": cfg.gpt_layers, "heads": cfg.gpt_heads, "dim": cfg.gpt_dim},
            "rnn": {"layers": cfg.rnn_layers, "hidden": {a: h for a, h in hidden.items() if h}},
            "target_params": target,
            "device": cfg.device,
            "threads": cfg.threads,
            "eval_points": cfg.eval_points,
            "eval_batches": cfg.eval_batches,
            "seed": cfg.seed,
            "batches": "stream: every model gets the same (x, y) batches in the same order",
            "optimizer": f"AdamW (betas 0.9, {BETA2}), gradients clipped at {GRAD_CLIP} for "
            "every model; each family's learning rate (constant after warm-up) and weight decay",
            "training": {
                a: _training(train_config(a, cfg, hidden[a], out_dir)) for a in cfg.models
            },
            **cfg.extra,
        },
    )
    result.sections += [
        table("speed", rows, texts.race_speed(rows, summary), data=summary),
        table(
            "loss",
            [r for arch in cfg.models for r in curves[arch]],
            texts.race_loss(rows, summary),
        ),
    ]
    plot_result(result.to_dict(), out_dir)
    result.write(out_dir)
    return result
