"""The shared plot helper: long titles wrapped inside the figure, marks inside the axes."""

from __future__ import annotations

import pytest
from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg

from lmscope.lab.plots import Mark, Panel, Series, font_rc, make_figure

LONG_EN = (
    "Recall against the distance: an LSTM, a GRU and a GPT of equal size (trained on lists "
    "of 1 to 2 symbols, distances up to 16; first answer, 95% intervals)"
)
LONG_ZH = (
    "按距离看回忆：同等大小的 LSTM、GRU 和 GPT（在 1 到 2 个符号的列表上训练，距离至多 16）" * 2
)


def _panel(**extra) -> Panel:
    return Panel("a panel", "N", "y", [Series("s", [1, 2, 4], [1, 2, 3])], **extra)


def _inside(fig, artist) -> bool:
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    box, page = artist.get_window_extent(renderer), fig.bbox
    return box.x0 >= page.x0 - 0.5 and box.x1 <= page.x1 + 0.5 and box.y1 <= page.y1 + 0.5


@pytest.mark.slow
@pytest.mark.parametrize("title", [LONG_EN, LONG_ZH, "short\n" + LONG_EN])
def test_a_long_suptitle_stays_inside_a_one_panel_figure(title):
    with rc_context(font_rc("zh" if title is LONG_ZH else "en")):  # as the lab draws Chinese
        fig = make_figure([_panel()], suptitle=title, footnote="machine")
        assert _inside(fig, fig._suptitle)


@pytest.mark.slow
def test_a_mark_at_the_top_of_the_axes_is_labelled_inside_them():
    budget = 2**30  # the budget line: the highest point drawn, as in memory-wall
    series = [Series("naive", [256, 1024, 2048], [2**22, 2**26, 2**28])]
    mark = Mark(4096, budget, "naive: N=4,096 does not fit")
    panel = Panel("memory", "N", "bytes", series, y_unit="bytes", hlines=[(budget, "budget")])
    panel.marks.append(mark)
    fig = make_figure([panel])
    ax = fig.axes[0]
    label = next(t for t in ax.texts if t.get_text() == mark.text)
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    box, frame = label.get_window_extent(renderer), ax.get_window_extent(renderer)
    assert box.y1 < frame.y1 - 1 and box.y0 > frame.y0 and box.x0 > frame.x0
