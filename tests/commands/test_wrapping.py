"""Chinese lines in the terminal break where Chinese may break (between any two characters,
never before closing punctuation nor after an opening bracket), so they fill the width; every
other line breaks exactly where rich breaks it."""

from __future__ import annotations

import io

import pytest
import rich._wrap
import rich.text
from rich.cells import cell_len
from rich.console import Console

import lmscope.commands  # noqa: F401  (installs the rule, as every command does)
from lmscope.commands.wrapping import CLOSING, OPENING, line_breaks, wrap_cells

# a paragraph of the lab's, with English words and numbers among the Chinese
PARAGRAPH = (
    "所有模型以相同顺序读取相同的 batch（训练文本按 batch 的每一行切成一条连续的流，每步 N "
    "个字符），用同一个训练器和同一类优化器，训练相同预算的 CPU 时间。课程的论点是：RNN "
    "每个窗口必须走 N 个前后依赖的步骤，每步只是一次小矩阵乘法；Transformer 则用几次大矩阵"
    "乘法一次算完全部 N 个位置。"
)


def printed(text: str, width: int) -> list[str]:
    out = io.StringIO()
    Console(file=out, width=width, color_system=None).print(rich.text.Text(text))
    return [line.rstrip() for line in out.getvalue().splitlines()]


@pytest.mark.parametrize("width", [30, 41, 80])
def test_a_chinese_paragraph_fills_its_lines(width):
    lines = printed(PARAGRAPH, width)
    assert "".join(lines).replace(" ", "") == PARAGRAPH.replace(" ", "")  # nothing lost
    for line, after in zip(lines, lines[1:], strict=False):
        assert cell_len(line) <= width
        # the next line's first unit did not fit here (rich left up to 29 columns empty)
        first = after.split(" ")[0] if after[0].isascii() else after[0]
        assert cell_len(line) + 1 + cell_len(first) > width, (line, after)
        assert after[0] not in CLOSING and line[-1] not in OPENING, (line, after)


@pytest.mark.parametrize(
    "text",
    [
        "One forward pass of causal self-attention over N positions (12 heads × d_head 64), "
        "three ways: naive attention that materialises the N × N score matrix of every head.",
        "  indented, with   runs of spaces and a verylongwordthatcannotfitonanyline at all",
        "",
    ],
)
@pytest.mark.parametrize("width", [10, 33, 80])
def test_lines_without_chinese_break_where_rich_breaks_them(text, width):
    assert rich.text.divide_line is not rich._wrap.divide_line  # the rule is installed
    for fold in (True, False):
        assert rich.text.divide_line(text, width, fold=fold) == rich._wrap.divide_line(
            text, width, fold=fold
        )


def test_a_unit_wider_than_the_line_is_cut_by_cells_when_folding():
    text = "见 " + "x" * 25 + " 完"
    starts = line_breaks(text, 10)
    pieces = [text[a:b] for a, b in zip([0, *starts], [*starts, len(text)], strict=True)]
    assert [p.rstrip() for p in pieces] == ["见", "x" * 10, "x" * 10, "x" * 5 + " 完"]
    assert wrap_cells(text, 10) == ["见", "x" * 25, "完"]  # --help keeps it whole on its line


def test_help_lines_keep_punctuation_with_its_character():
    lines = wrap_cells("每个位置的旋转（括号里是转一圈的位置数），以及更多的说明文字。", 12)
    assert all(cell_len(line) <= 12 for line in lines)
    assert not any(line[0] in CLOSING or line[-1] in OPENING for line in lines), lines
