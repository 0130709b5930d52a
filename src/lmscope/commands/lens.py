"""``lmscope lens "text"``: the logit lens as a layers x positions table."""

from __future__ import annotations

import json

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from lmscope.commands.common import (
    abbreviate,
    at_least,
    load_model,
    say,
    terminal_width,
    use_lang,
    visible,
)
from lmscope.errors import InvalidInputError
from lmscope.explain.chars import trace_char_spans

LAST = 12  # positions shown by default (the last ones), fewer when the terminal is narrow
CELL = 8  # characters per cell: an abbreviated token over its probability
WIDEST = 16  # a wider terminal shows tokens up to this long whole


def register(commands):
    p = commands.add("lens", run)
    p.argument("text", key="shared")
    p.model()
    p.option("--top", "-k", type=at_least(1, "--top"), default=3)
    p.option("--positions", type=str, default=None)
    p.ablate()
    p.flag("--json")
    p.lang()


def _positions(spec: str | None, n: int) -> list[int]:
    if spec is None:
        return list(range(max(0, n - LAST), n))
    try:
        asked = [int(p) for p in spec.split(",") if p.strip()]
    except ValueError:
        asked = []
    if not asked:  # "" and "," name no position at all
        raise InvalidInputError("error.lens.positions", got=repr(spec))
    for p in asked:
        if not -n <= p < n:
            raise InvalidInputError(
                "error.lens.position-outside", p=str(p), n=n, last=str(n - 1), first=str(-n)
            )
    # as explain and ablate --position: -1 is the last token
    return [p + n if p < 0 else p for p in asked]


def _formed_characters(model, ids) -> dict[int, tuple[str, int, int]]:
    """Position -> (the characters its bytes help form, its part, of how many), for the tokens
    of a byte-level BPE that hold no whole character (言 over three byte tokens)."""
    formed = {}
    for span in trace_char_spans(model, ids):
        parts = span.end - span.start + 1
        for part, p in enumerate(range(span.start, span.end + 1), start=1):
            formed[p] = (span.text, part, parts)
    return formed


def run(args) -> int:
    use_lang(args)
    model = load_model(args)
    trace = model.trace(args.text, ablate=args.ablate)
    asked = _positions(args.positions, len(trace))

    def piece(i: int) -> str:
        return model.tokenizer.piece(i).text if model.tokenizer is not None else str(i)

    if args.json:
        lens = trace.logit_lens(k=args.top, positions=asked)
        print(json.dumps(lens.to_dict(pieces=piece), ensure_ascii=False))
        return 0
    lens = trace.logit_lens(k=1, positions=asked)

    formed = _formed_characters(model, trace.ids)

    def header(p: int, most: int) -> str:
        if p in formed:  # a byte token: the character it helps form, and which part it is
            text, part, parts = formed[p]
            return f"{p}\n{abbreviate(visible(text), most - 4)} {part}/{parts}"
        label = trace.pieces[p].text if trace.pieces else str(trace.ids[p])
        return f"{p}\n{abbreviate(label, most)}"

    def cell(s: int, j: int, most: int) -> tuple[str, float]:
        prob = float(lens.top_probs[s, j, 0])
        return f"{abbreviate(piece(int(lens.top_ids[s, j, 0])), most)}\n{prob:.2f}", prob

    # each column as wide as what it holds (a one-character token takes 4, not CELL)
    def width(j: int, most: int) -> int:
        texts = [header(lens.positions[j], most)]
        texts += [cell(s, j, most)[0] for s in range(len(lens.stages))]
        return max(cell_len(line) for text in texts for line in text.split("\n"))

    label = max(cell_len(x) for x in [say("report.lens.layer"), *map(_stage, lens.stages)])
    order = range(len(lens.positions) - 1, -1, -1) if args.positions is None else None

    # as many positions as the terminal shows, the last ones or the first asked for
    def fitting(most: int) -> list[int]:
        room, keep = terminal_width() - label, []
        for j in order or range(len(lens.positions)):
            needs = width(j, most) + 1
            if keep and needs > room:
                break
            room -= needs
            keep.append(j)
        return sorted(keep)

    # tokens cut at CELL characters, or longer where that still shows as many positions
    keep, most = fitting(CELL), CELL
    for wider in range(WIDEST, CELL, -1):
        shown_wider = fitting(wider)
        if len(shown_wider) >= len(keep):
            keep, most = shown_wider, wider
            break
    title = say("report.lens.logit-lens", model=model.name)
    if args.ablate:
        title = say(
            "report.lens.logit-lens-ablated",
            model=model.name,
            ablated=", ".join(args.ablate),
        )
    table = Table(
        box=None,
        pad_edge=False,
        padding=(0, 1),
        collapse_padding=True,
    )
    table.add_column(say("report.lens.layer"), style="cyan", no_wrap=True)
    for j in keep:
        table.add_column(header(lens.positions[j], most), justify="center", no_wrap=True)
    for s, stage in enumerate(lens.stages):
        cells = []
        for j in keep:
            text, prob = cell(s, j, most)
            shade = int(232 + min(1.0, prob) * 23)
            cells.append(Text(text, style=f"on color({shade})" + (" black" if prob > 0.5 else "")))
        table.add_row(_stage(stage), *cells)
    console = Console(width=terminal_width())
    # above the table, not its title: a title wraps to the table's width, often a few columns
    console.print(Text(title, style="italic"))
    console.print(table)
    n, shown = len(trace), [lens.positions[j] for j in keep]
    if args.positions is None and len(shown) < min(n, LAST):
        note = say("report.lens.positions-of-wider", first=shown[0], last=shown[-1], n=n)
        console.print(Text(note, style="dim"))
    elif args.positions is not None and len(shown) < len(_positions(args.positions, n)):
        asked_n = len(_positions(args.positions, n))
        note = say("report.lens.positions-asked-for-fit", shown=len(shown), asked=asked_n)
        console.print(Text(note, style="dim"))
    console.print(say("report.lens.cell-top-prediction-after"))
    return 0


def _stage(stage: str) -> str:
    """A row's label: "embed" or "block N" (engine.lens) in the chosen language."""
    if stage == "embed":
        return say("report.lens.embed")
    return say("report.lens.block", n=stage.removeprefix("block "))
