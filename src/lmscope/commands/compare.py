"""``lmscope compare --model A --model B --text FILE``: two models' surprise, side by side."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import lmscope
from lmscope import i18n
from lmscope.commands.common import (
    at_least,
    current_lang,
    read_text_file,
    say,
    terminal_width,
    use_lang,
)
from lmscope.errors import InvalidInputError


def register(commands):
    p = commands.add("compare", run)
    p.option("--model", "-m", action="append", required=True, metavar="MODEL")
    p.option("--text", required=True, metavar="FILE")
    p.option("--out", default="lmscope-compare")
    p.option("--max-chars", type=at_least(1, "--max-chars"), default=4000)
    p.nonfinite()
    p.lang()


def _out_folder(text: str) -> Path:
    """``--out``, refused in one line when empty (it would write into the current folder),
    when a file is in the way (mkdir would raise) or when nothing can be written there."""
    from lmscope.formats.atomic import cannot_write_in  # lazy: see lmscope.commands

    if not text.strip():
        raise InvalidInputError("error.cli.out-empty", example="lmscope-compare")
    out = Path(text)
    if out.exists() and not out.is_dir():
        raise InvalidInputError("error.cli.out-is-file", path=str(out))
    for parent in out.parents:
        if parent.exists() and not parent.is_dir():
            raise InvalidInputError("error.cli.cannot-create", out=str(out), where=str(parent))
    problem = cannot_write_in(out)  # tried with a real file: root passes os.access everywhere
    if problem is not None:
        raise InvalidInputError("error.cli.out-problem", out=str(out), problem=problem)
    return out


def run(args) -> int:
    from lmscope.interpret.compare import UNIT_IDS, compare, to_html, to_png  # lazy: see commands

    use_lang(args)
    if len(args.model) != 2:
        raise InvalidInputError("error.compare.two-models", n=len(args.model))
    out = _out_folder(args.out)  # before the (slow) model loads
    whole = read_text_file(args.text)
    text = whole[: args.max_chars]
    a, b = (lmscope.load(m, allow_nonfinite=args.allow_nonfinite) for m in args.model)
    result = compare(a, b, text)
    # what a text longer than --max-chars gets, on the terminal and in the files
    cut = "report.compare.compared-first-of" if len(text) < len(whole) else ""
    sizes = {"n": f"{len(text):,}", "total": f"{len(whole):,}"}
    # the note (the models split the text differently) is the one compare() writes in English
    note = "report.compare.models-split-text" if result.note else ""
    english = "; ".join(i18n.text(x, "en", **sizes) for x in (note, cut) if x)
    # the files say it in the command's language (--lang), as its terminal summary does
    saved = replace(result, note=english)
    said = "; ".join(say(x, **sizes) for x in (note, cut) if x)  # the note, in --lang
    lang = {"zh": "zh-CN"}.get(current_lang(), "en")
    page = to_html(replace(saved, note=said), say, lang)
    try:  # a disk that fills up, a folder made read-only meanwhile: one line
        out.mkdir(parents=True, exist_ok=True)
        (out / "compare.html").write_text(page, encoding="utf-8")
        (out / "compare.json").write_text(
            json.dumps(saved.to_dict(), ensure_ascii=False), encoding="utf-8"
        )
        to_png(result, out / "compare.png", say=say)
    except OSError as err:
        raise InvalidInputError(
            "error.cli.cannot-write-in", out=str(out), why=err.strerror or err
        ) from None
    from rich.console import Console  # lazy: see lmscope.commands

    # as wide as the terminal: a long path is folded, not left to overflow
    console = Console(width=terminal_width(), highlight=False)
    lines = [
        say(
            "report.compare.per-mean-loss-nats",
            unit=say(UNIT_IDS[result.unit]),
            a=result.names[0],
            loss_a=f"{result.mean_a:.3f}",
            b=result.names[1],
            loss_b=f"{result.mean_b:.3f}",
        )
    ]
    if note:
        lines.append(say(note))
    if cut:
        lines.append(say(cut, **sizes))
    files = ", ".join(str(out / name) for name in ("compare.html", "compare.png", "compare.json"))
    lines.append(say("report.compare.wrote", files=files))
    for line in lines:
        console.print(line, markup=False, overflow="fold")
    return 0
