"""``lmscope lab gradients``: how the gradient fades with distance in an RNN, an LSTM, a GRU
and a Transformer of about the same size (``lmscope.lab.gradient_flow``)."""

from __future__ import annotations

from lmscope.commands import lab_common
from lmscope.commands.common import not_empty, run_seed_value
from lmscope.errors import InvalidInputError
from lmscope.lab.configs import GRADIENT_MODELS, GradientFlowConfig


def register(lab) -> None:
    """Add the ``gradients`` experiment to the ``lmscope lab`` subparsers."""
    p = lab.add_parser(
        "gradients",
        help="gradient norm k steps back: vanilla RNN vs LSTM vs GRU vs Transformer",
        description="The norm of the gradient of the loss at the last position with respect "
        "to the input embedding k steps back (k = 1..max-k), averaged over windows of a "
        "corpus, for a vanilla RNN, an LSTM, a GRU and a char GPT with about the same number "
        "of parameters: fresh (--state init), after a short training run (--state trained), "
        "or both. Writes result.json and log-scale plots (PNG, SVG) to --out.",
    )
    lab_common.add_out_option(p, "gradient-flow")
    p.add_argument(
        "--state",
        choices=("init", "trained", "both"),
        default="init",
        help="models at initialisation (default), trained with lmscope's trainer, or both",
    )
    p.add_argument(
        "--train-iters",
        type=int,
        default=300,
        help="training steps per model for --state trained/both (default 300)",
    )
    p.add_argument("--max-k", type=int, default=256, help="largest k measured (default 256)")
    p.add_argument(
        "--data",
        default="warpeace-novel",
        help="corpus for the measured windows and for training (default warpeace-novel)",
    )
    p.add_argument(
        "--embed", type=int, default=64, help="embedding width of every model (default 64)"
    )
    p.add_argument("--gpt-layers", type=int, default=4, help="the GPT's layers (default 4)")
    p.add_argument("--gpt-heads", type=int, default=4, help="the GPT's heads (default 4)")
    p.add_argument(
        "--rnn-layers", type=int, default=1, help="layers of each recurrent model (default 1)"
    )
    p.add_argument(
        "--models",
        default=",".join(GRADIENT_MODELS),
        help=f"comma list of {', '.join(GRADIENT_MODELS)} (default: all four)",
    )
    p.add_argument("--batches", type=int, default=4, help="batches averaged over (default 4)")
    p.add_argument("--batch-size", type=int, default=8, help="windows per batch (default 8)")
    p.add_argument("--seed", type=run_seed_value, default=0, help="seed for weights and windows")
    lab_common.add_threads_option(p)
    lab_common.add_report_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from lmscope.lab.gradient_flow import run_gradient_flow  # lazy: see lmscope.commands

    states = ("init", "trained") if args.state == "both" else (args.state,)
    not_empty(args.data, "--data", "name a bundled corpus or a text file")
    archs = lab_common.comma_list(args.models)
    if not archs:
        raise InvalidInputError(
            f"--models names no model; use some of {', '.join(GRADIENT_MODELS)}"
        )
    cfg = lab_common.settings(GradientFlowConfig, args, states=states, archs=archs)
    return lab_common.run_experiment(run_gradient_flow, cfg, args)
