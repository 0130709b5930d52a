"""The fonts lmscope's pictures are set in: the lab's figures, the neuron views and the
comparison PNG all take them from here, so the choice is made once.

Latin letters, digits and symbols are set in DejaVu Sans (it ships with matplotlib); Chinese in
a CJK font: the system's where it has one (Debian: fonts-noto-cjk), else Noto Sans CJK from the
``noto-cjk-sans-otc`` package, a dependency, registered with matplotlib the first time a figure
asks for it. matplotlib takes each glyph from the first font in a family list that has it, so a
PNG or SVG drawn on any machine shows its Chinese characters, not empty boxes, and an English
figure looks as it always did."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

WORDS_FONT = "DejaVu Sans"  # ships with matplotlib, as does
MONO_FONT = "DejaVu Sans Mono"
# fonts that draw Chinese, in order of preference; the last one is the bundled collection's
# first face, the only one matplotlib before 3.11 (no TrueType collections) registers from it
CJK_FONTS = (
    "Noto Sans CJK SC",
    "Noto Sans Mono CJK SC",
    "WenQuanYi Zen Hei",
    "Source Han Sans",
    "Noto Sans CJK JP",
)
BUNDLED_PACKAGE = "noto_cjk_sans_otc"  # on PyPI as noto-cjk-sans-otc (SIL OFL 1.1)
BUNDLED_FILE = "NotoSansCJK-Regular.ttc"


def bundled_cjk_font() -> Path | None:
    """The Noto Sans CJK collection the ``noto-cjk-sans-otc`` package installs (None where it
    is missing)."""
    try:
        path = Path(str(resources.files(BUNDLED_PACKAGE).joinpath(BUNDLED_FILE)))
    except ModuleNotFoundError:
        return None
    return path if path.is_file() else None


def _found() -> tuple[str, ...]:
    """The first of CJK_FONTS that matplotlib knows, if any: each has every Chinese character,
    so one is enough (and a bundled font's missing bold weight is logged once, not per font)."""
    from matplotlib import font_manager

    known = {f.name for f in font_manager.fontManager.ttflist}
    return tuple(f for f in CJK_FONTS if f in known)[:1]


def cjk_fonts() -> tuple[str, ...]:
    """The font that draws Chinese: the system's (the first of CJK_FONTS it has), else the
    bundled Noto Sans CJK, registered with matplotlib's font manager on the first call that
    needs it. A tuple, empty where there is none at all."""
    found = _found()
    if found:
        return found
    path = bundled_cjk_font()
    if path is None:  # no CJK font at all: the characters are drawn as boxes
        return ()
    from matplotlib import font_manager

    font_manager.fontManager.addfont(path)
    return _found()


def words_fonts() -> list[str]:
    """The family list for words that may be Chinese: DejaVu Sans, then the CJK fonts."""
    return [WORDS_FONT, *cjk_fonts()]


def mono_fonts() -> list[str]:
    """The family list for characters set one to a cell (the neuron views' text, which may
    be Chinese): DejaVu Sans Mono, then the CJK fonts."""
    return [MONO_FONT, *cjk_fonts()]
