"""``lmscope lab gradients``: how the gradient fades with distance in an RNN, an LSTM, a GRU
and a Transformer of about the same size (``lmscope.lab.gradient_flow``)."""

from __future__ import annotations

from lmscope.commands.common import listed, not_empty, run_seed_value
from lmscope.commands.lab import common as lab_common
from lmscope.commands.parsers import Commands
from lmscope.errors import InvalidInputError
from lmscope.lab.configs import GRADIENT_MODELS, GradientFlowConfig


def register(lab: Commands) -> None:
    """Add the ``gradients`` experiment to the ``lmscope lab`` subcommands."""
    p = lab.add("gradients", run)
    lab_common.add_out_option(p, "gradient-flow")
    p.option("--state", choices=("init", "trained", "both"), default="init")
    p.option("--train-iters", type=int, default=300)
    p.option("--max-k", type=int, default=256)
    p.option("--data", default="warpeace-novel")
    p.option("--embed", type=int, default=64)
    p.option("--gpt-layers", type=int, default=4)
    p.option("--gpt-heads", type=int, default=4)
    p.option("--rnn-layers", type=int, default=1)
    models = {"models": listed(GRADIENT_MODELS)}
    p.option("--models", default=",".join(GRADIENT_MODELS), values=models)
    p.option("--batches", type=int, default=4)
    p.option("--batch-size", type=int, default=8)
    p.option("--seed", type=run_seed_value, default=0)
    lab_common.add_threads_option(p)
    lab_common.add_report_options(p)


def run(args) -> int:
    from lmscope.lab.gradient_flow import run_gradient_flow  # lazy: see lmscope.commands

    states = ("init", "trained") if args.state == "both" else (args.state,)
    not_empty(args.data, "--data", "name a bundled corpus or a text file")
    archs = lab_common.comma_list(args.models)
    if not archs:
        raise InvalidInputError("error.lab.models.none", known=", ".join(GRADIENT_MODELS))
    cfg = lab_common.settings(GradientFlowConfig, args, states=states, archs=archs)
    return lab_common.run_experiment(run_gradient_flow, cfg, args)
