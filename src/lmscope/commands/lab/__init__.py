"""``lmscope lab ...``: the why-Transformers experiments.

    lmscope lab serial-depth   recurrence vs reduction vs scans: depth and timings
    lmscope lab memory-wall    peak memory and time of attention vs an LSTM; KV cache sizes
    lmscope lab gradients      gradient norm k steps back: RNN vs LSTM vs GRU vs Transformer
    lmscope lab recall         recall after N filler characters: LSTM vs GRU vs GPT, memory held
    lmscope lab show [NAME]    print a saved or shipped result
    lmscope lab replot FOLDER  draw a saved result's figures again (English and Chinese)

Each experiment writes result.json and its plots (PNG and SVG, in English and in Chinese:
<stem>.png and <stem>.zh.png) to --out.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from lmscope import i18n
from lmscope.commands.common import add_lang_option, listed, run_seed_value, use_lang
from lmscope.commands.lab import common as lab_common
from lmscope.commands.lab import gradients as lab_gradients
from lmscope.commands.lab import recall as lab_recall
from lmscope.errors import InvalidInputError
from lmscope.lab.configs import MEMORY_METHODS, MemoryWallConfig, SerialDepthConfig
from lmscope.lab.results import (
    read_result,
    resolve_devices,
    shipped_dir,
    shipped_experiments,
)

ONE_DEVICE = "error.lab.memory-wall.one-device"


def register(sub):
    p = sub.add_parser(
        "lab",
        help=i18n.text("help.lab.summary"),
        description=i18n.text("help.lab.description"),
    )
    p.set_defaults(run=lambda args: _help(p))
    lab = p.add_subparsers(dest="lab_command", metavar="EXPERIMENT")

    sd = lab.add_parser(
        "serial-depth",
        help=i18n.text("help.lab.serial-depth.summary"),
        description=i18n.text("help.lab.serial-depth.description"),
    )
    lab_common.add_out_option(sd, "serial-depth")
    sd.add_argument(
        "--quick",
        action="store_true",
        help=i18n.text("help.lab.serial-depth.option.quick"),
    )
    sd.add_argument(
        "--max-n", type=int, default=None, help=i18n.text("help.lab.serial-depth.option.max-n")
    )
    _add_repeats_option(sd)
    sd.add_argument(
        "--device",
        default="auto",
        help=i18n.text("help.lab.serial-depth.option.device"),
    )
    sd.add_argument(
        "--a", type=float, default=0.9, help=i18n.text("help.lab.serial-depth.option.a")
    )
    sd.add_argument(
        "--seed",
        type=run_seed_value,
        default=0,
        help=i18n.text("help.lab.serial-depth.option.seed"),
    )
    _common_options(sd, quick=True)
    sd.set_defaults(run=run_serial_depth)

    mw = lab.add_parser(
        "memory-wall",
        help=i18n.text("help.lab.memory-wall.summary"),
        description=i18n.text("help.lab.memory-wall.description"),
    )
    lab_common.add_out_option(mw, "memory-wall")
    mw.add_argument(
        "--min-n", type=int, default=256, help=i18n.text("help.lab.memory-wall.option.min-n")
    )
    mw.add_argument(
        "--max-n", type=int, default=16_384, help=i18n.text("help.lab.memory-wall.option.max-n")
    )
    mw.add_argument(
        "--heads", type=int, default=12, help=i18n.text("help.lab.memory-wall.option.heads")
    )
    mw.add_argument(
        "--d-head", type=int, default=64, help=i18n.text("help.lab.memory-wall.option.d-head")
    )
    mw.add_argument(
        "--batch", type=int, default=1, help=i18n.text("help.lab.memory-wall.option.batch")
    )
    mw.add_argument(
        "--dtype", default="float32", help=i18n.text("help.lab.memory-wall.option.dtype")
    )
    mw.add_argument("--device", default="cpu", help=i18n.text("help.lab.memory-wall.option.device"))
    mw.add_argument(
        "--budget",
        default=None,
        help=i18n.text("help.lab.memory-wall.option.budget"),
    )
    mw.add_argument(
        "--methods",
        default=",".join(MEMORY_METHODS),
        help=i18n.text(
            "help.lab.memory-wall.option.methods",
            methods=listed(MEMORY_METHODS),
        ),
    )
    _add_repeats_option(mw)
    _common_options(mw)
    mw.set_defaults(run=run_memory_wall)

    show = lab.add_parser(
        "show",
        help=i18n.text("help.lab.show.summary"),
        description=i18n.text("help.lab.show.description"),
    )
    show.add_argument(
        "result",
        nargs="?",
        default=None,
        help=i18n.text(
            "help.lab.show.argument.result",
            shipped=listed(shipped_experiments()),
        ),
    )
    lab_common.add_report_options(show)
    show.set_defaults(run=run_show)

    replot = lab.add_parser(
        "replot",
        help=i18n.text("help.lab.replot.summary"),
        description=i18n.text("help.lab.replot.description"),
    )
    replot.add_argument("result", help=i18n.text("help.lab.replot.argument.result"))
    replot.add_argument(
        "--figures",
        choices=("both", "en", "zh"),
        default="both",
        help=i18n.text("help.lab.replot.option.figures"),
    )
    add_lang_option(replot)
    replot.set_defaults(run=run_replot)

    lab_gradients.register(lab)  # gradient flow: RNN vs LSTM vs GRU vs GPT
    lab_recall.register(lab)  # recall after a distance: a fixed state vs a KV cache


def _help(parser) -> int:
    parser.print_help()
    return 0


def _add_repeats_option(parser) -> None:
    """--repeats: the same timing rule (lmscope.lab.timing) for every timed experiment."""
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help=i18n.text("help.lab.option.repeats"),
    )


def _common_options(parser, quick: bool = False) -> None:
    lab_common.add_threads_option(parser)
    lab_common.add_clock_option(parser, quick)
    lab_common.add_report_options(parser)


def run_serial_depth(args) -> int:
    from lmscope.lab.serial_depth import run_serial_depth  # lazy: see lmscope.commands

    devices = resolve_devices(args.device)
    lab_common.choose_clock(args, devices, quick=args.quick)
    cfg = lab_common.settings(SerialDepthConfig, args, devices=devices)
    return lab_common.run_experiment(run_serial_depth, cfg, args)


def run_memory_wall(args) -> int:
    from lmscope.lab.memory_wall import (  # lazy: see lmscope.commands
        check_budget,
        parse_size,
        run_memory_wall,
    )

    device = lab_common.one_device(args, ONE_DEVICE)
    cfg = lab_common.settings(
        MemoryWallConfig,
        args,
        device=device,
        budget_bytes=parse_size(args.budget) if args.budget is not None else None,
        methods=lab_common.comma_list(args.methods),
    )
    check_budget(cfg.budget_bytes, device, args.budget)
    return lab_common.run_experiment(run_memory_wall, cfg, args)


def run_show(args) -> int:
    if args.result is None:
        names = ", ".join(shipped_experiments()) or "none"
        raise InvalidInputError("error.lab.show.name", names=names)
    path = Path(args.result)
    folder = path if path.exists() else shipped_dir(args.result)
    doc = read_result(folder)
    if args.json:
        lab_common.print_json(doc)
        return 0
    lang = use_lang(args)
    console = lab_common.make_console()
    plot_dir = folder if folder.is_dir() else folder.parent
    lab_common.check_renders(doc, lang, plot_dir / "result.json" if folder.is_dir() else folder)
    lab_common.render(doc, console, lang, plot_dir)
    console.print(Text(i18n.text("lab.cli.plots-in", lang, folder=str(plot_dir)), style="dim"))
    return 0


def run_replot(args) -> int:
    from lmscope.lab.replot import replot  # lazy: see lmscope.commands

    lang = use_lang(args)
    langs = ("en", "zh") if args.figures == "both" else (args.figures,)
    written = replot(args.result, langs)
    folder = written[0].parent if written else Path(args.result)
    console = lab_common.make_console()
    drew = i18n.text("lab.cli.drew", lang, count=len(written), folder=str(folder))
    console.print(Text(drew, style="green"))
    return 0
