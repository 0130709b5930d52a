"""The comparison's picture: its text laid out on a grid (words kept whole, wide characters two
cells), and each cell coloured by its unit's value."""

from __future__ import annotations

import numpy as np
import pytest

from lmscope.interpret.compare import Comparison, _loss_colour, to_png
from lmscope.interpret.compare_png import CELL_IN, MARGIN_IN, ROW_IN, TITLE_IN, layout


def rows(cells) -> list[str]:
    lines: dict[int, str] = {}
    for c in sorted(cells, key=lambda c: (c.y, c.x)):
        line = lines.get(c.y, "")
        lines[c.y] = line + " " * (c.x - len(line)) + c.char + " " * (c.width - 1)
    return [lines[y] for y in sorted(lines)]


def test_words_are_not_broken_across_lines():
    """The picture read "the l / azy dog": lines broke at column 80 inside words."""
    assert rows(layout(list("the lazy dog jumps"), 10)) == ["the lazy ", "dog jumps"]
    assert rows(layout(["the", " lazy", " dog"], 8)) == ["the lazy", " dog"]  # a space ends it
    assert rows(layout(list("abcdefghijkl"), 5)) == ["abcde", "fghij", "kl"]  # longer than a line
    assert rows(layout(list("ab\ncd"), 10)) == ["ab↵", "cd"]


def test_a_wide_character_takes_two_cells_and_is_never_split():
    cells = layout(list("我爱你们"), 5)
    assert [(c.x, c.y, c.width) for c in cells] == [(0, 0, 2), (2, 0, 2), (0, 1, 2), (2, 1, 2)]


def test_each_cell_is_coloured_by_its_units_value(tmp_path):
    pieces = ["ab", " ", "cd"]  # the space (unit 1) is a cell with no glyph over its colour
    c = Comparison("token", ("A", "B"), pieces, [0.0, 4.0, 1.0], [1.0, 0.0, 1.0], 2.0, 0.7)
    path = tmp_path / "compare.png"
    to_png(c, path, columns=10)
    import matplotlib.image

    image = np.asarray(matplotlib.image.imread(path))[..., :3]
    dpi = 150
    x_in = MARGIN_IN + 2.5 * CELL_IN  # the space's cell, row 0 of panel A
    y_in = MARGIN_IN / 2 + TITLE_IN + 0.5 * ROW_IN
    shown = image[round(y_in * dpi), round(x_in * dpi)] * 255
    assert shown == pytest.approx(_loss_colour(4.0, 4.0), abs=2)  # the most surprised: red
    assert shown.tolist() != pytest.approx([255, 255, 255], abs=2)


def test_the_difference_scale_writes_a_minus_sign(tmp_path, monkeypatch):
    """The B − A scale read '-4.3' under a title of 'B − A': a hyphen, where every other
    figure of lmscope writes the minus sign (tanh(c) = −1)."""
    import matplotlib.pyplot as plt

    figures = []
    monkeypatch.setattr(plt, "close", figures.append)
    c = Comparison("token", ("A", "B"), ["ab", "cd"], [0.0, 4.0], [1.0, 0.5], 2.0, 0.7)
    to_png(c, tmp_path / "compare.png", columns=10)
    scales = [ax for ax in figures[0].axes if ax.axison]  # the panels' own axes are hidden
    ticks = [t.get_text() for ax in scales for t in ax.get_xticklabels()]
    assert ticks[-2:] == ["−3.5", "3.5"] and not [t for t in ticks if "-" in t], ticks
