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
from lmscope.commands.common import listed, run_seed_value, use_lang
from lmscope.commands.lab import common as lab_common
from lmscope.commands.lab import gradients as lab_gradients
from lmscope.commands.lab import recall as lab_recall
from lmscope.commands.parsers import Options
from lmscope.errors import InvalidInputError
from lmscope.lab.configs import MEMORY_METHODS, MemoryWallConfig, SerialDepthConfig
from lmscope.lab.results import (
    read_result,
    resolve_devices,
    shipped_dir,
    shipped_experiments,
)

ONE_DEVICE = "error.lab.memory-wall.one-device"


def register(commands):
    lab = commands.add("lab").subcommands("lab_command", "EXPERIMENT")

    sd = lab.add("serial-depth", run_serial_depth)
    lab_common.add_out_option(sd, "serial-depth")
    sd.flag("--quick")
    sd.option("--max-n", type=int, default=None)
    _add_repeats_option(sd)
    sd.option("--device", default="auto")
    sd.option("--a", type=float, default=0.9)
    sd.option("--seed", type=run_seed_value, default=0)
    _common_options(sd, quick=True)

    mw = lab.add("memory-wall", run_memory_wall)
    lab_common.add_out_option(mw, "memory-wall")
    mw.option("--min-n", type=int, default=256)
    mw.option("--max-n", type=int, default=16_384)
    mw.option("--heads", type=int, default=12)
    mw.option("--d-head", type=int, default=64)
    mw.option("--batch", type=int, default=1)
    mw.option("--dtype", default="float32")
    mw.option("--device", default="cpu")
    mw.option("--budget", default=None)
    methods = {"methods": listed(MEMORY_METHODS)}
    mw.option("--methods", default=",".join(MEMORY_METHODS), values=methods)
    _add_repeats_option(mw)
    _common_options(mw)

    show = lab.add("show", run_show)
    shipped = {"shipped": listed(shipped_experiments())}
    show.argument("result", nargs="?", default=None, values=shipped)
    lab_common.add_report_options(show)

    replot = lab.add("replot", run_replot)
    replot.argument("result")
    replot.option("--figures", choices=("both", "en", "zh"), default="both")
    replot.lang()

    lab_gradients.register(lab)  # gradient flow: RNN vs LSTM vs GRU vs GPT
    lab_recall.register(lab)  # recall after a distance: a fixed state vs a KV cache


def _add_repeats_option(options: Options) -> None:
    """--repeats: the same timing rule (lmscope.lab.timing) for every timed experiment."""
    options.option("--repeats", key="lab", type=int, default=3)


def _common_options(options: Options, quick: bool = False) -> None:
    lab_common.add_threads_option(options)
    lab_common.add_clock_option(options, quick)
    lab_common.add_report_options(options)


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
    plots_in = i18n.text("lab.cli.plots-in", lang, folder=str(plot_dir))
    console.print(Text(plots_in, style="dim"), soft_wrap=True)  # a path is copied whole
    return 0


def run_replot(args) -> int:
    from lmscope.lab.replot import replot  # lazy: see lmscope.commands

    lang = use_lang(args)
    langs = ("en", "zh") if args.figures == "both" else (args.figures,)
    written = replot(args.result, langs)
    folder = written[0].parent if written else Path(args.result)
    console = lab_common.make_console()
    drew = i18n.text("lab.cli.drew", lang, count=len(written), folder=str(folder))
    console.print(Text(drew, style="green"), soft_wrap=True)
    return 0
