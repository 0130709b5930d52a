"""``lmscope train``: train a GPT or a char-RNN/LSTM/GRU on a corpus; write a checkpoint folder.

Under ``torchrun --nproc_per_node N -m lmscope train ...`` the same command trains with DDP.
"""

from __future__ import annotations

import sys
from pathlib import Path

from lmscope.commands.common import add_exclusive_switches, add_unset_option, run_seed_value
from lmscope.data.corpora import corpus_names
from lmscope.errors import InvalidInputError
from lmscope.train.config import BATCH_KINDS, DEVICES, DTYPES, OPTIMIZERS, TrainConfig

_DEFAULTS = TrainConfig()


def _option(group, flag: str, type_, help_: str, **extra):
    """Only what the user typed overrides a checkpoint; the help shows TrainConfig's default."""
    add_unset_option(group, _DEFAULTS, flag, type_, help_, **extra)


def register(sub):
    p = sub.add_parser(
        "train",
        help="train a GPT or a char-RNN/LSTM/GRU on a corpus; checkpoints are model folders",
        description="Train a model and write checkpoints to --out (safetensors + JSON; the "
        "folder loads with lmscope.load and 'lmscope sample'). Defaults are nanoGPT's "
        "Shakespeare-char CPU settings; --arch lstm|gru|rnn trains a char-RNN with truncated BPTT "
        "over contiguous streams and char-rnn-like defaults (2 layers, hidden 128, 50 streams of "
        "50 characters, Adam 2e-3 decaying to 2e-4, clip 5, no weight decay). With --resume, "
        "settings you leave out come from the checkpoint. Run under "
        "'torchrun --nproc_per_node N -m lmscope train ...' for DDP.",
    )
    data = p.add_argument_group("data")
    # the names from the one list the "unknown corpus" error shows too
    corpora = ", ".join(corpus_names())
    _option(data, "--data", str, f"bundled corpus ({corpora}) or a path to a text file or folder")
    _option(data, "--tokenizer", str, "char, bpe:N (trained on the training split) or gpt2")

    model = p.add_argument_group("model")
    _option(model, "--arch", str, "model family: gpt, lstm, gru or rnn")
    _option(model, "--layers", int, "number of blocks")
    _option(model, "--heads", int, "attention heads per block")
    _option(model, "--dim", int, "width of the residual stream (char-RNNs: the hidden size)")
    _option(model, "--context", int, "tokens per training window (char-RNNs: per BPTT chunk)")
    _option(model, "--dropout", float, "dropout rate")
    model.add_argument(
        "--hidden", type=int, default=None, help="char-RNNs: hidden units per layer (= --dim)"
    )
    model.add_argument(
        "--seq", type=int, default=None, help="char-RNNs: characters per BPTT chunk (= --context)"
    )
    _option(model, "--embed", int, "char-RNNs: input embedding width; 0 = one-hot input")

    opt = p.add_argument_group("optimisation")
    _option(opt, "--batch", int, "sequences per micro-batch (per process)")
    _option(opt, "--accum", int, "micro-batches per optimizer step (gradient accumulation)")
    _option(opt, "--iters", int, "optimizer steps in total")
    _option(opt, "--optimizer", str, "optimizer", choices=OPTIMIZERS)
    _option(opt, "--lr", float, "peak learning rate")
    _option(opt, "--min-lr", float, "learning rate at the end of the cosine decay")
    _option(opt, "--warmup", int, "steps of linear warm-up")
    _option(opt, "--decay-iters", int, "step where the cosine decay ends (default: --iters)")
    _option(opt, "--weight-decay", float, "weight decay on matrices")
    _option(opt, "--beta1", float, "Adam beta1")
    _option(opt, "--beta2", float, "Adam beta2 (RMSprop: squared-gradient decay)")
    _option(opt, "--grad-clip", float, "clip the gradient norm to this; 0 = off")
    _option(opt, "--batches", str, "random windows or contiguous streams", choices=BATCH_KINDS)

    run_group = p.add_argument_group("run")
    _option(
        run_group,
        "--eval-every",
        int,
        "evaluate and checkpoint every N steps; 0: no evaluation, one checkpoint at the end",
    )
    _option(run_group, "--eval-iters", int, "batches per evaluation")
    _option(run_group, "--sample-every", int, "print a sample every N steps; 0 = never")
    _option(run_group, "--sample-length", int, "tokens per sample")
    run_group.add_argument(
        "--sample-at",
        default=None,
        metavar="N,N,...",
        help="iterations at which to keep a sample with a fixed seed and prime in the run's "
        "timeline (timeline.json, timeline.md), e.g. 100,300,1000,2000; 0 = before training",
    )
    _option(
        run_group,
        "--log-every",
        int,
        "steps between log lines when there is no progress bar; 0 = never",
    )
    _option(run_group, "--seed", run_seed_value, "random seed")
    _option(run_group, "--out", str, "checkpoint folder")
    _option(run_group, "--device", str, "where to train", choices=DEVICES)
    _option(run_group, "--dtype", str, "compute precision", choices=DTYPES)
    add_exclusive_switches(
        run_group,
        ("--resume", "continue the checkpoint in --out exactly"),
        ("--overwrite", "replace a checkpoint already in --out"),
    )
    run_group.add_argument(
        "--no-progress", action="store_true", help="log lines instead of a progress bar"
    )
    p.set_defaults(run=run)


def config_from_args(args) -> TrainConfig:
    from lmscope.data import known_corpora  # lazy: see lmscope.commands
    from lmscope.train import get_adapter, resume_config

    given = {
        name: getattr(args, name)
        for name in TrainConfig.__dataclass_fields__
        if getattr(args, name, None) is not None
    }
    for alias, field in (("hidden", "dim"), ("seq", "context")):
        value = getattr(args, alias, None)
        if value is None:
            continue
        if value < 1:
            raise InvalidInputError(f"--{alias} must be a whole number >= 1, got {value}")
        if given.get(field, value) != value:
            raise InvalidInputError(f"--{alias} and --{field} name one setting; give one of them")
        given[field] = value
    if "sample_at" in given:
        given["sample_at"] = _iterations(given["sample_at"])
    if args.resume:
        out = given.pop("out", _DEFAULTS.out)
        return resume_config(out, **given)
    data = given.get("data")
    if data and data.strip().lower() not in known_corpora() and Path(data).exists():
        # An absolute path, so --resume from another working folder finds the same corpus.
        given["data"] = str(Path(data).resolve())
    arch = given.get("arch", _DEFAULTS.arch)
    adapter = get_adapter(arch)
    # A setting the family does not have would be ignored without a word.
    if adapter.stateful and "heads" in given:
        raise InvalidInputError(
            f"--heads is a GPT setting; an {arch} has no attention heads (drop --heads)"
        )
    if not adapter.stateful and "embed" in given:
        raise InvalidInputError(
            f"--embed is a char-RNN setting; a {arch} has no separate input embedding width "
            "(its embedding is --dim wide; drop --embed)"
        )
    # Settings left out come from the model family's defaults, then from TrainConfig's.
    return TrainConfig(**{**adapter.defaults, **given})


def _iterations(text: str) -> list[int]:
    """'100,300,1000' -> [100, 300, 1000]."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts or not all(p.isdigit() for p in parts):
        raise InvalidInputError(
            f"--sample-at takes iterations separated by commas (e.g. 100,300,1000), got {text!r}"
        )
    return sorted({int(p) for p in parts})


def is_out_of_memory(err: BaseException) -> bool:
    """CPU allocators raise MemoryError or a RuntimeError naming the failed allocation; CUDA
    raises torch.OutOfMemoryError (a RuntimeError)."""
    text = str(err).lower()
    return isinstance(err, MemoryError) or "out of memory" in text or "can't allocate" in text


def run(args) -> int:
    from lmscope.formats import checkpoints  # lazy: see lmscope.commands
    from lmscope.train import train
    from lmscope.train.distributed import world_from_env

    cfg = config_from_args(args)
    try:
        result = train(
            cfg,
            resume=args.resume,
            overwrite=args.overwrite,
            progress=False if args.no_progress else None,
        )
    except (MemoryError, RuntimeError) as err:
        if not is_out_of_memory(err):
            raise
        kept = " (the last checkpoint is kept)" if checkpoints.is_checkpoint(cfg.out) else ""
        raise InvalidInputError(
            f"a batch of {cfg.batch} x {cfg.context} tokens does not fit in memory{kept}; "
            "lower --batch or --context (use --accum to keep the effective batch)"
        ) from None
    except KeyboardInterrupt:
        if world_from_env().is_main and checkpoints.is_checkpoint(cfg.out):
            done = checkpoints.checkpoint_iteration(cfg.out)
            print(
                f"stopped; the checkpoint in {cfg.out} (iteration {done}) is kept. Continue "
                f"with: lmscope train --resume --out {cfg.out}",
                file=sys.stderr,
            )
            return 130  # that line says it all; no second "interrupted" line from the CLI
        raise
    if not world_from_env().is_main:
        return 0  # under torchrun, rank 0 speaks for everyone
    val = result.final_val_loss
    summary = f"done: {result.iteration} iterations"
    if val is not None:
        summary += f", val loss {val:.4f}"
    print(f"{summary}; checkpoint in {result.out} (try: lmscope sample {result.out})")
    return 0
