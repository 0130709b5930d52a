"""``lmscope lab gradients``: how the gradient fades with distance in an RNN, an LSTM, a GRU
and a Transformer of about the same size (``lmscope.lab.gradient_flow``)."""

from __future__ import annotations

from pathlib import Path


def register(lab) -> None:
    """Add the ``gradients`` experiment to the ``lmscope lab`` subparsers."""
    from lmscope.lab.gradient_flow import ARCHS

    p = lab.add_parser(
        "gradients",
        help="gradient norm k steps back: vanilla RNN vs LSTM vs GRU vs Transformer",
        description="The norm of the gradient of the loss at the last position with respect "
        "to the input embedding k steps back (k = 1..max-k), averaged over windows of a "
        "corpus, for a vanilla RNN, an LSTM, a GRU and a char GPT with about the same number "
        "of parameters: fresh (--state init), after a short training run (--state trained), "
        "or both. Writes result.json and log-scale plots (PNG, SVG) to --out.",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=Path("lmscope-results") / "gradient-flow",
        help="folder for result.json and plots (default ./lmscope-results/gradient-flow)",
    )
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
        default=",".join(ARCHS),
        help=f"comma list of {', '.join(ARCHS)} (default: all four)",
    )
    p.add_argument("--batches", type=int, default=4, help="batches averaged over (default 4)")
    p.add_argument("--batch-size", type=int, default=8, help="windows per batch (default 8)")
    p.add_argument("--seed", type=int, default=0, help="seed for weights and windows")
    p.add_argument("--threads", type=int, default=None, help="PyTorch CPU threads")
    p.add_argument("--lang", choices=("en", "zh"), default="en", help="language of texts")
    p.add_argument("--json", action="store_true", help="print result.json instead of tables")
    p.set_defaults(run=run)


def run(args) -> int:
    from lmscope.commands.lab import _console, _finish, _set_threads
    from lmscope.lab.gradient_flow import GradientFlowConfig, run_gradient_flow
    from lmscope.lab.progress import make_progress

    states = ("init", "trained") if args.state == "both" else (args.state,)
    cfg = GradientFlowConfig(
        max_k=args.max_k,
        data=args.data,
        embed=args.embed,
        gpt_layers=args.gpt_layers,
        gpt_heads=args.gpt_heads,
        rnn_layers=args.rnn_layers,
        batches=args.batches,
        batch_size=args.batch_size,
        states=states,
        train_iters=args.train_iters,
        archs=tuple(m.strip() for m in args.models.split(",") if m.strip()),
        seed=args.seed,
        threads=args.threads,
    )
    _set_threads(args.threads)
    console = _console(stderr=args.json)
    with make_progress(console) as progress:
        result = run_gradient_flow(cfg, args.out, progress)
    return _finish(result.to_dict(), args, console)
