"""The recall experiment's models and their training (``lmscope.lab.recall.experiment``).

- the task as a text the one trainer reads: the training examples written as one file,
  cut so that the trainer's stream batches hand out one whole example per chunk;
- ``AnswersOnly``: a family's adapter whose loss counts the answers alone, every example
  from a fresh state;
- equal sizes: a GPT per width, each recurrent model with the hidden size whose parameter
  count is nearest it, and the memory each holds when an answer is due.
"""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F

from lmscope.lab.progress import loss_bar
from lmscope.lab.race import BETA2, GRAD_CLIP, LABELS, NEVER
from lmscope.lab.recall.config import RecallConfig
from lmscope.lab.recall.task import (
    ALPHABET,
    TaskShape,
    kv_cache_bytes,
    make_examples,
    rnn_state_bytes,
    tokens_read,
)
from lmscope.lab.results import say, shown
from lmscope.lab.sizes import matched_hidden
from lmscope.models.gpt2 import GPT, GPTConfig
from lmscope.tokenizers import CharTokenizer
from lmscope.train import ModelAdapter, TrainConfig, Trainer

WARMUP = 50  # steps of linear warm-up, for every model
MAX_CHUNKS = 4000  # examples per training stream; longer runs read them again


# --- the task as a text the one trainer reads --------------------------------------------------
def task_shape(cfg: RecallConfig) -> TaskShape:
    return TaskShape(max_items=cfg.items, max_distance=cfg.distance, queries=cfg.queries)


def char_tokenizer() -> CharTokenizer:
    """The vocabulary the trainer builds from the corpus: its sorted distinct characters."""
    return CharTokenizer(sorted(ALPHABET))


def write_corpus(cfg: RecallConfig, shape: TaskShape, folder: Path) -> tuple[Path, float]:
    """Write the training examples as one text file; return it and the validation fraction
    that cuts it where the last training example ends.

    The trainer's stream batches cut the training split into ``batch`` streams and read each
    ``context`` characters at a time: with every stream exactly k examples long and the
    context one example, each chunk is one whole example. The validation part (a few more
    examples and the alphabet, so the vocabulary is complete) is never evaluated."""
    per_stream = min(cfg.steps, MAX_CHUNKS - 1) + 1  # a stream keeps its last example unread
    train = make_examples(shape, cfg.batch * per_stream, seed=[cfg.seed, 1]).lines()
    # the trainer sets up stream batches over the validation split too: one chunk per row
    val = make_examples(shape, cfg.batch + 2, seed=[cfg.seed, 3]).lines() + ALPHABET
    text = train + val
    fraction = (len(val) - cfg.batch / 2) / len(text)  # the cut lands half a stream row past
    cut = int(len(text) * (1.0 - fraction))  # as lmscope.data.train_val_split cuts
    if not len(train) <= cut < len(train) + cfg.batch:
        raise AssertionError(f"recall corpus cut at {cut}, not after {len(train)} characters")
    path = folder / "recall-task.txt"
    path.write_text(text, encoding="ascii")
    return path, fraction


class AnswersOnly(ModelAdapter):
    """A family's adapter (``lmscope.train.adapters``) that scores the answers alone.

    The loss is the cross-entropy at the positions right after a query's "?" (where the
    next character is the answer); every example starts from a fresh state, so nothing
    carries from one batch to the next (``stateful`` False)."""

    stateful = False
    default_batches = "stream"

    def __init__(self, base: ModelAdapter, query_id: int):
        self.base, self.query_id = base, query_id
        self.arch = f"recall-{base.arch}"

    def model_config(self, cfg, vocab_size):
        return self.base.model_config(cfg, vocab_size)

    def build(self, config):
        return self.base.build(config)

    def config_of(self, model):
        return self.base.config_of(model)

    def describe(self, cfg):
        return self.base.describe(cfg)

    def logits(self, net, x):
        return self.base.forward(net, x, None, None)[0]

    def forward(self, net, x, targets, state):
        logits = self.logits(net, x)
        mask = answer_positions(x, self.query_id)
        return logits, F.cross_entropy(logits[mask].float(), targets[mask]), None


def answer_positions(ids: torch.Tensor, query_id: int) -> torch.Tensor:
    """True where the next character is an answer: the position digit right after "?"."""
    mask = torch.zeros_like(ids, dtype=torch.bool)
    mask[:, 1:] = ids[:, :-1] == query_id
    return mask


# --- the models --------------------------------------------------------------------------------
def gpt_params(cfg: RecallConfig, vocab: int, width: int, context: int) -> int:
    heads = width // cfg.gpt_head_dim
    config = GPTConfig(
        vocab_size=vocab, n_ctx=context, n_embd=width, n_layer=cfg.gpt_layers, n_head=heads
    )
    return GPT(config).num_params()


def model_shapes(cfg: RecallConfig, vocab: int, context: int) -> list[dict]:
    """Every (size, model) to train: the GPT's width and each recurrent model's matched hidden
    size, with the state it keeps."""
    plans = []
    for width in cfg.sizes:
        target = gpt_params(cfg, vocab, width, context)
        for arch in cfg.models:
            if arch == "gpt":
                heads = width // cfg.gpt_head_dim
                shape = say("lab.shape.gpt", layers=cfg.gpt_layers, heads=heads, width=width)
                plan = {"dim": width, "layers": cfg.gpt_layers, "heads": heads}
                plan["kv_bytes_per_token"] = kv_cache_bytes(cfg.gpt_layers, width, 1)
                plan["state_bytes"] = None
            else:
                hidden = matched_hidden(arch, vocab, cfg.rnn_layers, target)
                shape = say("lab.shape.rnn", layers=cfg.rnn_layers, hidden=hidden)
                plan = {"dim": hidden, "layers": cfg.rnn_layers, "heads": 1}
                plan["kv_bytes_per_token"] = None
                plan["state_bytes"] = rnn_state_bytes(arch, hidden, cfg.rnn_layers)
            plans.append(
                {"size": width, "arch": arch, "model": LABELS[arch], "shape": shape, **plan}
            )
    return plans


def memory_at(plan: dict, items: int, distance: int) -> int:
    """Bytes the model holds when the first answer is due: a recurrent model's state, or the
    GPT's KV cache over every character read so far."""
    if plan["arch"] == "gpt":
        return kv_cache_bytes(plan["layers"], plan["dim"], tokens_read(items, distance))
    return plan["state_bytes"]


def train_config(cfg: RecallConfig, plan: dict, corpus: Path, fraction: float, context: int, out):
    return TrainConfig(
        data=str(corpus),
        tokenizer="char",
        val_fraction=fraction,
        arch=f"recall-{plan['arch']}",
        layers=plan["layers"],
        heads=plan["heads"],
        dim=plan["dim"],
        context=context,
        batch=cfg.batch,
        batches="stream",
        iters=cfg.steps,
        optimizer="adamw",
        lr=cfg.lr,
        min_lr=cfg.lr / 10,
        warmup=min(WARMUP, cfg.steps // 10),
        weight_decay=0.0,
        beta2=BETA2,
        grad_clip=GRAD_CLIP,
        eval_every=0,  # the tests below are the evaluation
        sample_every=0,
        log_every=NEVER,
        seed=cfg.seed,
        out=str(out),
        device=cfg.device,
    )


class StepWatch:
    """The trainer's ``on_step`` hook: adds up step times, stops a run that spends its time
    budget, and moves the progress bar."""

    def __init__(self, budget_s: float | None, show=None):
        self.budget_s, self.show = budget_s, show
        self.elapsed, self.steps, self.stopped = 0.0, 0, False

    def __call__(self, info) -> None:
        self.elapsed += info.step_s
        self.steps = info.iteration
        if self.budget_s is not None and self.elapsed >= self.budget_s:
            info.stop = self.stopped = True
        if self.show is not None:
            self.show(info.iteration, info.loss)


def train_model(cfg, plan, corpus, fraction, context, tmp: Path, progress=None):
    """Train one model; return (model, adapter, what the run did)."""
    label = say(
        "lab.recall.progress", model=plan["model"], size=str(plan["size"]), shape=plan["shape"]
    )
    show = loss_bar(progress, shown(label), cfg.steps)
    watch = StepWatch(cfg.budget_s, show)
    out = tmp / f"{plan['arch']}-{plan['size']}"
    trainer = Trainer(
        train_config(cfg, plan, corpus, fraction, context, out),
        progress=False,
        log=lambda text: None,
        on_step=watch,
    )
    run = trainer.run()
    if list(trainer.tokenizer.chars) != list(char_tokenizer().chars):
        raise AssertionError("the trainer's vocabulary differs from the task's alphabet")
    tail = run.losses[-max(1, len(run.losses) // 20) :]
    done = {
        "steps": run.iteration,
        "train_s": watch.elapsed,
        "loss_end": sum(tail) / len(tail),
        "stopped_by_budget": watch.stopped and run.iteration < cfg.steps,
        "params": sum(p.numel() for p in trainer.model.parameters()),
    }
    return trainer.model.eval(), trainer.adapter, done
