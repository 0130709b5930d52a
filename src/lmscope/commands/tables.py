"""Tables that fit the terminal: a table wider than the terminal is printed as several, each
with the columns that name its rows (a layer, N, a model) and as many of the others as fit.
Squeezed into too few columns, rich wraps every value over two lines and cuts the longest
short ("16,3…" for 16,384), so a reader would see numbers that are not the model's."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.cells import cell_len
from rich.console import JustifyMethod
from rich.table import Table
from rich.text import Text

RULE_AND_PADDING = 3  # a column's rule and a space either side of its text
OUTER_RULE = 1  # the table's left edge


@dataclass
class Column:
    header: str
    justify: JustifyMethod = "right"
    style: str = ""


@dataclass
class WideTable:
    """A table's columns and rows; ``keys`` leading columns name each row and are repeated
    in every part."""

    columns: list[Column]
    rows: list[Sequence[str | Text]] = field(default_factory=list)
    keys: int = 1

    def add_row(self, *cells: str | Text) -> None:
        self.rows.append(cells)

    def parts(self, width: int) -> list[Table]:
        """The table as rich Tables that each fit ``width`` columns. A title goes on a line of
        its own above them: as a table's title it would wrap to the first part's width."""
        widths = [
            max([cell_len(c.header)] + [_width(row[i]) for row in self.rows])
            for i, c in enumerate(self.columns)
        ]
        keys = range(self.keys)
        tables = []
        for span in column_spans(widths[self.keys :], sum_width(widths[: self.keys]), width):
            shown = [*keys, *(self.keys + i for i in span)]
            table = Table()
            for i in shown:
                c = self.columns[i]
                table.add_column(c.header, justify=c.justify, style=c.style)
            for row in self.rows:
                table.add_row(*(row[i] for i in shown))
            tables.append(table)
        return tables


def _width(cell: str | Text) -> int:
    return cell.cell_len if isinstance(cell, Text) else cell_len(cell)


def sum_width(widths: Sequence[int]) -> int:
    """What columns of these text widths take in a table, its left edge included."""
    return OUTER_RULE + sum(w + RULE_AND_PADDING for w in widths)


def column_spans(widths: list[int], keys_width: int, room: int) -> list[range]:
    """The fewest runs of consecutive columns, of near-equal count, that each fit ``room``
    beside the key columns (``keys_width``, as ``sum_width`` counts them); a column that
    cannot fit even alone gets a run of its own."""
    n = len(widths)
    if n == 0:
        return [range(0)]  # the key columns alone
    for parts in range(1, n + 1):
        size = -(-n // parts)
        spans = [range(i, min(i + size, n)) for i in range(0, n, size)]
        if all(keys_width + sum_width([widths[i] for i in s]) - OUTER_RULE <= room for s in spans):
            return spans
    return [range(i, i + 1) for i in range(n)]
