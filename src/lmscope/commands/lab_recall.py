"""``lmscope lab recall``: an LSTM, a GRU and a GPT of equal size recall a list of symbols
after N filler characters; accuracy against the distance and against the list's length, next
to the memory each model holds (``lmscope.lab.recall``).

    lmscope lab recall --quick --threads 1     # one size, a shorter task: under 2 minutes
    lmscope lab recall --threads 1             # three sizes: under 10 minutes
    lmscope lab recall --budget none --threads 1   # as shipped: every model trains every step
    lmscope lab recall --sizes 32,64 --steps 3000 --budget none
    lmscope lab show recall                    # the result shipped with lmscope
"""

from __future__ import annotations

from lmscope.commands import lab_common
from lmscope.commands.common import add_unset_option, run_seed_value
from lmscope.errors import InvalidInputError
from lmscope.lab.recall_config import QUICK, RECALL_MODELS, RecallConfig


def register(lab) -> None:
    """Add the ``recall`` experiment to the ``lmscope lab`` subparsers."""
    d = RecallConfig()
    p = lab.add_parser(
        "recall",
        help="the fixed-size state, measured: recall after a distance, LSTM vs GRU vs GPT",
        description="Train an LSTM, a GRU and a GPT with equal parameter counts (one size per "
        "GPT width in --sizes) through lmscope's one trainer on the same examples: a list of "
        "P symbols, N filler characters, then questions about the list. Tests accuracy "
        "against the distance N and against the amount P, with 95% intervals, next to each "
        "model's memory at the answer (an RNN's fixed state, the GPT's growing KV cache). "
        "Writes result.json and PNG/SVG plots to --out.",
    )
    lab_common.add_out_option(p, "recall")
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"one size (d{QUICK['sizes'][0]}), lists of at most {QUICK['items']}, distances "
        f"up to {QUICK['distance']}, {QUICK['steps']} steps and a {QUICK['budget_s']:g} s "
        "budget per model (unless --budget says otherwise): under 2 minutes on 2 cores",
    )
    p.add_argument(
        "--sizes",
        default=None,
        help="comma list of GPT widths, one size each; the recurrent models are matched to "
        f"their parameter counts (default {','.join(map(str, d.sizes))})",
    )
    p.add_argument(
        "--models",
        default=",".join(d.models),
        help=f"comma list of {', '.join(RECALL_MODELS)}: gpt and a recurrent one (default all)",
    )
    add_unset_option(p, d, "--steps", int, "training steps per model")
    p.add_argument(
        "--budget",
        dest="budget_s",
        default=None,
        help="most training time per model, wall clock: seconds or 90s, 2m; 'none' for no "
        f"cap (default {d.budget_s:g} s). A model stopped early is named in the result",
    )
    add_unset_option(p, d, "--items", int, "longest list P trained")
    add_unset_option(p, d, "--distance", int, "longest distance N trained, in filler characters")
    p.add_argument(
        "--queries", type=int, default=d.queries, help=f"queries per example (default {d.queries})"
    )
    p.add_argument(
        "--batch", type=int, default=d.batch, help=f"examples per step (default {d.batch})"
    )
    p.add_argument(
        "--lr", type=float, default=d.lr, help=f"learning rate of every model (default {d.lr:g})"
    )
    p.add_argument(
        "--gpt-layers", type=int, default=d.gpt_layers, help=f"GPT blocks (default {d.gpt_layers})"
    )
    p.add_argument(
        "--rnn-layers",
        type=int,
        default=d.rnn_layers,
        help=f"layers of each recurrent model (default {d.rnn_layers})",
    )
    add_unset_option(p, d, "--test-examples", int, "test examples per tested (P, N)")
    p.add_argument(
        "--seed", type=run_seed_value, default=d.seed, help="seed for weights and examples"
    )
    p.add_argument("--device", default="cpu", help="cpu (default), cuda, or auto")
    lab_common.add_threads_option(p)
    lab_common.add_report_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from lmscope.lab.recall import check_budget, run_recall  # lazy: see lmscope.commands
    from lmscope.lab.results import resolve_device

    # flags left out keep RecallConfig's defaults, or --quick's where it has its own
    given = {
        "models": lab_common.comma_list(args.models.lower()),
        "device": resolve_device(args.device, "recall runs on one device: cpu or cuda"),
    }
    if args.sizes is not None:
        given["sizes"] = tuple(_width(part) for part in lab_common.comma_list(args.sizes))
    if args.budget_s is not None:
        given["budget_s"] = check_budget(args.budget_s)
    for name in ("steps", "items", "distance", "test_examples"):
        if getattr(args, name) is not None:
            given[name] = getattr(args, name)
    names = ("queries", "batch", "lr", "gpt_layers", "rnn_layers", "seed", "threads")
    given.update({name: getattr(args, name) for name in names})
    cfg = RecallConfig.quick_settings(**given) if args.quick else RecallConfig(**given)
    return lab_common.run_experiment(run_recall, cfg, args)


def _width(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise InvalidInputError(
            f"--sizes takes GPT widths as whole numbers, e.g. 16,32,64; got {text!r}"
        ) from None
