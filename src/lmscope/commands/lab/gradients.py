"""``lmscope lab gradients``: how the gradient fades with distance in an RNN, an LSTM, a GRU
and a Transformer of about the same size (``lmscope.lab.gradient_flow``)."""

from __future__ import annotations

from lmscope import i18n
from lmscope.commands.common import listed, not_empty, run_seed_value
from lmscope.commands.lab import common as lab_common
from lmscope.errors import InvalidInputError
from lmscope.lab.configs import GRADIENT_MODELS, GradientFlowConfig


def register(lab) -> None:
    """Add the ``gradients`` experiment to the ``lmscope lab`` subparsers."""
    p = lab.add_parser(
        "gradients",
        help=i18n.text("help.lab.gradients.summary"),
        description=i18n.text("help.lab.gradients.description"),
    )
    lab_common.add_out_option(p, "gradient-flow")
    p.add_argument(
        "--state",
        choices=("init", "trained", "both"),
        default="init",
        help=i18n.text("help.lab.gradients.option.state"),
    )
    p.add_argument(
        "--train-iters",
        type=int,
        default=300,
        help=i18n.text("help.lab.gradients.option.train-iters"),
    )
    p.add_argument(
        "--max-k", type=int, default=256, help=i18n.text("help.lab.gradients.option.max-k")
    )
    p.add_argument(
        "--data",
        default="warpeace-novel",
        help=i18n.text("help.lab.gradients.option.data"),
    )
    p.add_argument(
        "--embed", type=int, default=64, help=i18n.text("help.lab.gradients.option.embed")
    )
    p.add_argument(
        "--gpt-layers", type=int, default=4, help=i18n.text("help.lab.gradients.option.gpt-layers")
    )
    p.add_argument(
        "--gpt-heads", type=int, default=4, help=i18n.text("help.lab.gradients.option.gpt-heads")
    )
    p.add_argument(
        "--rnn-layers", type=int, default=1, help=i18n.text("help.lab.gradients.option.rnn-layers")
    )
    p.add_argument(
        "--models",
        default=",".join(GRADIENT_MODELS),
        help=i18n.text(
            "help.lab.gradients.option.models",
            models=listed(GRADIENT_MODELS),
        ),
    )
    p.add_argument(
        "--batches", type=int, default=4, help=i18n.text("help.lab.gradients.option.batches")
    )
    p.add_argument(
        "--batch-size", type=int, default=8, help=i18n.text("help.lab.gradients.option.batch-size")
    )
    p.add_argument(
        "--seed", type=run_seed_value, default=0, help=i18n.text("help.lab.gradients.option.seed")
    )
    lab_common.add_threads_option(p)
    lab_common.add_report_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from lmscope.lab.gradient_flow import run_gradient_flow  # lazy: see lmscope.commands

    states = ("init", "trained") if args.state == "both" else (args.state,)
    not_empty(args.data, "--data", "name a bundled corpus or a text file")
    archs = lab_common.comma_list(args.models)
    if not archs:
        raise InvalidInputError("error.lab.models.none", known=", ".join(GRADIENT_MODELS))
    cfg = lab_common.settings(GradientFlowConfig, args, states=states, archs=archs)
    return lab_common.run_experiment(run_gradient_flow, cfg, args)
