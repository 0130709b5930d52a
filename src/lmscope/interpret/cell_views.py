"""Karpathy-style coloured text: each character shaded by one unit's value after reading it.

Red is positive, blue negative, white zero. The shade is the value on a [-1, 1] scale:
tanh(c) for an LSTM cell state (as in Karpathy's figures: c itself is unbounded), 2v - 1 for
the sigmoid gates (i f o r z: blue means closed, red open), and the value itself for the
tanh-bounded h, g and n. Hovering a character (HTML) shows the exact value and the model's
top-5 next characters. Characters the model skipped (outside its vocabulary) are grey and
struck through. These views only draw the numbers they are given: ``NeuronRun.view`` (in
``lmscope.interpret.neurons``) lays one unit's values over its text as a ``CellText``.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lmscope import i18n
from lmscope.engine import checks
from lmscope.errors import InvalidInputError
from lmscope.formats.atomic import writing
from lmscope.interpret.fonts import mono_fonts, words_fonts

RED = np.array([214, 39, 40])
BLUE = np.array([31, 119, 180])
WHITE = np.array([255, 255, 255])
SIGMOID_KINDS = ("i", "f", "o", "r", "z")


def shade(kind: str, values: np.ndarray) -> np.ndarray:
    """Values mapped onto [-1, 1] for colouring (see the module docstring)."""
    values = np.asarray(values, dtype=np.float64)
    if kind == "c":
        return np.tanh(values)
    if kind in SIGMOID_KINDS:
        return np.clip(2 * values - 1, -1, 1)
    return np.clip(values, -1, 1)


def rgb(x: float) -> tuple[int, int, int]:
    """White -> red for x in (0, 1], white -> blue for x in [-1, 0)."""
    end = RED if x >= 0 else BLUE
    mixed = WHITE + (end - WHITE) * min(abs(float(x)), 1.0)
    return tuple(int(round(v)) for v in mixed)


def shown(ch: str) -> str:
    """A character as the views print it: a newline is ↵, a tab →."""
    return {"\n": "↵", "\t": "→"}.get(ch, ch)


@dataclass
class CellText:
    """One unit's values laid over the original text, ready to draw."""

    title: str
    kind: str
    text: str
    slots: list[int | None]  # per character of ``text``: index into values, or None (skipped)
    values: np.ndarray  # [T] the unit's value after each character read
    shades: np.ndarray  # [T] on [-1, 1]
    predictions: list[list[tuple[str, float]]]  # [T] top next characters
    lang: str = "en"  # the words drawn in pictures (the legend); the title is given as is

    # --- HTML (notebooks, files) -----------------------------------------------------------

    def to_html(self) -> str:
        parts = [
            '<div class="lmscope-cell" style="font-family:ui-monospace,Menlo,Consolas,monospace;'
            "font-size:13px;line-height:1.6;white-space:pre-wrap;word-break:break-all;"
            'max-width:100ch">',
            f'<div style="font-weight:bold;margin-bottom:4px">{html.escape(self.title)}</div>',
        ]
        skipped = i18n.text("report.cells.skipped", self.lang)
        for ch, slot in zip(self.text, self.slots, strict=True):
            if slot is None:
                parts.append(
                    '<span style="color:#999;text-decoration:line-through" '
                    f'title="{html.escape(skipped, quote=True)}">{html.escape(shown(ch))}</span>'
                )
                continue
            r, g, b = rgb(self.shades[slot])
            tip = html.escape(self._tip(ch, slot), quote=True)
            glyph = html.escape("↵" if ch == "\n" else ch)
            parts.append(f'<span style="background:rgb({r},{g},{b})" title="{tip}">{glyph}</span>')
            if ch == "\n":
                parts.append("\n")
        parts.append("</div>")
        return "".join(parts)

    def _tip(self, ch: str, t: int) -> str:
        top = ", ".join(f"{shown(c)!r} {p:.1%}" for c, p in self.predictions[t])
        following = i18n.text("report.cells.next", self.lang, top=top)
        return f"{shown(ch)!r}  {self.kind} = {self.values[t]:+.4f}\n{following}"

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:  # the dataclass repr printed the text and every value
        head = self.text[:24].replace("\n", "↵") + ("…" if len(self.text) > 24 else "")
        spread = ""
        if len(self.values):
            spread = f", {self.kind} from {self.values.min():+.3f} to {self.values.max():+.3f}"
        return f"CellText({self.title!r}, {len(self.text):,} characters {head!r}{spread})"

    def save_html(self, path: str | Path) -> Path:
        path = Path(path)
        page = (
            '<!doctype html><meta charset="utf-8"><title>'
            f"{html.escape(self.title)}</title><body>{self.to_html()}</body>"
        )
        with writing(path):
            path.write_text(page, encoding="utf-8")
        return path

    # --- PNG / SVG (the CLI) ---------------------------------------------------------------

    def figure(self, width: int = 80, max_lines: int = 200):
        """A matplotlib Figure: the text on a grid of coloured cells, wrapped at ``width``."""
        from matplotlib.figure import Figure  # here: notebooks and the web app draw HTML only

        checks.index(width, 10_000, "width")  # 0: nothing to show
        if width == 0:
            raise InvalidInputError("error.cells.width-zero")
        grid = _layout(self.text, width, max_lines)
        rows = max(1, max(r for r, _, _ in grid) + 1 if grid else 1)
        colours = np.ones((rows, width, 3))
        for r, col, i in grid:
            slot = self.slots[i]
            colours[r, col] = (
                np.array([0.93, 0.93, 0.93])
                if slot is None
                else np.array(rgb(self.shades[slot])) / 255
            )
        cell_w, cell_h = 0.085, 0.19  # inches per character
        head, foot, side = 0.45, 0.55, 0.2  # margins in inches: title, legend, left/right
        fig_w, fig_h = width * cell_w + 2 * side, rows * cell_h + head + foot
        fig = Figure(figsize=(fig_w, fig_h))
        ax = fig.add_axes((side / fig_w, foot / fig_h, 1 - 2 * side / fig_w, rows * cell_h / fig_h))
        ax.imshow(colours, aspect="auto", interpolation="nearest", extent=(0, width, rows, 0))
        cell_font = mono_fonts()  # a Chinese text is drawn, not boxes
        for r, col, i in grid:
            ch = self.text[i]
            if ch == " ":
                continue
            ax.text(
                col + 0.5,
                r + 0.5,
                shown(ch),
                ha="center",
                va="center_baseline",
                fontsize=9,
                family=cell_font,
                color="#888888" if self.slots[i] is None else "#111111",
            )
        ax.set_xlim(0, width)
        ax.set_ylim(rows, 0)
        ax.axis("off")
        fig.text(
            side / fig_w,
            1 - 0.12 / fig_h,
            self.title,
            va="top",
            fontsize=10,
            weight="bold",
            family=words_fonts(),  # a Chinese title needs a CJK font's glyphs
        )
        _legend(
            fig,
            self.kind,
            (1 - side / fig_w - 3.2 / fig_w, 0.3 / fig_h, 3.2 / fig_w, 0.12 / fig_h),
            self.lang,
        )
        return fig

    def save_png(self, path: str | Path, width: int = 80) -> Path:
        path, figure = Path(path), self.figure(width)
        with writing(path):
            figure.savefig(path, dpi=130)
        return path

    def save_svg(self, path: str | Path, width: int = 80) -> Path:
        from matplotlib import rc_context  # see figure()

        path, figure = Path(path), self.figure(width)
        with rc_context({"svg.hashsalt": "lmscope"}), writing(path):
            figure.savefig(path, metadata={"Date": None})
        return path

    def to_dict(self) -> dict:
        return {key: getattr(self, key) for key in ("title", "kind", "text", "slots")} | {
            "values": [round(float(v), 6) for v in self.values],
            "predictions": [[[c, round(p, 6)] for c, p in top] for top in self.predictions],
        }


def _layout(text: str, width: int, max_lines: int) -> list[tuple[int, int, int]]:
    """(row, column, character index) for each drawn character; newlines end a row."""
    out, row, col = [], 0, 0
    for i, ch in enumerate(text):
        if col >= width:
            row, col = row + 1, 0
        if row >= max_lines:
            break
        out.append((row, col, i))
        col += 1
        if ch == "\n":
            row, col = row + 1, 0
    return out


def _legend(fig, kind: str, rect, lang: str = "en") -> None:
    """A small red/blue bar saying what the colours mean for this kind of value."""
    ax = fig.add_axes(rect)
    ramp = np.array([[rgb(x) for x in np.linspace(-1, 1, 101)]]) / 255
    ax.imshow(ramp, aspect="auto", extent=(-1, 1, 0, 1))
    ax.set_yticks([])
    if kind in SIGMOID_KINDS:
        closed = i18n.text("report.cells.legend-closed", lang, kind=kind)
        ends = (closed, "0.5", i18n.text("report.cells.legend-open", lang))
    elif kind == "c":
        ends = ("tanh(c) = −1", "0", "+1")
    else:
        ends = (f"{kind} = −1", "0", "+1")
    ax.set_xticks([-1, 0, 1], list(ends))
    ax.tick_params(labelsize=7.5, length=0, pad=2)
    for label in ax.get_xticklabels():
        label.set_fontfamily(words_fonts())
    for spine in ax.spines.values():
        spine.set_visible(False)
