"""``lmscope race``: an LSTM and a GPT of equal size train on the same text for the same time.

    lmscope race                                   # LSTM vs GPT, N = 512, 4 min each
    lmscope race --threads 1 --clock cpu           # steadier timings on a busy machine
    lmscope race --models lstm,gru,rnn,gpt --budget 2m --context 256
    lmscope race --device cuda --batch 64          # on a GPU

Writes result.json and two plots (race-speed, race-loss; PNG and SVG) to --out, and prints the
tables and the verdict on the lesson's "5-10x faster per epoch at N = 512".
"""

from __future__ import annotations

from lmscope.commands import lab_common
from lmscope.commands.common import run_seed_value
from lmscope.lab.configs import RACE_MODELS, RaceConfig

ONE_DEVICE = "the race runs on one device: --device cpu or --device cuda"


def register(sub):
    d = RaceConfig()
    p = sub.add_parser(
        "race",
        help="why Transformers: an LSTM and a GPT of equal size race for the same time",
        description="Train a char LSTM and a char GPT with equal parameter counts on the same "
        "text, in the same order, with the same batch and context N, for the same time budget "
        "(the one lmscope trainer, AdamW for both). Reports val loss against time and against "
        "tokens seen, tokens/s, time per epoch, and whether the lesson's claim (at N = 512 "
        "a Transformer trains 5-10x faster per epoch) held on this machine.",
    )
    p.add_argument(
        "--budget",
        default=f"{d.budget_s:g}",
        help=f"training time per model: seconds or 90s, 4m, 0.5h (default {d.budget_s:g} s; "
        "evaluations not counted)",
    )
    p.add_argument(
        "--context",
        "-N",
        type=int,
        default=d.context,
        help=f"N, characters per training window (default {d.context})",
    )
    p.add_argument(
        "--batch", type=int, default=d.batch, help=f"streams per step (default {d.batch})"
    )
    p.add_argument(
        "--models",
        default=",".join(d.models),
        help=f"comma list of {', '.join(RACE_MODELS)}; gpt and a recurrent one (default lstm,gpt)",
    )
    p.add_argument("--data", default=d.data, help=f"corpus name or text file (default {d.data})")
    p.add_argument("--gpt-layers", type=int, default=d.gpt_layers, help="GPT blocks (default 4)")
    p.add_argument("--gpt-heads", type=int, default=d.gpt_heads, help="GPT heads (default 4)")
    p.add_argument("--gpt-dim", type=int, default=d.gpt_dim, help="GPT width (default 128)")
    p.add_argument(
        "--rnn-layers",
        type=int,
        default=d.rnn_layers,
        help="layers of each recurrent model; their hidden size is matched to the GPT's "
        "parameter count (default 2)",
    )
    p.add_argument("--device", default="cpu", help="cpu (default), cuda, or auto")
    lab_common.add_threads_option(p)
    lab_common.add_clock_option(p)
    p.add_argument(
        "--eval-points",
        type=int,
        default=d.eval_points,
        help=f"evaluations per model, evenly over the budget (default {d.eval_points})",
    )
    p.add_argument(
        "--eval-batches",
        type=int,
        default=d.eval_batches,
        help=f"validation batches per evaluation (default {d.eval_batches})",
    )
    p.add_argument(
        "--seed", type=run_seed_value, default=d.seed, help="seed for the initial weights"
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
