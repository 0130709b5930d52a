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

from lmscope.commands.common import listed, run_seed_value
from lmscope.commands.lab import common as lab_common
from lmscope.commands.parsers import Commands
from lmscope.errors import InvalidInputError
from lmscope.lab.recall.config import QUICK, RECALL_MODELS, RecallConfig


def register(lab: Commands) -> None:
    """Add the ``recall`` experiment to the ``lmscope lab`` subcommands."""
    d = RecallConfig()
    p = lab.add("recall", run)
    lab_common.add_out_option(p, "recall")
    quick = {
        "size": str(QUICK["sizes"][0]),
        "items": str(QUICK["items"]),
        "distance": str(QUICK["distance"]),
        "steps": str(QUICK["steps"]),
        "budget": f"{QUICK['budget_s']:g}",
    }
    p.option("--quick", action="store_true", values=quick)
    p.option("--sizes", default=None, values={"default": ",".join(map(str, d.sizes))})
    p.option("--models", default=",".join(d.models), values={"models": listed(RECALL_MODELS)})
    p.unset(d, "--steps", int)
    budget = {"default": f"{d.budget_s:g}"}
    p.option("--budget", dest="budget_s", default=None, values=budget)
    p.unset(d, "--items", int)
    p.unset(d, "--distance", int)
    p.option("--queries", type=int, default=d.queries, show_default=True)
    p.option("--batch", type=int, default=d.batch, show_default=True)
    p.option("--lr", type=float, default=d.lr, show_default=True)
    p.option("--gpt-layers", type=int, default=d.gpt_layers, show_default=True)
    p.option("--rnn-layers", type=int, default=d.rnn_layers, show_default=True)
    p.unset(d, "--test-examples", int)
    p.option("--seed", type=run_seed_value, default=d.seed)
    p.option("--device", key="shared", default="cpu")
    lab_common.add_threads_option(p)
    lab_common.add_report_options(p)


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
