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

from lmscope import i18n
from lmscope.commands.common import add_unset_option, listed, run_seed_value
from lmscope.commands.lab import common as lab_common
from lmscope.errors import InvalidInputError
from lmscope.lab.recall.config import QUICK, RECALL_MODELS, RecallConfig


def register(lab) -> None:
    """Add the ``recall`` experiment to the ``lmscope lab`` subparsers."""
    d = RecallConfig()
    p = lab.add_parser(
        "recall",
        help=i18n.text("help.lab.recall.summary"),
        description=i18n.text("help.lab.recall.description"),
    )
    lab_common.add_out_option(p, "recall")
    p.add_argument(
        "--quick",
        action="store_true",
        help=i18n.text(
            "help.lab.recall.option.quick",
            size=str(QUICK["sizes"][0]),
            items=str(QUICK["items"]),
            distance=str(QUICK["distance"]),
            steps=str(QUICK["steps"]),
            budget=f"{QUICK['budget_s']:g}",
        ),
    )
    p.add_argument(
        "--sizes",
        default=None,
        help=i18n.text("help.lab.recall.option.sizes", default=",".join(map(str, d.sizes))),
    )
    p.add_argument(
        "--models",
        default=",".join(d.models),
        help=i18n.text(
            "help.lab.recall.option.models",
            models=listed(RECALL_MODELS),
        ),
    )
    add_unset_option(p, d, "--steps", int, i18n.text("help.lab.recall.option.steps"))
    p.add_argument(
        "--budget",
        dest="budget_s",
        default=None,
        help=i18n.text("help.lab.recall.option.budget", default=f"{d.budget_s:g}"),
    )
    add_unset_option(p, d, "--items", int, i18n.text("help.lab.recall.option.items"))
    add_unset_option(p, d, "--distance", int, i18n.text("help.lab.recall.option.distance"))
    p.add_argument(
        "--queries",
        type=int,
        default=d.queries,
        help=i18n.text("help.lab.recall.option.queries", default=str(d.queries)),
    )
    p.add_argument(
        "--batch",
        type=int,
        default=d.batch,
        help=i18n.text("help.lab.recall.option.batch", default=str(d.batch)),
    )
    p.add_argument(
        "--lr",
        type=float,
        default=d.lr,
        help=i18n.text("help.lab.recall.option.lr", default=f"{d.lr:g}"),
    )
    p.add_argument(
        "--gpt-layers",
        type=int,
        default=d.gpt_layers,
        help=i18n.text("help.lab.recall.option.gpt-layers", default=str(d.gpt_layers)),
    )
    p.add_argument(
        "--rnn-layers",
        type=int,
        default=d.rnn_layers,
        help=i18n.text("help.lab.recall.option.rnn-layers", default=str(d.rnn_layers)),
    )
    add_unset_option(
        p, d, "--test-examples", int, i18n.text("help.lab.recall.option.test-examples")
    )
    p.add_argument(
        "--seed", type=run_seed_value, default=d.seed, help=i18n.text("help.lab.recall.option.seed")
    )
    p.add_argument("--device", default="cpu", help=i18n.text("help.shared.option.device"))
    lab_common.add_threads_option(p)
    lab_common.add_report_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from lmscope.lab.recall.experiment import check_budget, run_recall  # lazy: see lmscope.commands
    from lmscope.lab.results import resolve_device

    # flags left out keep RecallConfig's defaults, or --quick's where it has its own
    given = {
        "models": lab_common.comma_list(args.models.lower()),
        "device": resolve_device(args.device, "error.lab.recall.one-device"),
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
        raise InvalidInputError("error.lab.recall.sizes", text=text) from None
