"""``lmscope train``: train a GPT, a mixture of experts or a char-RNN/LSTM/GRU on a corpus;
write a checkpoint folder.

Under ``torchrun --nproc_per_node N -m lmscope train ...`` the same command trains with DDP.
"""

from __future__ import annotations

import sys
from pathlib import Path

from lmscope import i18n
from lmscope.commands.common import listed, refuse_below, run_seed_value
from lmscope.data.corpora import corpus_names
from lmscope.errors import InvalidInputError
from lmscope.train.config import BATCH_KINDS, DEVICES, DTYPES, OPTIMIZERS, TrainConfig

_DEFAULTS = TrainConfig()


def _unset(group, type_, *flags: str, **settings) -> None:
    """Options of which only what the user typed overrides a checkpoint; each help shows
    TrainConfig's default."""
    for flag in flags:
        group.unset(_DEFAULTS, flag, type_, **settings)


def register(commands):
    p = commands.add("train", run)
    data = p.group("help.group.data")
    # the names from the one list the "unknown corpus" error shows too
    _unset(data, str, "--data", values={"corpora": listed(corpus_names())})
    _unset(data, str, "--tokenizer")

    model = p.group("help.group.model")
    _unset(model, str, "--arch")
    _unset(model, int, "--layers", "--heads", "--dim", "--context")
    _unset(model, float, "--dropout")
    model.option("--hidden", type=int, default=None)
    model.option("--seq", type=int, default=None)
    _unset(model, int, "--embed")
    _unset(model, int, "--experts", "--experts-used")

    opt = p.group("help.group.optimisation")
    _unset(opt, int, "--batch", "--accum", "--iters")
    _unset(opt, str, "--optimizer", choices=OPTIMIZERS)
    _unset(opt, float, "--lr", "--min-lr")
    _unset(opt, int, "--warmup", "--decay-iters")
    _unset(opt, float, "--weight-decay", "--beta1", "--beta2", "--grad-clip")
    _unset(opt, str, "--batches", choices=BATCH_KINDS)

    run_group = p.group("help.group.run")
    _unset(run_group, int, "--eval-every", "--eval-iters", "--sample-every", "--sample-length")
    run_group.option("--sample-at", default=None, metavar="N,N,...")
    _unset(run_group, int, "--log-every")
    _unset(run_group, run_seed_value, "--seed")
    _unset(run_group, str, "--out")
    _unset(run_group, str, "--device", choices=DEVICES)
    _unset(run_group, str, "--dtype", choices=DTYPES)
    run_group.switches("--resume", "--overwrite")
    run_group.flag("--no-progress")


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
        refuse_below(value, 1, f"--{alias}", "error.option.whole-at-least")
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
    if arch != "moe" and ("experts" in given or "experts_used" in given):
        flag = "--experts" if "experts" in given else "--experts-used"
        raise InvalidInputError("error.train.experts-moe-only", flag=flag, arch=arch.upper())
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
