"""``lmscope lab recall``: the fixed-size state, measured. An LSTM, a GRU and a GPT of equal
parameter count learn to recall a list of symbols after N filler characters
(``lmscope.lab.recall.task``); their accuracy is tested against the distance N and against
the list's length P, next to the memory each model holds when the answer is due.

What keeps the comparison fair:

- one trainer (``lmscope.train``) for every model, with one optimiser setting (AdamW, one
  learning rate, the same warm-up and cosine decay, gradients clipped at 1.0) and the same
  number of steps;
- the same examples in the same order: the training examples are written as one text file,
  read through the trainer's stream batches with the context set to one example, so step k
  hands every model the very same batch;
- the loss counts the answers alone (``AnswersOnly``: the random symbols and filler carry
  nothing to learn), and every example starts from a fresh state, as in the tests;
- the recurrent models' hidden size is the one whose parameter count is nearest the GPT's.

Accuracy on a finite test set is a measurement: each comes with its 95% Wilson interval,
and a verdict calls two models apart only where their intervals do not overlap.

Here: testing and the result document. The task is ``task``, the models and their training
``models``, the words ``texts``, the figures ``plots``, the settings ``config`` (all in
``lmscope.lab.recall``).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from lmscope.errors import InvalidInputError
from lmscope.lab.race import BETA2, GRAD_CLIP, parse_budget
from lmscope.lab.recall import texts
from lmscope.lab.recall.config import RecallConfig
from lmscope.lab.recall.models import (
    WARMUP,
    AnswersOnly,
    char_tokenizer,
    memory_at,
    model_shapes,
    task_shape,
    train_model,
    write_corpus,
)
from lmscope.lab.recall.plots import plot_result
from lmscope.lab.recall.task import ALPHABET, CHANCE, QUERY, TaskShape, make_examples, wilson
from lmscope.lab.results import Column, Result, columns_of, hardware_info, table
from lmscope.tokenizers import CharTokenizer
from lmscope.train import get_adapter, register_arch

EXPERIMENT = "recall"
EVAL_BATCH = 500


# --- testing -----------------------------------------------------------------------------------
def encode(examples, tokenizer: CharTokenizer) -> torch.Tensor:
    lut = np.zeros(256, dtype=np.int64)
    for char in ALPHABET:
        lut[ord(char)] = tokenizer.encode(char)[0]
    return torch.from_numpy(lut[examples.codes])


@torch.no_grad()
def count_correct(adapter, model, ids: torch.Tensor, answer_at, answers, device) -> int:
    """How many first answers the model gets right (its most likely next character)."""
    correct = 0
    for start in range(0, len(ids), EVAL_BATCH):
        x = ids[start : start + EVAL_BATCH].to(device)
        logits = adapter.logits(model, x)
        at = torch.as_tensor(answer_at[start : start + EVAL_BATCH] - 1, device=device)
        guess = logits[torch.arange(len(x), device=device), at].argmax(-1)
        want = answers[start : start + EVAL_BATCH].to(device)
        correct += int((guess == want).sum())
    return correct


def test_cells(cfg: RecallConfig) -> dict[str, list[tuple[int, int]]]:
    """(list length, distance) cells: against the distance at a middle length, and against the
    length at a middle distance."""
    lengths, distances = cfg.list_lengths(), cfg.distances()
    at_items = max(p for p in lengths if p <= max(1, cfg.items // 2))
    at_distance = max(d for d in distances if d <= cfg.distance // 2)
    return {
        "distance": [(at_items, d) for d in distances],
        "amount": [(p, at_distance) for p in lengths],
    }


def test_sets(cfg: RecallConfig, shape: TaskShape, tokenizer) -> dict[tuple[int, int], tuple]:
    """The same test examples for every model: (ids, answer index, answer ids) per cell."""
    cells = {c for cs in test_cells(cfg).values() for c in cs}
    sets = {}
    for items, distance in sorted(cells):
        ex = make_examples(
            shape, cfg.test_examples, [cfg.seed, 2, items, distance], items, distance
        )
        answers = torch.tensor([tokenizer.encode(chr(c))[0] for c in ex.answer])
        sets[(items, distance)] = (encode(ex, tokenizer), ex.answer_at, answers)
    return sets


def accuracy_row(plan: dict, items: int, distance: int, correct: int, total: int) -> dict:
    low, high = wilson(correct, total)
    return {
        "size": plan["size"],
        "model": plan["model"],
        "arch": plan["arch"],
        "items": items,
        "distance": distance,
        "correct": correct,
        "total": total,
        "accuracy": correct / total,
        "low": low,
        "high": high,
        "shown": texts.accuracy_text(correct / total, low, high),
        "memory_bytes": memory_at(plan, items, distance),
    }


# --- the result --------------------------------------------------------------------------------
MODEL_COLUMNS = columns_of("models")  # in tables.json


def accuracy_columns(varied: str) -> list[Column]:
    """The columns of the table that varies ``varied`` (distance or amount)."""
    return columns_of("distance" if varied == "distance" else "amount")


def command_line(cfg: RecallConfig) -> str:
    """The command that runs these settings again."""
    base = RecallConfig.quick_settings() if cfg.quick else RecallConfig()
    words = ["lmscope lab recall"] + (["--quick"] if cfg.quick else [])
    flags = {
        "sizes": "--sizes", "models": "--models", "items": "--items", "distance": "--distance",
        "queries": "--queries", "steps": "--steps", "batch": "--batch", "lr": "--lr",
        "budget_s": "--budget", "test_examples": "--test-examples", "seed": "--seed",
        "gpt_layers": "--gpt-layers", "rnn_layers": "--rnn-layers", "device": "--device",
    }  # fmt: skip
    for name, flag in flags.items():
        value = getattr(cfg, name)
        if value == getattr(base, name):
            continue
        if isinstance(value, tuple):
            value = ",".join(str(v) for v in value)
        elif name == "budget_s":
            value = "none" if value is None else f"{value:g}"
        words.append(f"{flag} {value}")
    if cfg.threads is not None:
        words.append(f"--threads {cfg.threads}")
    return " ".join(words)


def run_recall(cfg: RecallConfig, out_dir: Path, progress=None) -> Result:
    """Train every model of every size, test them, write result.json and the plots."""
    started = time.perf_counter()
    out_dir = Path(out_dir)
    shape, tokenizer = task_shape(cfg), char_tokenizer()
    context = shape.length
    query_id = tokenizer.encode(QUERY)[0]
    for arch in dict.fromkeys(cfg.models):
        register_arch(AnswersOnly(get_adapter(arch), query_id))
    plans = model_shapes(cfg, tokenizer.vocab_size, context)
    sets = test_sets(cfg, shape, tokenizer)
    cells = test_cells(cfg)
    hw = hardware_info([cfg.device])
    rows = {"distance": [], "amount": []}
    with tempfile.TemporaryDirectory(prefix="lmscope-recall-") as tmp:
        corpus, fraction = write_corpus(cfg, shape, Path(tmp))
        for plan in plans:
            model, adapter, done = train_model(
                cfg, plan, corpus, fraction, context, Path(tmp), progress
            )
            plan.update(done)
            scores = {cell: count_correct(adapter, model, *sets[cell], cfg.device) for cell in sets}
            for key, wanted in cells.items():
                for items, distance in wanted:
                    total = cfg.test_examples
                    correct = scores[(items, distance)]
                    rows[key].append(accuracy_row(plan, items, distance, correct, total))
            del model
    summary = texts.summarise(plans, rows, cfg)
    result = Result(
        experiment=EXPERIMENT,
        title=texts.TITLE,
        hardware=hw,
        params=params(
            cfg, shape, tokenizer.vocab_size, plans, cells, time.perf_counter() - started
        ),
    )
    result.sections += [
        table("models", plans, texts.models_section(plans, summary), data=summary),
        table(
            "distance",
            rows["distance"],
            texts.distance_section(rows["distance"], summary),
            data=summary,
        ),
        table(
            "amount", rows["amount"], texts.amount_section(rows["amount"], summary), data=summary
        ),
    ]
    result.params["run_s"] = time.perf_counter() - started
    plot_result(result.to_dict(), out_dir)
    result.write(out_dir)
    return result


def params(cfg, shape, vocab, plans, cells, elapsed) -> dict:
    return {
        "command": command_line(cfg),
        "quick": cfg.quick,
        "sizes": list(cfg.sizes),
        "models": list(cfg.models),
        "task": {
            "max_items": shape.max_items,
            "max_distance": shape.max_distance,
            "queries": shape.queries,
            "length": shape.length,
            "alphabet": ALPHABET,
            "chance": CHANCE,
            "example": make_examples(shape, 1, [cfg.seed, 9], shape.max_items // 2, 4).text(0),
        },
        "tested": {k: [list(c) for c in v] for k, v in cells.items()},
        "test_examples": cfg.test_examples,
        "vocab_size": vocab,
        "steps": cfg.steps,
        "batch": cfg.batch,
        "budget_s": cfg.budget_s,
        "training": {
            "optimizer": f"AdamW (betas 0.9, {BETA2}), no weight decay, gradients clipped at "
            f"{GRAD_CLIP}; every model the same",
            "lr": cfg.lr,
            "min_lr": cfg.lr / 10,
            "warmup": min(WARMUP, cfg.steps // 10),
            "loss": "cross-entropy at the answers only; every example from a fresh state",
            "batches": "stream: every model gets the same examples in the same order",
        },
        "gpt": {"layers": cfg.gpt_layers, "head_dim": cfg.gpt_head_dim},
        "rnn": {"layers": cfg.rnn_layers},
        "dtype": "float32",
        "device": cfg.device,
        "threads": cfg.threads,
        "seed": cfg.seed,
        "run_s": elapsed,
        **cfg.extra,
    }


def check_budget(value) -> float | None:
    """--budget: 'none' lifts the cap; anything else goes through the race's time parser."""
    if value is None or str(value).strip().lower() == "none":
        return None
    seconds = parse_budget(value)
    if seconds <= 0:
        raise InvalidInputError("error.lab.recall.budget-or-none", got=repr(value))
    return seconds
