"""What the experiment commands (``lmscope lab ...``, ``lmscope race``) share: their output
options, running an experiment under a progress bar, and printing its result document as
tables (or as the JSON it wrote)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from rich.console import Console
from rich.text import Text

from lmscope import i18n
from lmscope.commands.common import terminal_width, use_lang
from lmscope.commands.parsers import Options
from lmscope.commands.tables import Column, WideTable
from lmscope.errors import InvalidInputError
from lmscope.lab.progress import make_progress
from lmscope.lab.results import (
    cell_text,
    column_label,
    format_cell,
    machine_line,
    plot_name,
    resolve_device,
    shown,
)


# --- options ---------------------------------------------------------------------------------
def add_out_option(options: Options, name: str) -> None:
    # str, not Path: Path("") is ".", and an empty --out must be refused, not used
    out = Path("lmscope-results") / name
    options.option("--out", key="experiment", type=str, default=out, values={"name": name})


def add_threads_option(options: Options) -> None:
    options.option("--threads", key="experiment", type=int, default=None)


def add_clock_option(options: Options, quick: bool = False) -> None:
    clock = "clock-quick" if quick else "clock"
    options.option("--clock", key="experiment", name=clock, choices=("wall", "cpu"), default=None)


def choose_clock(args, devices, quick: bool = False) -> None:
    """Fill in --clock when it was not given: elapsed time, except for a quick look on the
    CPU, where one thread's CPU time is steadier on a shared machine (then --threads 1)."""
    if args.clock is not None:
        return
    steadier = quick and all(d == "cpu" for d in devices) and args.threads in (None, 1)
    args.clock = "cpu" if steadier else "wall"
    if steadier:
        args.threads = 1


def one_device(args, refusal: str) -> str:
    """The one device --device names (``refusal`` when it names more), with --clock filled in
    for it: what every single-device experiment starts with."""
    device = resolve_device(args.device, refusal)
    choose_clock(args, [device])
    return device


def add_report_options(options: Options) -> None:
    """--lang and --json: how the result is printed."""
    options.lang()
    options.flag("--json", key="experiment")


# --- running ---------------------------------------------------------------------------------
def settings(config_class, args, **given):
    """An experiment's settings: ``given`` (what needed parsing), the rest from the options of
    the same names."""
    names = [f.name for f in dataclasses.fields(config_class) if f.name not in given]
    return config_class(
        **{name: getattr(args, name) for name in names if hasattr(args, name)}, **given
    )


def comma_list(text: str) -> tuple[str, ...]:
    """'lstm, gpt' -> ('lstm', 'gpt')."""
    return tuple(part.strip() for part in text.split(",") if part.strip())


def set_threads(threads: int | None) -> None:
    if threads is None:
        return
    if threads < 1:
        raise InvalidInputError("error.lab.threads", got=threads)
    import torch  # lazy: see lmscope.commands

    torch.set_num_threads(threads)


def check_out(out: Path | str) -> Path:
    """Refuse an --out that the results could not be written to, before minutes of work: an
    empty name (it would write into the current folder), a file where a folder must be, a
    folder that cannot be written in."""
    if not str(out).strip():
        raise InvalidInputError("error.lab.out.empty")
    from lmscope.formats.atomic import cannot_write_in

    problem = cannot_write_in(out)  # a catalog message, or None
    if problem is None:
        return Path(out)
    if problem.id == "error.write.file-not-folder" and problem.values["path"] == str(out):
        raise InvalidInputError("error.lab.out.is-file", out=str(out))  # not "--out x: x is..."
    raise InvalidInputError("error.lab.out.problem", out=str(out), problem=problem)


def run_experiment(experiment, cfg, args) -> int:
    """Run ``experiment(cfg, args.out, progress)`` with ``--threads`` applied and a progress bar
    (on stderr when --json prints the result), then print the result it returns."""
    use_lang(args)  # a wrong $LMSCOPE_LANG is refused before the experiment runs
    args.out = check_out(args.out)
    set_threads(args.threads)
    console = make_console(stderr=args.json)
    with make_progress(console) as progress:
        result = experiment(cfg, args.out, progress)
    return finish(result.to_dict(), args, console)


def make_console(stderr: bool = False) -> Console:
    """As wide as every command prints: the terminal, else $COLUMNS, else 80 (a table wider
    than that is printed in parts, ``commands.tables``)."""
    return Console(stderr=stderr, width=terminal_width())


def finish(doc: dict, args, console: Console) -> int:
    if args.json:
        print_json(doc)
        return 0
    lang = use_lang(args)
    render(doc, console, lang, Path(args.out))
    wrote = i18n.text("lab.cli.wrote", lang, path=str(Path(args.out) / "result.json"))
    console.print(Text(wrote, style="green"), soft_wrap=True)  # a path is copied whole
    return 0


# --- printing a result document --------------------------------------------------------------
def print_json(doc: dict) -> None:
    print(json.dumps(doc, ensure_ascii=False, indent=1))


def check_renders(doc: dict, lang: str, path: Path) -> None:
    """Refuse in one line, before anything is printed, a result.json with lmscope's schema line
    but not the rest (a title, the machine, sections with tables): it is drawn once where no
    one sees it, and what it lacks is named."""
    import io

    try:
        render(doc, Console(file=io.StringIO(), width=150), lang, path.parent)
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as err:
        what = (str(err).splitlines() or [type(err).__name__])[0]  # Python's own words
        if isinstance(err, KeyError) and err.args:
            what = i18n.Message("error.lab.result.part.missing", key=str(err.args[0]))
        raise InvalidInputError("error.lab.result.incomplete", path=str(path), what=what) from None


def render(doc: dict, console: Console, lang: str = "en", folder: Path | None = None) -> None:
    """The result's tables, explanations and verdicts in ``lang`` (its texts are catalog ids
    with values, said now: ``lmscope.lab.results.shown``), and each section's plot: the figure
    drawn in ``lang`` where ``folder`` (the result's) has it, else the English one."""
    console.print(Text(shown(doc["title"], lang), style="bold"))
    console.print(Text(shown(machine_line(doc["hardware"]), lang), style="dim"))
    for section in doc["sections"]:
        columns = [
            Column(
                shown(column_label(section["key"], col), lang),
                justify="left" if col["kind"] == "text" else "right",
            )
            for col in section["columns"]
        ]
        table = WideTable(columns)
        for row in section["rows"]:
            table.add_row(*(_cell(row.get(c["key"]), c, lang) for c in section["columns"]))
        console.print()
        console.print(Text(shown(section["title"], lang), style="bold"))
        for part in table.parts(console.width):
            console.print(part)
        console.print(Text(shown(section["explain"], lang), style="dim"))
        if section.get("verdict"):
            console.print(Text(shown(section["verdict"], lang), style="bold cyan"))
        if section.get("plot"):
            file = _plot_file(section["plot"]["png"], lang, folder)
            plot = i18n.text("lab.cli.plot", lang, file=file)
            console.print(Text(plot, style="dim"), soft_wrap=True)  # a path is copied whole


def _plot_file(file: str, lang: str, folder: Path | None) -> str:
    """The plot a reader of ``lang`` should open: its Chinese sibling when it was drawn."""
    translated = plot_name(file, lang)
    return translated if folder is not None and (folder / translated).is_file() else file


def _cell(value, column: dict, lang: str) -> str:
    kind = column["kind"]
    if kind == "bool" and value is not None:
        return i18n.text("lab.cli.yes" if value else "lab.cli.no", lang)
    if kind == "text" and value is not None:
        return format_cell(shown(cell_text(value, column), lang), kind)
    return format_cell(value, kind)
