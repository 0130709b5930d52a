"""Plots for lab results: matplotlib without pyplot (no global state, no display needed),
written as PNG for pages and SVG for print. Every experiment draws through ``save_panels`` so
the figures share one look; the axes know sizes (N), seconds and bytes.

Every figure is drawn in English (``<stem>.png``) and in Chinese (``<stem>.zh.png``), or in
any language of the catalog: its words are catalog texts (``lab.plot.…``, ``plot_words``), and
a figure is set in fonts that have every character it draws (``font_rc``: a CJK font for
Chinese, DejaVu Sans's Latin letters for the pseudo-language), so nothing is drawn as boxes."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from matplotlib import rc_context
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from lmscope.interpret.fonts import cjk_fonts as cjk_fonts  # the lab's name for it too
from lmscope.interpret.fonts import words_fonts
from lmscope.lab.results import (
    cell_text,
    format_bytes,
    format_seconds,
    machine_line,
    plot_name,
    plot_stem,
    say,
    shown,
)

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf")


@dataclass
class Series:
    label: str
    x: Sequence[float]
    y: Sequence[float]
    color: str | None = None
    dashed: bool = False
    marker: str = "o"


@dataclass
class Mark:
    """A labelled point, e.g. the size that did not fit."""

    x: float
    y: float
    text: str
    color: str = "#d62728"
    marker: str = "X"


@dataclass
class Panel:
    title: str
    xlabel: str
    ylabel: str
    series: list[Series]
    y_unit: str = "plain"  # plain, seconds or bytes: how to label the y ticks
    x_unit: str = "count"
    hlines: list[tuple[float, str]] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    logx: bool = True
    logy: bool = True
    x_base: int = 2  # log base of the x axis: 2 for doubling sizes, 10 for decades
    legend_below: bool = False  # for crowded panels: the legend under the axes, not on them


def format_count(v: float) -> str:
    for div, suffix in ((1 << 20, "M"), (1 << 10, "K")):
        if v >= div and v % div == 0:
            return f"{int(v // div)}{suffix}"
    if v >= 1e6 and v % 1e6 == 0:
        return f"{int(v // 1e6)}M"
    return f"{v:g}"


def format_decimal(v: float) -> str:
    for div, suffix in ((10**9, "G"), (10**6, "M"), (10**3, "K")):
        if v >= div:
            return f"{v / div:g}{suffix}"
    return f"{v:g}"


_FORMATTERS = {
    "seconds": format_seconds,
    "bytes": format_bytes,
    "count": format_count,
    "decimal": format_decimal,
}


def _draw(ax, panel: Panel) -> None:
    for n, s in enumerate(panel.series):
        ax.plot(
            s.x,
            s.y,
            linestyle="--" if s.dashed else "-",
            marker=s.marker,
            markersize=4,
            linewidth=1.6,
            color=s.color or PALETTE[n % len(PALETTE)],
            label=s.label,
        )
    for y, text in panel.hlines:
        ax.axhline(y, color="#555555", linestyle=":", linewidth=1.2)
        ax.annotate(
            text,
            xy=(0.01, y),
            xycoords=("axes fraction", "data"),
            xytext=(0, 3),
            textcoords="offset points",
            fontsize=8,
            color="#444444",
        )
    for m in panel.marks:
        ax.plot([m.x], [m.y], marker=m.marker, color=m.color, markersize=9, linestyle="none")
        ax.annotate(  # below and to the left: a mark sits at the top (the budget), so above
            m.text,  # it would be on the frame; the curves below are further left
            xy=(m.x, m.y),
            xytext=(-10, -8),
            textcoords="offset points",
            fontsize=8,
            color=m.color,
            ha="right",
            va="top",
            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1},
        )
    if panel.logx:
        ax.set_xscale("log", base=panel.x_base)
    if panel.logy:
        ax.set_yscale("log")
        if panel.y_unit == "bytes":  # ticks at 1, 4, 16, 64, 256 KiB/MiB/GiB: round in binary
            ax.yaxis.set_major_locator(LogLocator(base=1024, subs=(1, 4, 16, 64, 256)))
        else:
            ax.yaxis.set_major_locator(LogLocator(base=10))
        ax.yaxis.set_minor_formatter(NullFormatter())
    fmt_x = _FORMATTERS.get(panel.x_unit)
    if fmt_x:
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_x(v)))
    fmt_y = _FORMATTERS.get(panel.y_unit)
    if fmt_y:
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_y(v)))
    ax.set_title(panel.title, fontsize=11)
    ax.set_xlabel(panel.xlabel)
    ax.set_ylabel(panel.ylabel)
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", alpha=0.12)
    if panel.series and panel.legend_below:
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    elif panel.series:
        ax.legend(fontsize=8, loc="best", framealpha=0.85)


SUPTITLE_PT = 12
# a bold character is about 0.6 em wide on average in DejaVu Sans; a CJK one 1 em (1.15 as
# the box drawn when the font lacks it)
_CHAR_EM, _WIDE_EM = 0.62, 1.15


def _char_em(c: str) -> float:
    return _WIDE_EM if unicodedata.east_asian_width(c) in "WF" else _CHAR_EM


def wrap_to_width(text: str, width_in: float, fontsize: float = SUPTITLE_PT) -> str:
    """``text`` broken into lines that fit ``width_in`` inches at ``fontsize``: between words,
    or between any two CJK characters (they have no spaces). Its own line breaks are kept."""
    limit = width_in * 72 / fontsize  # in em
    lines = []
    for line in text.split("\n"):
        pieces = re.findall(
            r"[\u2e80-\u9fff\uff00-\uffef]|[^\s\u2e80-\u9fff\uff00-\uffef]+|\s+", line
        )
        current, used = "", 0.0
        for piece in pieces:
            size = sum(_char_em(c) for c in piece)
            if current.strip() and used + size > limit and not piece.isspace():
                lines.append(current.rstrip())
                current, used = "", 0.0
            if piece.isspace() and not current:
                continue  # no line starts with a space
            current, used = current + piece, used + size
        lines.append(current.rstrip())
    return "\n".join(lines)


def make_figure(panels: list[Panel], suptitle: str = "", footnote: str = "") -> Figure:
    """The panels side by side, 6.4 in each, under ``suptitle`` (wrapped to fit) and over
    ``footnote`` (the machine line)."""
    width = 6.4 * len(panels)
    fig = Figure(figsize=(width, 4.8), layout="constrained")
    if footnote:  # keep a strip at the bottom free for the machine line
        fig.get_layout_engine().set(rect=(0, 0.035, 1, 0.965))
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, panel in zip(axes, panels, strict=True):
        _draw(ax, panel)
    if suptitle:  # a one-panel figure is narrow: a long title would be cut at both sides
        text = wrap_to_width(suptitle, width - 0.3)
        fig.suptitle(text, fontsize=SUPTITLE_PT, fontweight="bold")
        fig.set_figheight(4.8 + 0.2 * text.count("\n"))  # each extra line takes the plot's room
    if footnote:
        fig.text(0.5, 0.0, footnote, ha="center", va="bottom", fontsize=7.5, color="#555555")
    return fig


def save_panels(
    out_dir: Path,
    stem: str,
    panels: list[Panel],
    suptitle: str = "",
    footnote: str = "",
    lang: str = "en",
) -> list[Path]:
    """Draw the panels side by side and write ``stem.png`` and ``stem.svg`` (``lang`` "zh":
    ``stem.zh.png`` and ``stem.zh.svg``, in a font that has the Chinese characters)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / plot_name(f"{stem}.{ext}", lang) for ext in ("png", "svg")]
    with rc_context(font_rc(lang)):
        fig = make_figure(panels, suptitle, footnote)
        fig.savefig(paths[0], dpi=130)
        # no timestamp and fixed element ids: the same data gives the same SVG file
        with rc_context({"svg.hashsalt": "lmscope"}):
            fig.savefig(paths[1], metadata={"Date": None})
    return paths


def save_length_plot(
    out_dir: Path,
    key: str,
    lang: str,
    title: str,
    ylabel: str,
    series: list[Series],
    footnote: str = "",
    **axes,
) -> list[Path]:
    """Section ``key``'s plot (its file stem from tables.json) when it is one panel over the
    sequence length N; ``axes`` are the panel's other settings (units, scales, lines)."""
    xlabel = plot_words(lang)("lab.plot.length-n")
    panel = Panel(title=title, xlabel=xlabel, ylabel=ylabel, series=series, **axes)
    return save_panels(out_dir, plot_stem(key), [panel], footnote=footnote, lang=lang)


# --- the words of a figure, in its language ----------------------------------------------------
def font_rc(lang: str) -> dict:
    """The fonts a figure in ``lang`` is set in: English as it always was; any other language
    in DejaVu Sans, then a CJK font (matplotlib takes each glyph from the first font that has
    it, so Latin letters, digits and symbols look as in the English figure, and the
    pseudo-language's accented letters are DejaVu's). The CJK font is the system's or the
    bundled one: ``lmscope.interpret.fonts`` chooses for every picture lmscope draws."""
    return {} if lang == "en" else {"font.family": words_fonts()}


def plot_words(lang: str) -> Callable[..., str]:
    """``say(id, **values)``: the catalog text ``id`` (``lab.plot.…``) in ``lang``, filled in
    (a value may be a result file's text, said in the same language)."""

    def said(message_id: str, **values) -> str:
        return shown(say(message_id, **values), lang)

    return said


# the clocks as axis labels say them (params["clock"])
CLOCK_WORDS = {"wall": "lab.plot.clock-wall", "cpu": "lab.plot.clock-cpu"}


def cell_words(value, lang: str) -> str:
    """A table's text cell as the tables in ``lang`` show it: a model's name (vanilla RNN:
    朴素 RNN), a device, a method."""
    return shown(cell_text(value, {}), lang)


def machine_words(hw: dict, lang: str) -> str:
    """The machine line of a footnote, in ``lang``; the CPU's name stays."""
    return shown(machine_line(hw), lang)
