"""``lmscope ablate "text" --ablate L5H3``: switch heads or sublayers off, see what changes."""

from __future__ import annotations

import json

from rich.console import Console
from rich.table import Table
from rich.text import Text

from lmscope.commands.common import (
    abbreviate,
    at_least,
    load_model,
    say,
    signed_bar,
    terminal_width,
    use_lang,
)

BAR = 20  # characters of the widest change bar, fewer in a narrow terminal


def register(commands):
    p = commands.add("ablate", run)
    p.argument("text", key="shared")
    p.option("--ablate", "-a", action="append", required=True, metavar="SPEC")
    p.model()
    p.option("--mode", choices=("zero", "mean"), default="zero")
    p.option("--position", type=int, default=-1)
    p.option("--top", "-k", type=at_least(1, "--top"), default=10, metavar="K")
    p.flag("--json")
    p.lang()


def run(args) -> int:
    from lmscope.interpret import ablation_effect  # lazy: see lmscope.commands

    use_lang(args)
    model = load_model(args)
    # as lens: a --top beyond the vocabulary shows all of it (topk would fail)
    k = min(args.top, model.vocab_size)
    effect = ablation_effect(
        model, args.text, args.ablate, mode=args.mode, position=args.position, k=k
    )
    if args.json:
        print(json.dumps(effect.to_dict(), ensure_ascii=False))
        return 0
    width = terminal_width()
    title = say(
        "report.ablate.ablated-at-position-kl",
        parts=", ".join(effect.ablations),
        mode=say({"zero": "report.ablate.zero", "mean": "report.ablate.mean"}[effect.mode]),
        position=effect.position,
        kl=f"{effect.kl:.4f}",
    )
    table = Table()
    table.add_column(say("report.ablate.token"), justify="left")
    for col in ("report.ablate.before", "report.ablate.after", "report.ablate.change"):
        table.add_column(say(col), justify="right")
    table.add_column("", justify="left")
    # token 14 + three numbers of 7 + the table's rules and padding: about 50 columns
    bar_width = max(4, min(BAR, width - 50))
    largest = max((abs(r["change"]) for r in effect.diff), default=0.0) or 1.0
    for row in sorted(effect.diff, key=lambda r: -max(r["before"], r["after"])):
        table.add_row(
            abbreviate(row["token"], 14),
            f"{row['before']:.4f}",
            f"{row['after']:.4f}",
            f"{row['change']:+.4f}",
            signed_bar(row["change"], largest, bar_width),
        )
    console = Console(width=width)
    # above the table, not its title: a title wraps to the table's width mid-phrase
    console.print(Text(title, style="italic"))
    console.print(table)
    return 0
