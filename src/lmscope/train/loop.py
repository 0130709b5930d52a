"""The training loop: set up (fresh or resumed), step, evaluate, sample, checkpoint."""

from __future__ import annotations

import gc
import hashlib
import math
import random
import sys
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from lmscope.data import encode_corpus, load_corpus
from lmscope.data.cache import hash_saved_files
from lmscope.engine import machine_memory
from lmscope.errors import CheckpointError, InvalidInputError, LmscopeError
from lmscope.formats import atomic, checkpoints
from lmscope.formats.layout import read_json
from lmscope.i18n import Message, text
from lmscope.models.state import load_checked
from lmscope.tokenizers import CharTokenizer, gpt2_tokenizer, load_tokenizer, train_bpe
from lmscope.tokenizers.gpt2 import BPETokenizer
from lmscope.train import distributed, timeline
from lmscope.train.adapters import get_adapter
from lmscope.train.batches import eval_batches, make_batches, min_tokens
from lmscope.train.config import TrainConfig, check_resumable, parse_tokenizer_spec, same_data
from lmscope.train.optim import load_optimizer_state, lr_at, make_optimizer, set_lr
from lmscope.train.progress import Reporter


class TrainingDiverged(LmscopeError):
    """The loss (or the gradient norm) stopped being a finite number."""


@dataclass
class StepInfo:
    """What ``on_step`` callbacks receive after every optimizer step.

    A callback may set ``evaluate`` (evaluate right after this step, in a run with
    ``eval_every`` > 0) or ``stop`` (end the run after this step, with the final evaluation
    and checkpoint as if ``iters`` were reached): how a caller trains for a time budget or
    evaluates on its own schedule. Under DDP every process must decide the same.
    """

    iteration: int  # optimizer steps done so far
    loss: float  # mean training loss of this step (averaged over processes)
    local_loss: float  # this process's own loss (differs per rank under DDP)
    lr: float
    tokens_per_s: float
    step_s: float = 0.0  # this step's elapsed time
    step_cpu_s: float = 0.0  # this process's CPU time in this step (steadier on a busy machine)
    evaluate: bool = False
    stop: bool = False


@dataclass
class TrainResult:
    out: Path
    iteration: int  # optimizer steps done in total
    start_iteration: int  # where this run began (0, or the resumed checkpoint's iteration)
    losses: list[float]  # training loss of every iteration, from the first
    evals: list[dict]  # {"iteration", "train", "val"} per evaluation
    samples: list[str] = field(default_factory=list)
    wall_s: float = 0.0  # this run's time, set-up included
    train_s: float = 0.0  # time spent in optimizer steps alone
    tokens_per_s: float = 0.0

    @property
    def final_val_loss(self) -> float | None:
        return self.evals[-1]["val"] if self.evals else None


def train(cfg: TrainConfig, **options) -> TrainResult:
    """Train as ``cfg`` says and return the losses; ``options`` are ``Trainer``'s (resume,
    overwrite, progress, log, on_step)."""
    return Trainer(cfg, **options).run()


def resume_config(out: str | Path, **overrides) -> TrainConfig:
    """The config a checkpoint was trained with, with ``overrides`` applied (``out`` set)."""
    out = Path(out)
    checkpoints.recover(out)
    state = checkpoints.folder_state(out)
    if state in ("missing", "empty"):
        raise CheckpointError("error.training.nothing-to-resume", out=str(out))
    if out.exists() and not out.is_dir():
        raise CheckpointError("error.training.out-file", out=str(out))
    if state == "other":  # a new run there is refused too: do not suggest one
        raise CheckpointError("error.training.resume-other-files", out=str(out))
    saved = TrainConfig.from_dict(read_json(out / checkpoints.TRAINER_FILE).get("config"))
    if "data" in overrides and same_data(saved.data, overrides["data"]):
        del overrides["data"]  # the same file named another way: keep the path it trained on
    return saved.with_overrides(out=str(out), **overrides)


def resolve_device(name: str, local_rank: int = 0) -> torch.device:
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda":
        if not torch.cuda.is_available():
            raise InvalidInputError("error.training.no-cuda", version=str(torch.__version__))
        return torch.device("cuda", local_rank)
    return torch.device("cpu")


class Trainer:
    """One trainer for every model family (see ``lmscope.train`` for the protocol).

    ``run()`` sets up a fresh run (refusing to overwrite an ``out`` folder that holds anything
    but an lmscope checkpoint) or resumes one, trains, and writes checkpoints to ``cfg.out``
    at every evaluation and at the end. Everything that could be wrong with the inputs is
    checked before the first byte is written.
    """

    def __init__(
        self,
        cfg: TrainConfig,
        *,
        resume: bool = False,
        overwrite: bool = False,
        progress: bool | None = None,
        log: Callable[[str], None] | None = None,
        on_step: Callable[[StepInfo], None] | None = None,
    ):
        self.cfg = cfg.validate()
        self.resume, self.overwrite = resume, overwrite
        self.progress, self.log, self.on_step = progress, log, on_step
        self.adapter = get_adapter(cfg.arch)
        self.batch_kind = cfg.batches or self.adapter.default_batches
        self.dist = distributed.world_from_env()
        self.device = resolve_device(cfg.device, self.dist.local_rank)
        self.out = Path(cfg.out)
        self.reporter: Reporter | None = None
        self.notices: list[Message] = []  # said after the banner

    # --- running ------------------------------------------------------------------------------

    def run(self) -> TrainResult:
        started = time.perf_counter()
        distributed.start(self.dist, self.device.type)
        try:
            self._setup()
            result = self._loop()
            # Leave together: a rank that tears gloo down while its peer is still writing the
            # final checkpoint can abort ("terminate called without an active exception").
            # Only on success: after a failure the peer may never arrive.
            distributed.barrier(self.dist)
        finally:
            if self.reporter is not None:
                self.reporter.close()
            # DDP's reducer holds the process group and its last gloo work; left on the trainer,
            # it would be freed at interpreter exit, after the group, and can abort the process.
            if self.dist.enabled and hasattr(self, "model"):
                self.net = self.model
                gc.collect()
            distributed.stop(self.dist)
        result.wall_s = time.perf_counter() - started
        return result

    def _say(self, line: object) -> None:
        """Show a line (a Message is said in the current language)."""
        if self.reporter is not None:
            self.reporter.message(str(line))

    # --- set-up -------------------------------------------------------------------------------

    def _setup(self) -> None:
        cfg = self.cfg
        ck = self._check_out_folder()
        if later := sorted({i for i in cfg.sample_at if i > cfg.iters}):
            # allowed (a run trained in parts plans its whole timeline), but not silently
            self.notices.append(
                Message(
                    "report.training.sample-at-past",
                    later=", ".join(map(str, later)),
                    iters=str(cfg.iters),
                )
            )
        corpus = load_corpus(cfg.data)
        self.corpus_name = corpus.name
        self.tokenizer = self._tokenizer(corpus, ck)
        self._check_memory()
        encoded = encode_corpus(
            corpus,
            self.tokenizer,
            val_fraction=cfg.val_fraction,
            tokenizer_key=_tokenizer_key(self.tokenizer),
        )
        self.data_key = encoded.key
        if ck is not None and ck.trainer.get("data_key") != encoded.key:
            raise CheckpointError(
                "error.training.data-differs", data=repr(cfg.data), out=str(self.out)
            )
        self._check_sizes(len(encoded.train), len(encoded.val))

        self.model = self._build_model(ck)
        self.optimizer = make_optimizer(self.model, cfg, self.device.type)
        self.batches = make_batches(
            self.batch_kind, encoded.train, cfg.batch, cfg.context, cfg.seed, *self._rank_world()
        )
        n_eval = cfg.eval_iters if cfg.eval_every else 0
        self.eval_sets = {
            split: eval_batches(
                self.batch_kind, data, cfg.batch, cfg.context, n_eval, cfg.seed, *self._rank_world()
            )
            for split, data in (("train", encoded.train), ("val", encoded.val))
        }
        self.prompt_ids = _sample_prompt(self.tokenizer, encoded.train)
        self.state = None  # what a stateful model carries from one batch to the next
        self.iteration, self.losses, self.evals = 0, [], []
        self.timeline: list[dict] = []  # samples at cfg.sample_at (see lmscope.train.timeline)
        if ck is not None:
            self._restore(ck)
        else:
            self._seed_generators()
        self.start_iteration = self.saved_iteration = self.iteration
        self.net = self._wrap_ddp(self.model)
        self.autocast = (
            torch.autocast(self.device.type, dtype=torch.bfloat16)
            if cfg.dtype == "bfloat16"
            else nullcontext()
        )
        if self.dist.is_main:
            self.reporter = Reporter(
                cfg.iters, self.iteration, bar=self.progress, log=self.log, log_every=cfg.log_every
            )
        self._announce(len(encoded.train), len(encoded.val), resumed=ck is not None)
        for notice in self.notices:
            self._say(notice)
        if self.iteration >= cfg.iters:
            self._say(
                Message("report.training.nothing-to-do", out=str(self.out), i=str(self.iteration))
            )
        if ck is None:
            self._save()  # claims the folder and keeps the tokenizer (a trained BPE) from now on

    def _rank_world(self) -> tuple[int, int]:
        return self.dist.rank, self.dist.world

    def _check_out_folder(self) -> checkpoints.Checkpoint | None:
        """Make sure ``out`` may be written; on resume return its checkpoint."""
        if self.dist.is_main:
            checkpoints.recover(self.out)
        distributed.barrier(self.dist)
        state = checkpoints.folder_state(self.out)
        problem = atomic.cannot_write(self.out)
        if problem is not None:  # said now, not after the minutes before the first save
            if problem.values.get("path") == str(self.out):  # not "--out x: x is a file"
                raise InvalidInputError("error.training.out-is-file", out=str(self.out))
            raise InvalidInputError(
                "error.training.out-problem", out=str(self.out), problem=problem
            )
        if self.resume:
            ck = checkpoints.load_checkpoint(self.out, recover_first=self.dist.is_main)
            saved = TrainConfig.from_dict(ck.trainer["config"])
            check_resumable(saved, self.cfg, str(self.out))
            if saved.lr != self.cfg.lr:  # allowed, unlike the settings above, but said aloud
                self.notices.append(
                    Message(
                        "report.training.lr-changed",
                        before=f"{saved.lr:g}",
                        now=f"{self.cfg.lr:g}",
                        i=str(ck.iteration),
                    )
                )
            return ck
        if state == "other":
            raise InvalidInputError("error.training.foreign-files", out=str(self.out))
        if self.cfg.iters == 0:  # a new run of no steps would write an untrained checkpoint
            raise InvalidInputError("error.training.zero-iters")
        if state == "checkpoint" and not self.overwrite:
            done = checkpoints.checkpoint_iteration(self.out)
            raise InvalidInputError("error.training.has-checkpoint", out=str(self.out), i=str(done))
        distributed.barrier(self.dist)  # every process has looked before rank 0 writes
        return None

    def _tokenizer(self, corpus, ck):
        if ck is not None:
            try:
                return load_tokenizer(self.out)
            except LmscopeError as err:
                raise CheckpointError("error.training.tokenizer-unusable", why=err) from None
        kind, size = parse_tokenizer_spec(self.cfg.tokenizer)
        if kind == "char":
            return CharTokenizer.from_text(corpus.text)
        if kind == "gpt2":
            return gpt2_tokenizer()
        train_text, _ = corpus.split(self.cfg.val_fraction)
        show = self.dist.is_main and self.progress is not False
        bpe = train_bpe(train_text, size, show_progress=show and sys.stderr.isatty())
        return BPETokenizer(bpe)  # tiktoken speed for encoding the corpus

    def _check_sizes(self, n_train: int, n_val: int) -> None:
        cfg = self.cfg
        need = min_tokens(self.batch_kind, cfg.batch, cfg.context, self.dist.world)
        splits = [("error.training.part.training", n_train)]
        splits += [("error.training.part.validation", n_val)] if cfg.eval_every else []
        flag = "--seq" if self.adapter.stateful else "--context"  # the char-RNNs' own name
        for split, have in splits:
            if have < need:
                raise InvalidInputError(
                    "error.training.split-too-small-stream"
                    if self.batch_kind == "stream"
                    else "error.training.split-too-small",
                    flag=flag,
                    context=str(cfg.context),
                    need=need,
                    split=Message(split),
                    data=repr(cfg.data),
                    have=have,
                )

    def _check_memory(self) -> None:
        """Refuse, before building anything, a model whose training state cannot fit: building
        one that does not takes minutes and ends in an allocation error that blames the batch."""
        params = count_parameters(self.adapter, self.cfg, self.tokenizer.vocab_size)
        # float32 weights and gradients, and the optimizer's moments (2 for Adam, 1 for RMSprop)
        moments = 1 if self.cfg.optimizer == "rmsprop" else 2
        need = params * 4 * (2 + moments)
        if self.device.type == "cpu":
            need *= self.dist.world  # every process on this machine holds a copy
        have = available_memory(self.device)
        if have is None:
            return
        gpu = self.device.type == "cuda"
        where = Message("error.training.part.gpu-memory" if gpu else "error.training.part.memory")
        if need > have:
            raise InvalidInputError(
                "error.training.model-memory",
                arch=self.cfg.arch,
                params=params,
                need=_size(need),
                optimizer=self.cfg.optimizer,
                have=_size(have),
                where=where,
            )
        cfg = self.cfg
        act, quadratic = activation_bytes(self.adapter, cfg, self.tokenizer.vocab_size, self.device)
        if self.device.type == "cpu":
            act *= self.dist.world
        if need + act > have:
            flag = "--seq" if self.adapter.stateful else "--context"  # the char-RNNs' own name
            raise InvalidInputError(
                "error.training.batch-memory-dropout"
                if quadratic
                else "error.training.batch-memory",
                batch=str(cfg.batch),
                flag=flag,
                context=str(cfg.context),
                act=_size(act),
                dropout=f"{cfg.dropout:g}",
                need=_size(need),
                optimizer=cfg.optimizer,
                have=_size(have),
                where=where,
            )

    def _build_model(self, ck) -> nn.Module:
        config = self.adapter.model_config(self.cfg, self.tokenizer.vocab_size)
        torch.manual_seed(self.cfg.seed)  # the same initial weights on every process
        model = self.adapter.build(config)
        if ck is not None:
            if ck.meta.get("arch") != self.cfg.arch:
                raise CheckpointError(
                    "error.training.arch-mismatch",
                    out=str(self.out),
                    found=f"{ck.meta.get('arch')!r:.40}",
                    arch=repr(self.cfg.arch),
                )
            load_checked(model, ck.weights, str(self.out))
        return model.to(self.device).train()

    def _seed_generators(self) -> None:
        # After the model is built: processes share initial weights but not dropout masks.
        seed = self.cfg.seed + self.dist.rank
        torch.manual_seed(seed)
        np.random.seed(seed % 2**32)
        random.seed(seed)

    def _restore(self, ck: checkpoints.Checkpoint) -> None:
        load_optimizer_state(self.optimizer, ck.optimizer)
        self.batches.load_state_dict(ck.trainer.get("batches"))
        history = ck.trainer.get("history") or {}
        self.iteration = ck.iteration
        self.losses = [float(x) for x in history.get("losses", [])]
        self.evals = list(history.get("evals", []))
        self.timeline = list(history.get("timeline", []))
        if len(self.losses) != self.iteration:
            raise CheckpointError(
                "error.training.history-damaged",
                out=str(self.out),
                n=len(self.losses),
                i=str(self.iteration),
            )
        if self.dist.is_main:
            # Only rank 0's generators were saved; other processes start from fresh seeds.
            try:
                checkpoints.restore_rng(ck.rng)
            except (RuntimeError, ValueError, TypeError, KeyError) as err:
                raise CheckpointError("error.training.rng", why=str(err)) from None
            self.state = _to_device(ck.carry, self.device)
        else:
            seed = self.cfg.seed + 7919 * self.dist.rank + self.iteration
            torch.manual_seed(seed)
            np.random.seed(seed % 2**32)
            random.seed(seed)

    def _wrap_ddp(self, model: nn.Module) -> nn.Module:
        if not self.dist.enabled:
            return model
        ids = [self.device.index] if self.device.type == "cuda" else None
        # an expert no token of a batch chose has no gradient there: DDP must look for such
        return DistributedDataParallel(
            model, device_ids=ids, find_unused_parameters=self.adapter.unused_parameters
        )

    def _announce(self, n_train: int, n_val: int, resumed: bool) -> None:
        cfg = self.cfg
        params = sum(p.numel() for p in self.model.parameters())
        where: object = str(self.out)
        if resumed:
            where = Message("report.training.resuming", out=str(self.out), i=str(self.iteration))
        procs: object = ""
        if self.dist.enabled:
            procs = Message("report.training.processes", n=self.dist.world)
        count = f"{params / 1e6:.2f}M" if params >= 1e6 else f"{params:,}"  # never "0.00M"
        self._say(
            Message(
                "report.training.announce",
                arch=cfg.arch,
                count=count,
                shape=self.adapter.describe(cfg),
                corpus=self.corpus_name,
                train=n_train,
                val=n_val,
                tokenizer=self.tokenizer.name,
                vocab=self.tokenizer.vocab_size,
                device=str(self.device),
                procs=procs,
                where=where,
            )
        )

    # --- the loop -----------------------------------------------------------------------------

    def _loop(self) -> TrainResult:
        cfg = self.cfg
        tokens_per_step = cfg.batch * cfg.context * cfg.accum * self.dist.world
        train_s, speed, samples = 0.0, 0.0, []
        if self.iteration == 0 and 0 in cfg.sample_at:
            self._timeline_sample()  # the untrained model: pure noise
        for it in range(self.iteration, cfg.iters):
            lr = lr_at(it, cfg)
            set_lr(self.optimizer, lr)
            began, began_cpu = time.perf_counter(), time.process_time()
            loss, local = self._step(it)
            elapsed = time.perf_counter() - began
            elapsed_cpu = time.process_time() - began_cpu
            train_s += elapsed
            now = tokens_per_step / max(elapsed, 1e-9)
            speed = now if speed == 0.0 else 0.9 * speed + 0.1 * now
            self.iteration = it + 1
            self.losses.append(loss)
            if self.reporter is not None:
                self.reporter.step(self.iteration, loss, lr, speed)
            info = StepInfo(self.iteration, loss, local, lr, speed, elapsed, elapsed_cpu)
            if self.on_step is not None:
                self.on_step(info)
            last = self.iteration == cfg.iters or info.stop
            due = cfg.eval_every and (self.iteration % cfg.eval_every == 0 or last)
            if due or (info.evaluate and cfg.eval_every):
                self._evaluate()
            if cfg.sample_every and (self.iteration % cfg.sample_every == 0 or last):
                text = self._sample()
                if text is not None:
                    samples.append(text)
            if self.iteration in cfg.sample_at:
                self._timeline_sample()
            if cfg.eval_every and self.iteration % cfg.eval_every == 0:
                self._save()
            if info.stop:
                break
        if self.saved_iteration != self.iteration:
            self._save()
        done = self.iteration - self.start_iteration
        return TrainResult(
            out=self.out,
            iteration=self.iteration,
            start_iteration=self.start_iteration,
            losses=list(self.losses),
            evals=list(self.evals),
            samples=samples,
            train_s=train_s,
            tokens_per_s=done * tokens_per_step / train_s if train_s else 0.0,
        )

    def _step(self, it: int) -> tuple[float, float]:
        """One optimizer step over ``accum`` micro-batches; returns (mean loss, local loss)."""
        cfg = self.cfg
        total = 0.0
        for micro in range(cfg.accum):
            batch = next(self.batches)
            x, y = batch.x.to(self.device), batch.y.to(self.device)
            if self.adapter.stateful and (self.state is None or batch.new_epoch):
                self.state = self.adapter.initial_state(self.model, x.shape[0], self.device)
            # DDP averages gradients on the last micro-batch only; earlier ones just accumulate.
            last = micro == cfg.accum - 1
            sync = nullcontext() if last or not self.dist.enabled else self.net.no_sync()
            with sync:
                with self.autocast:
                    _, loss, state = self.adapter.forward(self.net, x, y, self.state)
                (loss / cfg.accum).backward()
            self.state = self.adapter.detach_state(state)
            total += loss.item()
        local = total / cfg.accum
        mean = distributed.mean_over_ranks(local, self.dist, self.device)
        grad_norm = None
        if cfg.grad_clip > 0:
            grad_norm = float(nn.utils.clip_grad_norm_(self.model.parameters(), cfg.grad_clip))
        bad = None
        if not math.isfinite(mean):
            bad = Message("error.training.part.loss-became", value=str(mean))
        elif grad_norm is not None and not math.isfinite(grad_norm):
            bad = Message("error.training.part.grad-became", value=str(grad_norm))
        if bad is not None:
            self.optimizer.zero_grad(set_to_none=True)
            # only advice that applies: clipping to turn on, a precision to raise
            low_precision = cfg.dtype != "float32"
            if cfg.grad_clip <= 0:
                tips = (
                    "error.training.tips-no-clip-dtype"
                    if low_precision
                    else "error.training.tips-no-clip"
                )
            else:
                tips = (
                    "error.training.tips-clip-dtype"
                    if low_precision
                    else "error.training.tips-clip"
                )
            raise TrainingDiverged(
                "error.training.diverged",
                bad=bad,
                i=str(it + 1),
                saved=str(self.saved_iteration),
                out=str(self.out),
                tips=Message(tips),
            )
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        return mean, local

    @torch.no_grad()
    def _estimate(self, batches) -> float:
        self.model.eval()
        state, total = None, 0.0
        for batch in batches:
            x, y = batch.x.to(self.device), batch.y.to(self.device)
            if self.adapter.stateful and (state is None or batch.new_epoch):
                state = self.adapter.initial_state(self.model, x.shape[0], self.device)
            with self.autocast:
                _, loss, state = self.adapter.forward(self.model, x, y, state)
            total += loss.item()
        self.model.train()
        return distributed.mean_over_ranks(total / len(batches), self.dist, self.device)

    def _evaluate(self) -> None:
        losses = {split: self._estimate(batches) for split, batches in self.eval_sets.items()}
        self.evals.append({"iteration": self.iteration, **losses})
        self._say(
            Message(
                "report.training.eval",
                i=str(self.iteration),
                train=f"{losses['train']:.4f}",
                val=f"{losses['val']:.4f}",
            )
        )

    def _sample(self) -> str | None:
        if not self.dist.is_main:
            return None
        try:
            sample = self.adapter.sample(
                self.model,
                self.tokenizer,
                self.prompt_ids,
                self.cfg.sample_length,
                self.cfg.seed + self.iteration,
            )
        finally:
            self.model.train()
        if sample is not None:
            header = text("report.training.sample", i=str(self.iteration))
            self._say(f"--- {header} ---\n{sample}\n---")
        return sample

    def _timeline_sample(self) -> None:
        """A sample for the timeline: always the run's seed and prime, so only weights differ."""
        if not self.dist.is_main:
            return
        try:
            sample = self.adapter.sample(
                self.model, self.tokenizer, self.prompt_ids, self.cfg.sample_length, self.cfg.seed
            )
        finally:
            self.model.train()
        if sample is None:
            return
        last_eval = self.evals[-1] if self.evals else {}
        val = last_eval.get("val") if last_eval.get("iteration") == self.iteration else None
        train_loss = self.losses[-1] if self.losses else None
        new = timeline.entry(self.iteration, sample, train_loss, val)
        self.timeline = timeline.add(self.timeline, new)
        header = text("report.training.timeline-sample", i=str(self.iteration))
        self._say(f"--- {header} ---\n{sample}\n---")

    def _timeline_files(self) -> dict[str, bytes]:
        if not self.timeline:
            return {}
        info = {
            "arch": self.cfg.arch,
            "corpus": self.corpus_name,
            "prime": self.tokenizer.decode(self.prompt_ids),
            "seed": self.cfg.seed,
            "length": self.cfg.sample_length,
        }
        return timeline.files(self.timeline, info)

    def _save(self) -> None:
        """Rank 0 writes the checkpoint; every rank learns whether it could, so that on a
        failure all stop here together (a rank going on would wait for rank 0 in the next
        gradient exchange until torchrun killed it)."""
        failure = None
        if self.dist.is_main:
            try:
                self._save_checkpoint()
            except LmscopeError as err:
                failure = err
        if distributed.main_says(failure is not None, self.dist, self.device):
            raise failure or LmscopeError(
                "error.training.rank0-failed", i=str(self.iteration), out=str(self.out)
            )
        self.saved_iteration = self.iteration

    def _save_checkpoint(self) -> None:
        last_val = self.evals[-1]["val"] if self.evals else None
        tokens = self.iteration * self.cfg.batch * self.cfg.context * self.cfg.accum
        trainer_state = {
            "iteration": self.iteration,
            "config": self.cfg.to_dict(),
            "data_key": self.data_key,
            "world_size": self.dist.world,
            "batches": self.batches.state_dict(),
            "history": {"losses": self.losses, "evals": self.evals, "timeline": self.timeline},
        }
        meta = {
            "name": self.out.resolve().name,
            "tokenizer": self.tokenizer.name,
            "training": {
                "corpus": self.corpus_name,
                "iteration": self.iteration,
                "tokens": tokens * self.dist.world,
                "val_loss": last_val,
            },
        }
        try:
            self._write_checkpoint(trainer_state, meta)
        except OSError as err:  # a full disk, a folder taken away: the last checkpoint stands
            kept = Message("error.training.part.nothing-saved")
            if checkpoints.is_checkpoint(self.out):
                kept = Message(
                    "error.training.part.kept", i=str(self.saved_iteration), out=str(self.out)
                )
            raise LmscopeError(
                "error.training.cannot-save",
                i=str(self.iteration),
                out=str(self.out),
                why=str(err.strerror or err),
                kept=kept,
            ) from None

    def _write_checkpoint(self, trainer_state: dict, meta: dict) -> None:
        checkpoints.save_checkpoint(
            self.out,
            arch=self.cfg.arch,
            model_config=self.adapter.config_of(self.model),
            weights=self.model.state_dict(),
            tokenizer=self.tokenizer,
            optimizer_state=self.optimizer.state_dict(),
            trainer_state=trainer_state,
            rng_state=checkpoints.capture_rng(),
            carry=self.state,
            meta=meta,
            extra_files=self._timeline_files(),
        )


def count_parameters(adapter, cfg: TrainConfig, vocab_size: int) -> int:
    """The model's parameter count without allocating it: one- and two-layer versions are built
    on the meta device (no memory) and every further layer adds what the second one did."""

    def count(layers: int) -> int:
        config = adapter.model_config(cfg.with_overrides(layers=layers), vocab_size)
        with torch.device("meta"):
            return sum(p.numel() for p in adapter.build(config).parameters())

    one = count(1)
    return one if cfg.layers == 1 else one + (cfg.layers - 1) * (count(2) - one)


# Floats one layer keeps per token for the backward pass, in units of the model's width: the
# inputs and outputs of its norms, Q/K/V, attention output and projections, and the MLP's 4x
# hidden layer before and after its activation (about 16 for a GPT block, 12 for an LSTM layer;
# measured with torch.autograd.graph.saved_tensors_hooks). Rounded up, as gradients pass too.
SAVED_PER_LAYER = 18
# Bytes per attention weight where the attention is not fused: the weights, the dropout mask,
# the dropped weights, and their gradients while the backward pass runs (measured: about 16).
SAVED_PER_ATTENTION_WEIGHT = 16


def activation_bytes(adapter, cfg: TrainConfig, vocab_size: int, device: torch.device):
    """About how much memory one micro-batch's forward pass keeps for its backward pass, and
    whether that holds the context x context attention weights.

    Linear in ``batch * context``: every layer's activations, and the logits with their
    softmax. PyTorch's fused attention never holds the attention weights, but on the CPU it
    has no dropout: with dropout > 0 the attention is computed in full, context^2 per head."""
    tokens = cfg.batch * cfg.context
    width = 2 if cfg.dtype == "bfloat16" else 4
    per_token = cfg.layers * SAVED_PER_LAYER * cfg.dim * width + 3 * vocab_size * 4
    total = tokens * per_token
    quadratic = not adapter.stateful and device.type == "cpu" and cfg.dropout > 0
    if quadratic:
        weights = cfg.layers * cfg.batch * cfg.heads * cfg.context**2
        total += weights * SAVED_PER_ATTENTION_WEIGHT
    return total, quadratic


def available_memory(device: torch.device) -> int | None:
    """Bytes free for a new model on ``device`` (None when it cannot be told); on the CPU within
    the container's memory limit, which /proc/meminfo does not show."""
    if device.type != "cuda":
        return machine_memory.available_bytes()
    try:
        return int(torch.cuda.mem_get_info(device)[0])
    except (RuntimeError, AttributeError):
        return None


def _size(n_bytes: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:,.1f} {unit}"
    return f"{n_bytes / 1e3:,.1f} kB"


def _to_device(carry, device: torch.device):
    if carry is None:
        return None
    if isinstance(carry, torch.Tensor):
        return carry.to(device)
    return tuple(t.to(device) for t in carry)


def _tokenizer_key(tokenizer) -> str:
    """A hash of the tokenizer's files (not its display name), so a tokenizer read back from a
    checkpoint maps the corpus to the same cache entry as the one that was trained."""
    digest = hashlib.sha256(f"vocab={tokenizer.vocab_size}".encode())
    return f"files:{hash_saved_files(tokenizer, digest).hexdigest()}"


def _sample_prompt(tokenizer, train_ids) -> list[int]:
    """Samples start from a newline, as nanoGPT's do, or from the corpus's first token."""
    try:
        ids = tokenizer.encode("\n")
    except LmscopeError:
        ids = []
    return ids or [int(train_ids[0])]
