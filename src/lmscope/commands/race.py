"""``lmscope race``: an LSTM and a GPT of equal size train on the same text for the same time.

    lmscope race                                   # LSTM vs GPT, N = 512, 4 min each
    lmscope race --threads 1 --clock cpu           # steadier timings on a busy machine
    lmscope race --models lstm,gru,rnn,gpt --budget 2m --context 256
    lmscope race --device cuda --batch 64          # on a GPU

Writes result.json and two plots (race-speed, race-loss; PNG and SVG) to --out, and prints the
tables and the verdict on the lesson's "5-10x faster per epoch at N = 512".
"""

from __future__ import annotations

from lmscope.commands.common import listed, run_seed_value
from lmscope.commands.lab import common as lab_common
from lmscope.i18n import Message
from lmscope.lab.configs import RACE_MODELS, RaceConfig

ONE_DEVICE = Message("error.race.one-device")


def register(commands):
    d = RaceConfig()
    p = commands.add("race", run)
    p.option("--budget", default=f"{d.budget_s:g}", show_default=True)
    p.option("--context", "-N", type=int, default=d.context, show_default=True)
    p.option("--batch", type=int, default=d.batch, show_default=True)
    p.option("--models", default=",".join(d.models), values={"models": listed(RACE_MODELS)})
    p.option("--data", default=d.data, show_default=True)
    p.option("--gpt-layers", type=int, default=d.gpt_layers)
    p.option("--gpt-heads", type=int, default=d.gpt_heads)
    p.option("--gpt-dim", type=int, default=d.gpt_dim)
    p.option("--rnn-layers", type=int, default=d.rnn_layers)
    p.option("--device", key="shared", default="cpu")
    lab_common.add_threads_option(p)
    lab_common.add_clock_option(p)
    p.option("--eval-points", type=int, default=d.eval_points, show_default=True)
    p.option("--eval-batches", type=int, default=d.eval_batches, show_default=True)
    p.option("--seed", type=run_seed_value, default=d.seed)
    lab_common.add_out_option(p, "race")
    lab_common.add_report_options(p)


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
