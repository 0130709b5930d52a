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

from lmscope.commands import lab_common, lab_gradients, lab_recall
from lmscope.commands.common import add_lang_option, run_seed_value, use_lang
from lmscope.errors import InvalidInputError
from lmscope.lab.configs import MEMORY_METHODS, MemoryWallConfig, SerialDepthConfig
from lmscope.lab.results import (
    read_result,
    resolve_devices,
    shipped_dir,
    shipped_experiments,
)

ONE_DEVICE = "memory-wall measures one device at a time: --device cpu or cuda"


def register(sub):
    p = sub.add_parser(
        "lab",
        help="why Transformers: measure serial depth and attention's memory wall",
        description="Experiments behind 'why Transformers replaced RNNs'. Each one prints "
        "tables, and writes result.json plus PNG/SVG plots to --out.",
    )
    p.set_defaults(run=lambda args: _help(p))
    lab = p.add_subparsers(dest="lab_command", metavar="EXPERIMENT")

    sd = lab.add_parser(
        "serial-depth",
        help="recurrence vs tree reduction vs parallel scans: depth, pure Python, PyTorch",
        description="Serial depth of a recurrence vs a tree reduction; pure-Python timing of "
        "h = 0.9*h + x vs sum(xs)/len(xs); the recurrence as a prefix scan; the exercises "
        "(64-wide state, Hillis-Steele and Blelloch scans, a PyTorch sweep of loop vs "
        "reduction vs parallel scan on CPU and CUDA).",
    )
    lab_common.add_out_option(sd, "serial-depth")
    sd.add_argument(
        "--quick",
        action="store_true",
        help="smaller sizes and sweeps (about 35 s on 2 idle cores, longer on a busy machine), "
        "timed in CPU time on one thread "
        "unless --clock or --threads say otherwise",
    )
    sd.add_argument("--max-n", type=int, default=None, help="largest N in every table")
    _add_repeats_option(sd)
    sd.add_argument(
        "--device",
        default="auto",
        help="PyTorch sweep devices: auto (CPU, plus CUDA when present), cpu, cuda, or cpu,cuda",
    )
    sd.add_argument("--a", type=float, default=0.9, help="decay a in h = a*h + x (default 0.9)")
    sd.add_argument("--seed", type=run_seed_value, default=0, help="seed for the random inputs")
    _common_options(sd, quick=True)
    sd.set_defaults(run=run_serial_depth)

    mw = lab.add_parser(
        "memory-wall",
        help="peak memory and time: naive attention vs fused attention vs an LSTM",
        description="Peak memory and time of causal attention as N doubles: naive attention "
        "(materialises N x N scores), torch's scaled_dot_product_attention, and an LSTM "
        "cell's O(1) state, next to the theoretical N^2 x heads x bytes. Each method stops at "
        "the first N that does not fit the memory budget. Plus GPT-2 KV-cache sizes.",
    )
    lab_common.add_out_option(mw, "memory-wall")
    mw.add_argument("--min-n", type=int, default=256, help="smallest N (default 256)")
    mw.add_argument("--max-n", type=int, default=16_384, help="largest N (default 16384)")
    mw.add_argument("--heads", type=int, default=12, help="attention heads (default 12)")
    mw.add_argument("--d-head", type=int, default=64, help="width of each head (default 64)")
    mw.add_argument("--batch", type=int, default=1, help="batch size (default 1)")
    mw.add_argument("--dtype", default="float32", help="float32, float16, bfloat16 or float64")
    mw.add_argument("--device", default="cpu", help="cpu, cuda, or auto (CUDA when present)")
    mw.add_argument(
        "--budget",
        default=None,
        help="memory a measurement may use, e.g. 4GB, 512MiB (default: a quarter of the "
        "memory available now)",
    )
    mw.add_argument(
        "--methods",
        default=",".join(MEMORY_METHODS),
        help=f"comma list of {', '.join(MEMORY_METHODS)}",
    )
    _add_repeats_option(mw)
    _common_options(mw)
    mw.set_defaults(run=run_memory_wall)

    show = lab.add_parser(
        "show",
        help="print a result: a shipped one by name, or a folder/result.json you wrote",
        description="Print the tables, explanations and verdicts of a lab result.",
    )
    show.add_argument(
        "result",
        nargs="?",
        default=None,
        help=f"{', '.join(shipped_experiments())} (the shipped examples), or a folder / "
        "result.json",
    )
    lab_common.add_report_options(show)
    show.set_defaults(run=run_show)

    replot = lab.add_parser(
        "replot",
        help="draw a saved result's figures again from its result.json (nothing is re-run)",
        description="Draw the figures of a result folder again from the numbers in its "
        "result.json, without re-running the experiment: in English (<stem>.png, .svg), in "
        "Chinese (<stem>.zh.png, .zh.svg) or both. A result made before lmscope drew Chinese "
        "figures gets them this way.",
    )
    replot.add_argument("result", help="a folder with result.json (or the result.json itself)")
    replot.add_argument(
        "--figures",
        choices=("both", "en", "zh"),
        default="both",
        help="which language's figures to draw (default both)",
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
        help="timing repeats, at least: more while they disagree by over 10%%, best kept "
        "(default 3)",
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
        raise InvalidInputError(f"name a result to show: {names}, or a folder with result.json")
    path = Path(args.result)
    folder = path if path.exists() else shipped_dir(args.result)
    doc = read_result(folder)
    if args.json:
        lab_common.print_json(doc)
        return 0
    from lmscope.lab.texts import CLI  # lazy: see lmscope.commands

    lang = use_lang(args)
    console = lab_common.make_console()
    plot_dir = folder if folder.is_dir() else folder.parent
    lab_common.check_renders(doc, lang, plot_dir / "result.json" if folder.is_dir() else folder)
    lab_common.render(doc, console, lang, plot_dir)
    console.print(Text(CLI["plots in"][lang].format(folder=plot_dir), style="dim"))
    return 0


def run_replot(args) -> int:
    from lmscope.lab.replot import replot  # lazy: see lmscope.commands
    from lmscope.lab.texts import CLI

    lang = use_lang(args)
    langs = ("en", "zh") if args.figures == "both" else (args.figures,)
    written = replot(args.result, langs)
    folder = written[0].parent if written else Path(args.result)
    console = lab_common.make_console()
    console.print(Text(CLI["drew"][lang].format(count=len(written), folder=folder), style="green"))
    return 0
