"""The comparison as a picture: three panels of the text (model A's loss, model B's, B − A), each
character on a cell coloured by its value, with the colour scale beside each title.

The text is laid out on a grid first (``layout``): lines break at newlines and before a word
that would cross the right edge, and wide characters (CJK) take two cells. Each panel's colours
are then one image, and its text one string per run of narrow characters, set in a monospace
font whose advance is exactly one cell, so a few hundred artists draw thousands of characters.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from pathlib import Path

from lmscope.interpret.fonts import cjk_fonts, words_fonts

CELL_IN = 0.1  # a cell's width, inches
ROW_IN = 0.2  # a row's height, inches
MARGIN_IN = 0.25
TITLE_IN = 0.6  # room above each panel for its title and colour scale
FONT = "DejaVu Sans Mono"  # ships with matplotlib
ADVANCE_EM = 1233 / 2048  # DejaVu Sans Mono's advance width, in em


@dataclass(frozen=True)
class Cell:
    x: int  # column of its first cell
    y: int  # row
    char: str  # what is drawn ("↵" for a newline)
    unit: int  # the token or character whose value colours it
    width: int = 1  # cells it takes: 2 for a wide character


def _width(ch: str) -> int:
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def layout(pieces: list[str], columns: int) -> list[Cell]:
    """Cells of ``pieces`` on a grid ``columns`` wide. A word that would cross the right edge
    starts the next line (split only when longer than a line); a newline is drawn as "↵" and
    ends its line."""
    cells: list[Cell] = []
    word: list[int] = []  # indices (in cells) of the word being laid out on this line
    x = y = 0
    for unit, piece in enumerate(pieces):
        for ch in piece:
            if ch == "\n":
                cells.append(Cell(x, y, "↵", unit))
                x, y, word = 0, y + 1, []
                continue
            w = _width(ch)
            if x + w > columns and ch.isspace():  # the word before it fit: break here
                x, y, word = 0, y + 1, []
            elif x + w > columns:
                carried = sum(cells[k].width for k in word)
                if word and carried + w <= columns and cells[word[0]].x > 0:
                    dx = 0  # carry the word to the next line
                    for k in word:
                        cells[k] = Cell(dx, y + 1, cells[k].char, cells[k].unit, cells[k].width)
                        dx += cells[k].width
                    x, y = dx, y + 1
                else:
                    x, y, word = 0, y + 1, []
            cells.append(Cell(x, y, ch, unit, w))
            word = [] if ch.isspace() else [*word, len(cells) - 1]
            x += w
    return cells


def _runs(cells: list[Cell]) -> list[tuple[int, int, str, bool]]:
    """(x, y, text, wide) to draw: each run of narrow characters side by side on one row as
    one string, each wide character alone."""
    runs: list[tuple[int, int, str, bool]] = []
    for c in sorted(cells, key=lambda c: (c.y, c.x)):
        last = runs[-1] if runs else None
        # the next cell of a narrow run on the same row
        follows = last is not None and not last[3] and last[1] == c.y
        if c.width == 1 and follows and last[0] + len(last[2]) == c.x:
            runs[-1] = (last[0], last[1], last[2] + c.char, False)
        else:
            runs.append((c.x, c.y, c.char, c.width == 2))
    return runs


def draw(
    path: str | Path,
    pieces: list[str],
    panels: list[tuple[list, object, tuple[float, float], str, str]],
    columns: int = 80,
) -> None:
    """Write the panels as a PNG. Each panel is (values per unit, colour(value, scale) -> RGB,
    the scale's (low, high), title, what the scale shows); ``high`` is the colour's scale."""
    import matplotlib  # here: the web app imports the comparison, and draws no PNGs

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    cells = layout(pieces, columns)
    rows = max((c.y for c in cells), default=0) + 1
    panel_in = TITLE_IN + rows * ROW_IN
    width_in, height_in = columns * CELL_IN + 2 * MARGIN_IN, len(panels) * panel_in + MARGIN_IN
    fig = plt.figure(figsize=(width_in, height_in))
    font_pt = CELL_IN * 72 / ADVANCE_EM  # one character's advance is one cell
    runs = _runs(cells)
    # wide characters (CJK) in the CJK font, the system's or the bundled one (fonts.py)
    wide_font, words_font = [*cjk_fonts(), FONT], words_fonts()  # a glyph from the first with it
    for p, (values, colour, (low, scale), title, ends) in enumerate(panels):
        top_in = MARGIN_IN / 2 + p * panel_in + TITLE_IN
        ax = fig.add_axes(
            (
                MARGIN_IN / width_in,
                1 - (top_in + rows * ROW_IN) / height_in,
                columns * CELL_IN / width_in,
                rows * ROW_IN / height_in,
            )
        )
        image = np.ones((rows, columns, 3))
        for c in cells:
            image[c.y, c.x : c.x + c.width] = [v / 255 for v in colour(values[c.unit], scale)]
        ax.imshow(image, extent=(0, columns, rows, 0), interpolation="nearest", aspect="auto")
        ax.set_xlim(0, columns)
        ax.set_ylim(rows, 0)
        ax.axis("off")
        for x, y, text, wide in runs:
            ax.text(
                x + (1.0 if wide else 0.0),
                y + 0.55,
                text,
                ha="center" if wide else "left",
                va="center",
                fontsize=font_pt,
                family=wide_font if wide else FONT,
            )
        ax.text(0, -0.35 * TITLE_IN / ROW_IN, title, fontsize=10, va="bottom", family=words_font)
        cax = _scale_bar(fig, colour, (low, scale), ends, (width_in, height_in), top_in)
        cax.title.set_fontfamily(words_font)
    fig.savefig(path, dpi=150)
    plt.close(fig)


def _scale_bar(fig, colour, ends, label, size_in, top_in):
    """A small gradient of the panel's colours from ``ends`` (low, high), labelled, at the
    right of its title."""
    import numpy as np

    (low, scale), (width_in, height_in) = ends, size_in
    high = scale if scale > low else low + 1.0  # nothing to scale (a model against itself)
    steps = np.linspace(low, high, 64)
    bar = np.array([[[v / 255 for v in colour(float(s), scale)] for s in steps]])
    bar_w_in, bar_h_in = 1.6, 0.1
    left = (width_in - MARGIN_IN - bar_w_in) / width_in
    bottom = 1 - (top_in - 0.25) / height_in  # its tick labels clear the text below
    cax = fig.add_axes((left, bottom, bar_w_in / width_in, bar_h_in / height_in))
    cax.imshow(bar, aspect="auto", extent=(low, high, 0, 1))
    cax.set_yticks([])
    cax.set_xticks([low, high])
    # the minus sign, as every figure and the page write it (a hyphen is shorter and lower)
    cax.set_xticklabels([f"{x:.1f}".replace("-", "−") for x in (low, high)], fontsize=7)
    cax.tick_params(length=2, pad=1)
    cax.set_title(label, fontsize=7, pad=2)
    return cax
