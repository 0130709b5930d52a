"""Where a line of Chinese may break in the terminal. Chinese has no spaces between words: a
line may break between any two characters, except before closing punctuation (，。）…) and
after an opening bracket. rich breaks lines at spaces only (Textualize/rich#2494), so a
Chinese sentence after a short English word moved whole to the next line and left the line
before it half empty. ``install`` gives rich this rule for the lines that hold Chinese; every
other line still breaks where rich breaks it. ``--help`` in Chinese wraps by the same rule."""

from __future__ import annotations

import re

from rich.cells import cell_len, chop_cells

# a unit no line breaks inside: a run of spaces, a run of other narrow characters (a word, a
# number, "q·k"), or one character of the scripts written without spaces
_UNIT = re.compile(r"\s+|[^\s\u2e80-\u9fff\u3000-\u303f\uff00-\uffef]+|.")
_WIDE = re.compile(r"[\u2e80-\u9fff\u3000-\u303f\uff00-\uffef]")
CLOSING = set("，。；：、！？）」》”…")  # never starts a line
OPENING = set("（「《“")  # never ends one


def _units(text: str) -> list[tuple[int, str]]:
    """``text`` as (start, unit): closing punctuation joins the unit before it, an opening
    bracket the unit after it."""
    units: list[tuple[int, str]] = []
    for match in _UNIT.finditer(text):
        unit = match.group()
        previous = units[-1][1] if units else ""
        joins = previous and not previous.isspace() and not unit.isspace()
        if joins and (unit[0] in CLOSING or previous[-1] in OPENING):
            units[-1] = (units[-1][0], previous + unit)
        else:
            units.append((match.start(), unit))
    return units


def line_breaks(text: str, width: int, fold: bool = True) -> list[int]:
    """The offsets in ``text`` where lines of at most ``width`` cells begin (rich's
    ``divide_line``'s contract). Spaces stay at the end of the line they follow; a unit wider
    than a whole line is cut by cells when ``fold``."""
    breaks: list[int] = []
    used, has_text = 0, False
    for start, unit in _units(text):
        size = cell_len(unit)
        if unit.isspace():
            used += size
            continue
        if has_text and used + size > width:
            breaks.append(start)
            used = 0
        if fold and size > width:
            pieces = chop_cells(unit, width)
            for piece in pieces[:-1]:
                start += len(piece)
                breaks.append(start)
            size = cell_len(pieces[-1])
        used, has_text = used + size, True
    return breaks


def wrap_cells(text: str, width: int) -> list[str]:
    """``text`` with its runs of spaces as one, in lines of at most ``width`` columns."""
    text = " ".join(text.split())
    starts = [0, *line_breaks(text, width, fold=False), len(text)]
    return [text[a:b].rstrip() for a, b in zip(starts, starts[1:], strict=False) if a < b]


def install() -> None:
    """Let rich break the lines that hold Chinese where Chinese may break (once a process)."""
    import rich.text

    rich_divide = getattr(rich.text, "divide_line", None)
    if rich_divide is None or getattr(rich_divide, "breaks_chinese", False):
        return  # a rich without this function wraps as it does; or already installed

    def divide_line(text: str, width: int, fold: bool = True) -> list[int]:
        if _WIDE.search(text):
            return line_breaks(text, width, fold)
        return rich_divide(text, width, fold=fold)

    divide_line.breaks_chinese = True  # type: ignore[attr-defined]
    rich.text.divide_line = divide_line
