"""``lmscope race``: an LSTM and a GPT of equal size train on the same text for the same time.

    lmscope race                                   # LSTM vs GPT, N = 512, 4 min each
    lmscope race --threads 1 --clock cpu           # steadier timings on a busy machine
    lmscope race --models lstm,gru,rnn,gpt --budget 2m --context 256
    lmscope race --device cuda --batch 64          # on a GPU

Writes result.json and two plots (race-speed, race-loss; PNG and SVG) to --out, and prints the
tables and the verdict on the lesson's "5-10x faster per epoch at N = 512".
"""

from __future__ import annotations

from lmscope import i18n
from lmscope.commands.common import listed, run_seed_value
from lmscope.commands.lab import common as lab_common
from lmscope.i18n import Message
from lmscope.lab.configs import RACE_MODELS, RaceConfig

ONE_DEVICE = Message("error.race.one-device")


def register(sub):
    d = RaceConfig()
    p = sub.add_parser(
        "race",
        help=i18n.text("help.race.summary"),
        description=i18n.text("help.race.description"),
    )
    p.add_argument(
        "--budget",
        default=f"{d.budget_s:g}",
        help=i18n.text("help.race.option.budget", default=f"{d.budget_s:g}"),
    )
    p.add_argument(
        "--context",
        "-N",
        type=int,
        default=d.context,
        help=i18n.text("help.race.option.context", default=str(d.context)),
    )
    p.add_argument(
        "--batch",
        type=int,
        default=d.batch,
        help=i18n.text("help.race.option.batch", default=str(d.batch)),
    )
    p.add_argument(
        "--models",
        default=",".join(d.models),
        help=i18n.text(
            "help.race.option.models",
            models=listed(RACE_MODELS),
        ),
    )
    p.add_argument(
        "--data", default=d.data, help=i18n.text("help.race.option.data", default=d.data)
    )
    p.add_argument(
        "--gpt-layers",
        type=int,
        default=d.gpt_layers,
        help=i18n.text("help.race.option.gpt-layers"),
    )
    p.add_argument(
        "--gpt-heads", type=int, default=d.gpt_heads, help=i18n.text("help.race.option.gpt-heads")
    )
    p.add_argument(
        "--gpt-dim", type=int, default=d.gpt_dim, help=i18n.text("help.race.option.gpt-dim")
    )
    p.add_argument(
        "--rnn-layers",
        type=int,
        default=d.rnn_layers,
        help=i18n.text("help.race.option.rnn-layers"),
    )
    p.add_argument("--device", default="cpu", help=i18n.text("help.shared.option.device"))
    lab_common.add_threads_option(p)
    lab_common.add_clock_option(p)
    p.add_argument(
        "--eval-points",
        type=int,
        default=d.eval_points,
        help=i18n.text("help.race.option.eval-points", default=str(d.eval_points)),
    )
    p.add_argument(
        "--eval-batches",
        type=int,
        default=d.eval_batches,
        help=i18n.text("help.race.option.eval-batches", default=str(d.eval_batches)),
    )
    p.add_argument(
        "--seed", type=run_seed_value, default=d.seed, help=i18n.text("help.race.option.seed")
    )
    lab_common.add_out_option(p, "race")
    lab_common.add_report_options(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from lmscope.lab.race import parse_budget, run_race  # lazy: see lmscope.commands

    device = lab_common.one_device(args, ONE_DEVICE)
    cfg = lab_common.settings(
        RaceConfig,
        args,
        budget_s=parse_budget(args.budget),
        models=lab_common.comma_list(args.models.lower()),
        device=device,
    )
    return lab_common.run_experiment(run_race, cfg, args)
