"""``lmscope neurons``: what single units of a char RNN/LSTM/GRU track.

lmscope neurons --text FILE --cell 1:42                 coloured text in the terminal
lmscope neurons --text FILE --cell 1:42 --out cell.png  ... as PNG (.svg, .html, .json)
lmscope neurons --text FILE --find                      the interpretable-cell finder
lmscope neurons --find                                  ... on the model's own corpus, held out
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from lmscope.commands.common import (
    OptionError,
    at_least,
    current_lang,
    not_empty,
    read_text_file,
    refuse_below,
    say,
    terminal_width,
    use_lang,
)
from lmscope.errors import InvalidInputError
from lmscope.i18n import Message

VIEW_CHARS = 2000  # default --max-chars when colouring one unit
FIND_CHARS = 20000  # ... when searching every unit
OUT_SUFFIXES = (".png", ".svg", ".html", ".json")
# characters per picture line: below 40 the colour legend is wider than the picture
MIN_WIDTH, MAX_WIDTH = 40, 400
FIND_OUT = Path("lmscope-results") / "neurons" / "cells.json"  # the finder's report by default


def width_value(text: str) -> int:
    """An argparse type: --width, refused in one line before any work."""
    value = at_least(MIN_WIDTH, "--width")(text)
    if value > MAX_WIDTH:
        raise OptionError(
            "error.option.at-most", flag="--width", high=str(MAX_WIDTH), got=str(value)
        )
    return value


def select_value(text: str) -> float:
    """An argparse type: --select, a share strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise OptionError(
            "error.option.number-between", flag="--select", low="0", high="1", got=repr(text)
        ) from None
    if not 0 < value < 1:
        raise OptionError(
            "error.option.between-exclusive", flag="--select", low="0", high="1", got=text
        )
    return value


def register(commands):
    p = commands.add("neurons", run)
    p.option("--model", "-m", default=None)
    source = p.one_of()  # neither: the held-out part of the corpus the model was trained on
    source.option("--text")
    source.option("--corpus")
    chars = {"cell": str(VIEW_CHARS), "find": str(FIND_CHARS)}
    p.option("--max-chars", type=int, default=None, values=chars)
    p.option("--cell")
    p.option("--kind", default=None)
    p.flag("--find")
    p.option("--features", default=None)
    p.option("--top", type=at_least(1, "--top"), default=3)
    p.option("--select", type=select_value, default=0.5)
    p.option("--out", type=Path, default=None)
    widths = {"min": str(MIN_WIDTH), "max": str(MAX_WIDTH)}
    p.option("--width", type=width_value, default=80, values=widths)
    p.lang()


def _text(args) -> tuple[str, str]:
    from lmscope.interpret.features import validation_text  # lazy: see lmscope.commands

    limit = (
        args.max_chars if args.max_chars is not None else (FIND_CHARS if args.find else VIEW_CHARS)
    )
    refuse_below(limit, 1, "--max-chars")
    # one character more than the limit tells whether the source was cut
    if args.text is not None:
        text, source = read_text_file(args.text, limit + 1), str(args.text)
    else:
        # from a line start (a code corpus: from a file's start), so line positions are whole
        text = validation_text(args.corpus, limit + 1)
        source = say("report.neurons.validation-split", corpus=args.corpus)
    if len(text) <= limit:
        return text, source
    return (text[:limit] if args.find else _whole_lines(text[:limit])), source


def _whole_lines(text: str) -> str:
    """A view cut at --max-chars ends with the last whole line it holds, not in the middle of
    a word or a statement; a text with no line end in it is kept as cut."""
    end = text.rfind("\n") + 1
    return text[:end] if end else text


def run(args) -> int:
    from lmscope.engine.loading import load_char_model  # lazy: see lmscope.commands

    use_lang(args)
    if not args.find and args.cell is None:
        raise InvalidInputError("error.neurons.what-to-show")
    if args.find and args.cell is not None:
        raise InvalidInputError("error.neurons.find-or-cell")
    if args.text is not None:
        not_empty(args.text, "--text", Message("error.option.advice.text-file"))
    if args.corpus is not None:
        not_empty(
            args.corpus, "--corpus", Message("error.option.advice.corpus", example="warpeace-novel")
        )
    if args.out is not None and not args.find and args.out.suffix.lower() not in OUT_SUFFIXES:
        raise InvalidInputError(
            "error.neurons.out-suffix", out=str(args.out), suffixes=", ".join(OUT_SUFFIXES)
        )
    if args.out is not None or args.find:
        _check_out(args.out or FIND_OUT)
    if args.features is not None:  # before the model runs, naming the flag
        from lmscope.interpret.features import resolve_features  # lazy: see lmscope.commands

        try:
            resolve_features(args.features)
        except InvalidInputError as err:
            raise InvalidInputError(
                "error.neurons.features", flag="--features", error=err
            ) from None
    model = load_char_model(args.model)
    if args.text is None and args.corpus is None:
        args.corpus = _own_corpus(model)
    text, source = _text(args)
    return _find(model, text, source, args) if args.find else _view(model, text, args)


def _own_corpus(model) -> str:
    """The bundled corpus ``model`` was trained on (``bundled_corpus_of``), read when no text
    is named, as /rnn reads it; without one, a one-line request for --text or --corpus."""
    from lmscope.data.corpora import corpus_names  # lazy: see lmscope.commands
    from lmscope.interpret.features import bundled_corpus_of

    name = bundled_corpus_of(model)
    if name is not None:
        return name
    raise InvalidInputError(
        "error.neurons.text-or-corpus", model=str(model.name), names=", ".join(corpus_names())
    )


def _rule(score) -> str:
    """A unit's threshold rule as the table writes it (">+0.12"); "" for a unit without one."""
    return f"{score.direction}{score.threshold:+.2f}" if score.direction else ""


def _check_out(out: Path) -> None:
    """Refuse, before the model runs, an --out file that cannot be written: a folder where
    the file would go, a file where its folder must be, a folder that cannot be written in."""
    from lmscope.formats.atomic import cannot_write_in  # lazy: see lmscope.commands

    problem = Message("error.neurons.out-is-folder") if out.is_dir() else None
    problem = problem or cannot_write_in(out.parent)
    if problem is not None:
        raise InvalidInputError("error.cli.out-problem", out=str(out), problem=problem)


def _note(run) -> None:
    if run.skipped_note():
        shown = ", ".join(repr(c) for c in run.skipped_chars[:8])
        shown += " ..." if len(run.skipped_chars) > 8 else ""
        note = say(
            "report.neurons.skipped-character-s-outside",
            n=len(run.skipped),
            shown=shown,
        )
        print(say("report.neurons.note", note=note), file=sys.stderr)


def _view(model, text: str, args) -> int:
    from lmscope.interpret.neurons import (  # lazy: see lmscope.commands
        default_kind,
        neuron_activations,
        parse_cell,
    )

    layer, unit = parse_cell(args.cell)
    kind = args.kind or default_kind(model.capabilities.family)
    run = neuron_activations(model, text, kinds=(kind,))
    view = run.view(layer, unit, kind)  # checks layer, unit and kind in one line
    _note(run)
    # the title in the chosen language, in every output (the view's own is English)
    view.title, view.lang = _title(model, layer, unit, kind), current_lang()
    if args.out is None:
        _print_coloured(view, view.title)
        return 0
    out = args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    suffix = out.suffix.lower()
    if suffix == ".png":
        view.save_png(out, width=args.width)
    elif suffix == ".svg":
        view.save_svg(out, width=args.width)
    elif suffix == ".html":
        view.save_html(out)
    else:
        out.write_text(json.dumps(view.to_dict(), ensure_ascii=False) + "\n", encoding="utf-8")
    print(say("report.cli.note", note=say("report.neurons.wrote", path=out)), file=sys.stderr)
    return 0


def _title(model, layer: int, unit: int, kind: str) -> str:
    from lmscope.interpret.neurons import unit_title  # lazy: see lmscope.commands

    return unit_title(model.name, layer, unit, kind)


def _print_coloured(view, title: str) -> None:
    from lmscope.interpret.cell_views import rgb  # lazy: see lmscope.commands

    line = Text()
    for ch, slot in zip(view.text, view.slots, strict=True):
        if slot is None:
            line.append(ch, style="strike grey50")
            continue
        r, g, b = rgb(view.shades[slot])
        line.append("↵" if ch == "\n" else ch, style=f"black on rgb({r},{g},{b})")
        if ch == "\n":
            line.append("\n")
    console = Console(highlight=False)
    console.print(Text(title, style="bold"))
    console.print(line)


def _find(model, text: str, source: str, args) -> int:
    from lmscope.interpret.cell_finder import (  # lazy: see lmscope.commands
        feature_headline,
        find_cells,
    )
    from lmscope.interpret.features import feature_set_for, trained_on
    from lmscope.interpret.neurons import neuron_activations

    features = args.features or feature_set_for(args.corpus or trained_on(model), args.text)
    kinds = ("c", "h") if model.capabilities.family == "lstm" else ("h",)
    run = neuron_activations(model, text, kinds=kinds)
    _note(run)
    report = find_cells(
        run, features=features, top=args.top, select_fraction=args.select, source=source
    )
    out = args.out or FIND_OUT
    report.write(out)

    console = Console(highlight=False, width=terminal_width())
    title = say(
        "report.neurons.interpretable-cells-characters-to",
        model=report.model,
        chars=f"{report.chars_read:,}",
        select=f"{report.select_chars:,}",
        heldout=f"{report.heldout_chars:,}",
    )
    if features in ("prose", "code"):
        said = say("report.neurons.prose" if features == "prose" else "report.neurons.code")
        title += say("report.neurons.features", features=said)
    # no vertical rules and compact rules: 8 columns fit 80 characters with the feature
    # names and values whole (the headers wrap instead)
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    widest = max(len(f.name) for f in report.features)
    table.add_column(say("report.neurons.feature"), no_wrap=True, min_width=widest)
    # values keep their width ("1:353 c", "+0.025", ">+42.97"); long header words fold
    table.add_column(say("report.neurons.unit-l-u-kind"), min_width=7, overflow="fold")
    for name, width in (("report.neurons.r-held-out", 6), ("report.neurons.r-choosing", 8)):
        table.add_column(say(name), justify="right", min_width=width, overflow="fold")
    table.add_column(say("report.neurons.rule"), min_width=7, overflow="fold")
    for name, width in (("report.neurons.precision", 9), ("report.neurons.recall", 6)):
        table.add_column(say(name), justify="right", min_width=width, overflow="fold")
    table.add_column("F1", justify="right", min_width=5, overflow="fold")
    for f in report.features:
        if f.note:  # the reason is printed under the table
            table.add_row(f.name, f"[dim]{say('report.neurons.not-scored')}[/]", *[""] * 6)
            table.add_section()
            continue
        for n, s in enumerate(f.best):
            table.add_row(
                f.name if n == 0 else "",
                s.label,
                f"{s.r:+.3f}",
                f"{s.r_select:+.3f}",
                _rule(s),
                *(f"{v:.3f}" if v is not None else "" for v in (s.precision, s.recall, s.f1)),
            )
        table.add_section()
    console.print(title)  # not the table's title: rich cut its last character when wrapping it
    console.print(table)
    for f in report.features:
        console.print(feature_headline(f))
        if f.kind == "binary" and f.best and f.best[0].direction:
            # its rows are ranked by their rules' F1, not by |r|: the rule's unit too
            top = f.best[0]
            said = say(
                "report.neurons.rule-chosen",
                name=f.name,
                unit=top.label,
                rule=_rule(top),
                f1=f"{top.f1:.3f}",
            )
            console.print(said)
    console.print(f"[dim]{say('report.neurons.report', path=out)}[/]")
    return 0
