"""Chinese in every picture lmscope draws, on any machine: where the system has no CJK font
(a plain Debian without fonts-noto-cjk) the lab's figures, the neuron views and the comparison
PNG take Chinese characters from the Noto Sans CJK that the ``noto-cjk-sans-otc`` dependency
ships, registered with matplotlib when a figure asks for it; English figures keep DejaVu Sans.

Each test here hides the system's fonts from matplotlib (it sees only those it ships) and
reads which font each glyph came from in an SVG of the figure: matplotlib names every glyph
it draws there after its font, and a character no font has comes from its "LastResort"."""

from __future__ import annotations

import html
import io
import re
import shutil
import warnings
from pathlib import Path

import matplotlib
import numpy as np
import pytest
from matplotlib import font_manager

from lmscope.interpret import compare_png
from lmscope.interpret.cell_views import CellText
from lmscope.interpret.fonts import bundled_cjk_font, cjk_fonts, words_fonts
from lmscope.lab import plots
from lmscope.lab.plots import Panel, Series, save_panels
from lmscope.lab.replot import replot
from lmscope.lab.results import RESULT_FILE, shipped_dir, shipped_experiments

CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")
BUNDLED = "NotoSansCJK"  # the bundled fonts' PostScript names: NotoSansCJKsc-Regular, ...


def _forget_lookups() -> None:
    """matplotlib keeps which file each font request found: forget it when the list changes."""
    font_manager.FontManager._findfont_cached.cache_clear()
    font_manager._get_font.cache_clear()


@pytest.fixture
def no_system_cjk(monkeypatch):
    """matplotlib sees only the fonts it ships (DejaVu and a few more), none of them CJK: a
    machine without fonts-noto-cjk. Fonts registered during the test are dropped after it."""
    manager = font_manager.fontManager
    own = str(Path(matplotlib.get_data_path()).resolve())
    shipped = [f for f in manager.ttflist if str(Path(str(f.fname)).resolve()).startswith(own)]
    monkeypatch.setattr(manager, "ttflist", shipped)
    _forget_lookups()
    yield
    monkeypatch.undo()
    _forget_lookups()


def _bundled_entries() -> list:
    path = bundled_cjk_font()
    return [f for f in font_manager.fontManager.ttflist if Path(str(f.fname)) == path]


def draw_svg(fig) -> tuple[str, list[str]]:
    """The figure as SVG, and the warnings matplotlib gave drawing it (a missing glyph's)."""
    out = io.StringIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(out, format="svg")
    return out.getvalue(), [str(w.message) for w in caught]


def glyph_fonts(svg: str) -> dict[str, set[str]]:
    """Each text of an SVG figure (matplotlib writes it in a comment before its glyphs) and the
    fonts its glyphs come from, by PostScript name."""
    parts = re.split(r"<!-- (.*?) -->", svg)
    fonts: dict[str, set[str]] = {}
    for text, body in zip(parts[1::2], parts[2::2], strict=True):
        glyphs = re.findall(r'xlink:href="#([^"]+-[0-9a-f]+)"', body)
        fonts.setdefault(html.unescape(text).strip(), set()).update(
            g.rsplit("-", 1)[0] for g in glyphs
        )
    return fonts


def assert_chinese_from_bundled_font(svg: str, said: list[str]) -> None:
    assert not [w for w in said if "missing from font" in w], said
    fonts = glyph_fonts(svg)
    chinese = {text: f for text, f in fonts.items() if CJK.search(text)}
    assert chinese, sorted(fonts)
    for text, used in chinese.items():  # the Chinese characters from Noto Sans CJK, no box
        assert any(f.startswith(BUNDLED) for f in used), (text, used)
        assert not [f for f in used if "LastResort" in f], (text, used)
    for text, used in fonts.items():  # and Latin letters and digits still from DejaVu
        if re.search(r"[A-Za-z0-9]", text) and not CJK.search(text):
            assert used and all(f.startswith("DejaVuSans") for f in used), (text, used)


def _panel(title: str, xlabel: str, ylabel: str, series: str, line: str) -> Panel:
    curve = Series(series, [1, 2, 4, 8], [4.0, 3.0, 2.5, 2.2])
    return Panel(title, xlabel, ylabel, [curve], hlines=[(3.0, line)])


def test_without_a_system_cjk_font_the_bundled_one_is_registered_once(no_system_cjk):
    path = bundled_cjk_font()
    assert path is not None and path.name == "NotoSansCJK-Regular.ttc"
    assert not _bundled_entries()  # nothing registered until a figure asks
    fonts = cjk_fonts()
    assert fonts and fonts[0] in ("Noto Sans CJK SC", "Noto Sans CJK JP")
    found = font_manager.findfont(font_manager.FontProperties(family=fonts[0]))
    assert Path(str(found)) == path  # the only CJK font matplotlib knows is the bundled one
    registered = len(_bundled_entries())
    assert registered and cjk_fonts() == fonts and words_fonts() == ["DejaVu Sans", *fonts]
    assert len(_bundled_entries()) == registered  # asked again: registered once


def test_a_lab_figure_in_chinese_is_drawn_in_the_bundled_font(no_system_cjk, tmp_path):
    figures = []
    make = plots.make_figure
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(plots, "make_figure", lambda *a: figures.append(make(*a)) or figures[-1])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            paths = save_panels(
                tmp_path,
                "loss",
                [_panel("验证损失与训练时间", "训练时间（秒）", "损失", "LSTM：两层", "基线")],
                suptitle="法律文本上的 race：LSTM 对 GPT",
                footnote="机器：CPU，4 核",
                lang="zh",
            )
    assert [p.name for p in paths] == ["loss.zh.png", "loss.zh.svg"]
    assert not [w for w in caught if "missing from font" in str(w.message)]
    assert_chinese_from_bundled_font(paths[1].read_text(), [])  # the file lmscope wrote
    with matplotlib.rc_context(plots.font_rc("zh")):
        assert_chinese_from_bundled_font(*draw_svg(figures[0]))


def test_english_figures_keep_their_font(no_system_cjk, tmp_path):
    panel = _panel("Val loss", "training time", "loss", "LSTM", "baseline")
    paths = save_panels(tmp_path, "loss", [panel], lang="en")
    assert plots.font_rc("en") == {}  # the English figure is set as it always was
    fonts = glyph_fonts(paths[1].read_text())
    used = set().union(*fonts.values())
    assert used and all(f.startswith("DejaVuSans") for f in used), fonts
    assert not _bundled_entries()  # an English lab figure does not load the CJK font


def _cell_text(title: str, text: str, lang: str) -> CellText:
    values = np.linspace(-1, 1, len(text))
    return CellText(
        title=title,
        kind="f",  # a gate: its legend says closed and open in words
        text=text,
        slots=list(range(len(text))),
        values=values,
        shades=values,
        predictions=[[("x", 0.5)] for _ in text],
        lang=lang,
    )


def test_a_neuron_view_in_chinese_is_drawn_in_the_bundled_font(no_system_cjk, tmp_path):
    view = _cell_text("quote-lstm：第 0 层，单元 5，遗忘门（f）", "他说：“法律”。ok", "zh")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        png = view.save_png(tmp_path / "cell.zh.png", width=20)
        svg = view.save_svg(tmp_path / "cell.zh.svg", width=20)
    assert png.stat().st_size > 500
    assert not [w for w in caught if "missing from font" in str(w.message)]
    assert_chinese_from_bundled_font(svg.read_text(), [])
    fonts = glyph_fonts(svg.read_text())
    assert all(f.startswith("DejaVuSansMono") for f in fonts["o"]), fonts["o"]  # the cells' text
    legend = [used for text, used in fonts.items() if "打开" in text]
    assert legend and any(f.startswith(BUNDLED) for f in legend[0]), fonts  # the legend's words


def test_an_english_neuron_view_keeps_its_fonts(no_system_cjk, tmp_path):
    svg = _cell_text("quote-lstm: layer 0, unit 5", "he said ok", "en").save_svg(
        tmp_path / "cell.svg", width=20
    )
    fonts = glyph_fonts(svg.read_text())
    assert fonts["quote-lstm: layer 0, unit 5"] == {"DejaVuSans-Bold"}
    assert fonts["o"] == {"DejaVuSansMono"}


def test_the_comparison_picture_in_chinese_is_drawn_in_the_bundled_font(
    no_system_cjk, tmp_path, monkeypatch
):
    import matplotlib.pyplot as plt

    figures = []
    monkeypatch.setattr(plt, "close", figures.append)  # kept open to be read once more

    def colour(value, scale):
        return (255, int(255 * (1 - min(value / scale, 1.0))), 255)

    pieces = ["法律", "文本", " and", " 英文", "\n", "ok"]
    panel = ([0.5, 1.0, 1.5, 2.0, 0.1, 0.3], colour, (0.0, 2.0), "A：每个字符的损失", "损失")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compare_png.draw(tmp_path / "compare.png", pieces, [panel], columns=20)
    assert (tmp_path / "compare.png").stat().st_size > 500
    assert not [w for w in caught if "missing from font" in str(w.message)]
    try:
        assert_chinese_from_bundled_font(*draw_svg(figures[0]))
    finally:
        monkeypatch.undo()
        plt.close(figures[0])


@pytest.mark.slow
@pytest.mark.parametrize("name", shipped_experiments())
def test_every_shipped_figure_in_chinese_without_a_system_font(no_system_cjk, tmp_path, name):
    shutil.copy(shipped_dir(name) / RESULT_FILE, tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        replot(tmp_path, ("zh",))
    assert not [w for w in caught if "missing from font" in str(w.message)], name
    svgs = sorted(tmp_path.glob("*.zh.svg"))
    assert svgs
    for svg in svgs:
        assert_chinese_from_bundled_font(svg.read_text(), [])
