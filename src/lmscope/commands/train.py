"""``lmscope train``: train a GPT or a char-RNN/LSTM/GRU on a corpus; write a checkpoint folder.

Under ``torchrun --nproc_per_node N -m lmscope train ...`` the same command trains with DDP.
"""

from __future__ import annotations

import sys
from pathlib import Path

from lmscope import i18n
from lmscope.commands.common import add_exclusive_switches, add_unset_option, listed, run_seed_value
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
        help=i18n.text("help.train.summary"),
        description=i18n.text("help.train.description"),
    )
    data = p.add_argument_group(i18n.text("help.group.data"))
    # the names from the one list the "unknown corpus" error shows too
    corpora = listed(corpus_names())
    _option(data, "--data", str, i18n.text("help.train.option.data", corpora=corpora))
    _option(data, "--tokenizer", str, i18n.text("help.train.option.tokenizer"))

    model = p.add_argument_group(i18n.text("help.group.model"))
    _option(model, "--arch", str, i18n.text("help.train.option.arch"))
    _option(model, "--layers", int, i18n.text("help.train.option.layers"))
    _option(model, "--heads", int, i18n.text("help.train.option.heads"))
    _option(model, "--dim", int, i18n.text("help.train.option.dim"))
    _option(model, "--context", int, i18n.text("help.train.option.context"))
    _option(model, "--dropout", float, i18n.text("help.train.option.dropout"))
    model.add_argument(
        "--hidden", type=int, default=None, help=i18n.text("help.train.option.hidden")
    )
    model.add_argument("--seq", type=int, default=None, help=i18n.text("help.train.option.seq"))
    _option(model, "--embed", int, i18n.text("help.train.option.embed"))

    opt = p.add_argument_group(i18n.text("help.group.optimisation"))
    _option(opt, "--batch", int, i18n.text("help.train.option.batch"))
    _option(opt, "--accum", int, i18n.text("help.train.option.accum"))
    _option(opt, "--iters", int, i18n.text("help.train.option.iters"))
    _option(opt, "--optimizer", str, i18n.text("help.train.option.optimizer"), choices=OPTIMIZERS)
    _option(opt, "--lr", float, i18n.text("help.train.option.lr"))
    _option(opt, "--min-lr", float, i18n.text("help.train.option.min-lr"))
    _option(opt, "--warmup", int, i18n.text("help.train.option.warmup"))
    _option(opt, "--decay-iters", int, i18n.text("help.train.option.decay-iters"))
    _option(opt, "--weight-decay", float, i18n.text("help.train.option.weight-decay"))
    _option(opt, "--beta1", float, i18n.text("help.train.option.beta1"))
    _option(opt, "--beta2", float, i18n.text("help.train.option.beta2"))
    _option(opt, "--grad-clip", float, i18n.text("help.train.option.grad-clip"))
    _option(opt, "--batches", str, i18n.text("help.train.option.batches"), choices=BATCH_KINDS)

    run_group = p.add_argument_group(i18n.text("help.group.run"))
    _option(
        run_group,
        "--eval-every",
        int,
        i18n.text("help.train.option.eval-every"),
    )
    _option(run_group, "--eval-iters", int, i18n.text("help.train.option.eval-iters"))
    _option(run_group, "--sample-every", int, i18n.text("help.train.option.sample-every"))
    _option(run_group, "--sample-length", int, i18n.text("help.train.option.sample-length"))
    run_group.add_argument(
        "--sample-at",
        default=None,
        metavar="N,N,...",
        help=i18n.text("help.train.option.sample-at"),
    )
    _option(
        run_group,
        "--log-every",
        int,
        i18n.text("help.train.option.log-every"),
    )
    _option(run_group, "--seed", run_seed_value, i18n.text("help.train.option.seed"))
    _option(run_group, "--out", str, i18n.text("help.train.option.out"))
    _option(run_group, "--device", str, i18n.text("help.train.option.device"), choices=DEVICES)
    _option(run_group, "--dtype", str, i18n.text("help.train.option.dtype"), choices=DTYPES)
    add_exclusive_switches(
        run_group,
        ("--resume", i18n.text("help.train.option.resume")),
        ("--overwrite", i18n.text("help.train.option.overwrite")),
    )
    run_group.add_argument(
        "--no-progress", action="store_true", help=i18n.text("help.train.option.no-progress")
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
            raise InvalidInputError(
                "error.option.whole-at-least", flag=f"--{alias}", low="1", got=str(value)
            )
        if given.get(field, value) != value:
            raise InvalidInputError("error.train.same-setting", a=f"--{alias}", b=f"--{field}")
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
        raise InvalidInputError("error.train.heads-gpt-only", arch=arch.upper())
    if not adapter.stateful and "embed" in given:
        raise InvalidInputError("error.train.embed-rnn-only", arch=arch.upper())
    # Settings left out come from the model family's defaults, then from TrainConfig's.
    return TrainConfig(**{**adapter.defaults, **given})


def _iterations(text: str) -> list[int]:
    """'100,300,1000' -> [100, 300, 1000]."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts or not all(p.isdigit() for p in parts):
        raise InvalidInputError("error.train.sample-at", got=repr(text))
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
        if checkpoints.is_checkpoint(cfg.out):
            raise InvalidInputError(
                "error.train.out-of-memory-kept", batch=str(cfg.batch), context=str(cfg.context)
            ) from None
        raise InvalidInputError(
            "error.train.out-of-memory", batch=str(cfg.batch), context=str(cfg.context)
        ) from None
    except KeyboardInterrupt:
        if world_from_env().is_main and checkpoints.is_checkpoint(cfg.out):
            done = checkpoints.checkpoint_iteration(cfg.out)
            said = i18n.text(
                "report.train.stopped",
                out=str(cfg.out),
                i=str(done),
                command=f"lmscope train --resume --out {cfg.out}",
            )
            print(said, file=sys.stderr)
            return 130  # that line says it all; no second "interrupted" line from the CLI
        raise
    if not world_from_env().is_main:
        return 0  # under torchrun, rank 0 speaks for everyone
    val = result.final_val_loss
    command = f"lmscope sample {result.out}"
    if val is not None:
        print(
            i18n.text(
                "report.train.done-val",
                n=str(result.iteration),
                loss=f"{val:.4f}",
                out=str(result.out),
                command=command,
            )
        )
    else:
        print(
            i18n.text(
                "report.train.done", n=str(result.iteration), out=str(result.out), command=command
            )
        )
    return 0
