"""``lmscope circuits induction|patch|attribute``: which parts of a Transformer produce its
answer. Readable tables by default (grids with the strongest cells marked), the results'
``to_json()`` with --json (their shape: docs/circuits.md)."""

from __future__ import annotations

import contextlib
import json

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from lmscope.commands.common import (
    abbreviate,
    at_least,
    load_model,
    say,
    seed_value,
    signed_bar,
    terminal_width,
    use_lang,
)
from lmscope.commands.parsers import Options
from lmscope.commands.tables import Column, WideTable
from lmscope.errors import InvalidInputError

SPARK = "▁▂▃▄▅▆▇█"
TOP = 5  # heads named under a grid
# what the library says of an answer it refuses, naming it by its argument ({what})
ANSWER_REFUSED = {
    "error.circuits.not-one-token",
    "error.circuits.token-kind",
    "error.circuits.token-needs-id",
}


def register(commands):
    experiments = commands.add("circuits").subcommands("circuits_command", "EXPERIMENT")

    ind = experiments.add("induction", run_induction)
    ind.option("--length", type=at_least(2, "--length"), default=50, metavar="T")
    ind.option("--seed", type=seed_value, default=0)
    _common(ind)

    pat = experiments.add("patch", run_patch)
    for flag, metavar in (
        ("--clean", "TEXT"),
        ("--corrupt", "TEXT"),
        ("--right", "TOKEN"),
        ("--wrong", "TOKEN"),
    ):
        pat.option(flag, required=True, metavar=metavar)
    _common(pat)

    att = experiments.add("attribute", run_attribute)
    att.argument("text", key="shared")
    att.option("--token", required=True, metavar="TOKEN")
    att.option("--versus", metavar="TOKEN")
    att.option("--position", type=int, default=-1)
    att.option("--top", "-k", type=at_least(1, "--top"), default=12, metavar="K")
    _common(att)


def _common(options: Options) -> None:
    options.model()
    options.flag("--json", key="circuits")
    options.lang()


@contextlib.contextmanager
def _options_named():
    """An answer the library refuses is named by its argument (right, versus); here the reader
    typed the option (--right, --versus)."""
    try:
        yield
    except InvalidInputError as err:
        what = err.values.get("what")
        if err.code not in ANSWER_REFUSED or not isinstance(what, str):
            raise
        raise InvalidInputError(err.code, **{**err.values, "what": f"--{what}"}) from None


def _answer(text: str) -> int | str:
    """A --right/--wrong/--token/--versus value: a token id when it is digits, else text."""
    return int(text) if text.strip().isdigit() else text


def _shade(value: float, low: float, high: float) -> str:
    """A rich style for a cell: stronger the nearer ``value`` is to ``high``."""
    if high <= low:
        return ""
    level = (value - low) / (high - low)
    if level >= 0.75:
        return "bold reverse"
    if level >= 0.5:
        return "bold"
    return "" if level >= 0.2 else "dim"


def _grid(
    title: str, rows: list[str], cols: list[str], values, fmt: str = "{:.2f}", signed=False
) -> Group:
    """A table of numbers, rows x cols, the larger ones marked (``signed``: the larger in
    size, of either sign), under its title (a line of its own: a table's title wraps to the
    table's width mid-phrase); split into as many tables as the terminal needs."""
    flat = [abs(v) if signed else v for row in values for v in row]
    low, high = (0.0 if signed else min(flat, default=0.0)), max(flat, default=0.0)
    grid = WideTable([Column("", style="dim")] + [Column(col) for col in cols])
    for label, row in zip(rows, values, strict=True):
        cells = [Text(fmt.format(v), style=_shade(abs(v) if signed else v, low, high)) for v in row]
        grid.add_row(label, *cells)
    return Group(Text(title, style="italic"), *grid.parts(terminal_width()))


def _sparkline(values: list[float]) -> str:
    top = max(values, default=0.0) or 1.0
    return "".join(SPARK[min(len(SPARK) - 1, int(len(SPARK) * max(v, 0.0) / top))] for v in values)


def run_induction(args) -> int:
    from lmscope.interpret.circuits import induction_scores  # lazy: see lmscope.commands

    use_lang(args)
    model = load_model(args)
    result = induction_scores(model, length=args.length, seed=args.seed)
    if args.json:
        print(json.dumps(result.to_json(), ensure_ascii=False))
        return 0
    console = Console(width=terminal_width())
    first, second = result.copy_losses()
    n_layer, n_head = result.scores.shape
    heading = say(
        "report.circuits.induction.heading",
        model=model.name,
        length=result.length,
        seed=result.seed,
    )
    console.print(Text(heading, style="bold"))
    console.print(
        say("report.circuits.induction.bos" if result.bos else "report.circuits.induction.no-bos")
    )
    console.print(
        say("report.circuits.induction.loss", first=f"{first:.2f}", second=f"{second:.2f}")
    )
    losses = result.loss.tolist()
    console.print(say("report.circuits.induction.loss-curve"), _sparkline(losses))
    for key, previous in (
        ("report.circuits.induction.top-induction", False),
        ("report.circuits.induction.top-previous", True),
    ):
        named = ", ".join(
            f"{head} {score:.2f}" for head, score in result.top(TOP, previous=previous)
        )
        console.print(say(key, heads=named))
    rows = [f"L{layer}" for layer in range(n_layer)]
    cols = [f"H{head}" for head in range(n_head)]
    console.print(_grid(say("report.circuits.induction.grid"), rows, cols, result.scores.tolist()))
    console.print(
        _grid(
            say("report.circuits.induction.grid-previous"),
            rows,
            cols,
            result.previous_token.tolist(),
        )
    )
    return 0


def run_patch(args) -> int:
    from lmscope.interpret.circuits import patch  # lazy: see lmscope.commands

    use_lang(args)
    model = load_model(args)
    with _options_named():
        result = patch(model, args.clean, args.corrupt, _answer(args.right), _answer(args.wrong))
    if args.json:
        print(json.dumps(result.to_json(), ensure_ascii=False))
        return 0
    console = Console(width=terminal_width())
    right, wrong = abbreviate(result.right_token, 16), abbreviate(result.wrong_token, 16)
    for key, diff in (
        ("report.circuits.patch.clean", result.clean_diff),
        ("report.circuits.patch.corrupt", result.corrupt_diff),
    ):
        console.print(say(key, right=right, wrong=wrong, diff=f"{diff:+.3f}"))
    console.print(Text(say("report.circuits.patch.fraction"), style="italic"))
    resid = result.sites["resid_pre"]
    rows = [f"L{layer}" for layer in resid.rows]
    tokens = [abbreviate(t, 8) for t in result.clean_tokens]
    console.print(
        _grid(say("report.circuits.patch.resid-grid"), rows, tokens, resid.values.tolist())
    )
    heads, mlps = result.sites["attn_head"], result.sites["mlp_out"]
    cols = [f"H{head}" for head in heads.cols] + ["mlp"]
    values = [h + m for h, m in zip(heads.values.tolist(), mlps.values.tolist(), strict=True)]
    console.print(_grid(say("report.circuits.patch.head-grid"), rows, cols, values))
    return 0


def run_attribute(args) -> int:
    from lmscope.interpret.circuits import attribute  # lazy: see lmscope.commands

    use_lang(args)
    model = load_model(args)
    versus = None if args.versus is None else _answer(args.versus)
    with _options_named():
        result = attribute(model, args.text, _answer(args.token), versus, position=args.position)
    if args.json:
        print(json.dumps(result.to_json(), ensure_ascii=False))
        return 0
    console = Console(width=terminal_width())
    token = abbreviate(result.token_text, 16)
    after = abbreviate(result.tokens[result.position], 16)
    if result.versus_text is None:
        line = say(
            "report.circuits.attribute.logit",
            token=token,
            position=result.position,
            after=after,
            logit=f"{result.logit:.3f}",
        )
    else:
        line = say(
            "report.circuits.attribute.logit-versus",
            token=token,
            versus=abbreviate(result.versus_text, 16),
            position=result.position,
            after=after,
            logit=f"{result.logit:.3f}",
        )
    console.print(Text(line, style="bold"))
    console.print(Text(say("report.circuits.attribute.frozen"), style="italic"))
    largest = result.largest(args.top)
    widest = max((abs(v) for _, v in largest), default=0.0) or 1.0
    bar_width = max(4, min(30, terminal_width() - 30))
    console.print(Text(say("report.circuits.attribute.largest"), style="italic"))
    table = Table()
    table.add_column(say("report.circuits.attribute.part"))
    table.add_column(say("report.circuits.attribute.value"), justify="right")
    table.add_column("")
    for name, value in largest:
        table.add_row(name, f"{value:+.3f}", signed_bar(value, widest, bar_width))
    console.print(table)
    for name, value in result.remainder.items():
        console.print(say("report.circuits.attribute.remainder", name=name, value=f"{value:+.3f}"))
    console.print(
        say(
            "report.circuits.attribute.total",
            total=f"{result.total:.3f}",
            logit=f"{result.logit:.3f}",
        )
    )
    n_layer, n_head = result.heads.shape
    rows = [f"L{layer}" for layer in range(n_layer)]
    cols = [f"H{head}" for head in range(n_head)] + ["mlp"]
    values = [h + [m] for h, m in zip(result.heads.tolist(), result.mlps.tolist(), strict=True)]
    console.print(
        _grid(say("report.circuits.attribute.grid"), rows, cols, values, "{:+.2f}", signed=True)
    )
    return 0
