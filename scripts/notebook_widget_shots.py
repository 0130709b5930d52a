"""The docs' screenshots of the circuits, neuron and compare widgets (docs/notebooks.md): each
widget made as a notebook makes it (SmolLM2, stdlib-lstm), drawn in headless Chromium by the
widget test's harness (tests/notebook/harness.py: the widget's own module, its messages answered
by its Python side), in English and Chinese, at 1440 and 390 pixels.

    python scripts/notebook_widget_shots.py            # writes docs/images/notebook-*.png
    python scripts/notebook_widget_shots.py attention  # only those named
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "notebook"), str(ROOT / "tests" / "web")]

from harness import mount  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402
from small_png import small  # noqa: E402
from webtools import CHROMIUM_ARGS, find_chromium  # noqa: E402

import lmscope  # noqa: E402
import lmscope.show  # noqa: E402
from lmscope.interpret.compare import compare  # noqa: E402

IMAGES = ROOT / "docs" / "images"
PROMPT = "Data visualization empowers users to"
CLEAN, CORRUPT = "The capital of France is", "The capital of Italy is"
CODE = "def area(w, h):\n    return max(0, (w * (h + 1)) - len([w, h]))\n"
# (name, sizes, languages): what is shot
SHOTS = [
    ("attention", (1440, 390), ("en", "zh")),
    ("explainer", (1440,), ("en", "zh")),
    ("sampling", (1440,), ("en", "zh")),
    ("induction", (1440, 390), ("en", "zh")),
    ("patching", (1440,), ("en", "zh")),
    ("attribution", (1440,), ("en",)),
    ("neurons", (1440, 390), ("en", "zh")),
    ("compare", (1440,), ("en",)),
]


def widgets(lang: str) -> dict:
    lmscope.set_language(lang)
    smol, lstm = lmscope.load(), lmscope.load("stdlib-lstm")
    run = lmscope.neuron_activations(lstm, CODE)
    trace = smol.trace(PROMPT)
    return {
        "attention": lambda: lmscope.show.step(trace, "self-attention", model=smol),
        "explainer": lambda: lmscope.show.explainer(trace, smol),
        "sampling": lambda: lmscope.show.sampling(trace, smol),
        "induction": lambda: lmscope.show.induction(smol, length=20, seed=0),
        "patching": lambda: lmscope.show.patching(smol, CLEAN, CORRUPT, " Paris", " Rome"),
        "attribution": lambda: lmscope.show.attribution(smol, CLEAN, " Paris", versus=" Rome"),
        "neurons": lambda: lmscope.show.neurons(run, layer=1, unit=238, kind="h"),
        "compare": lambda: lmscope.show.compare(compare(smol, lstm, CODE)),
    }


def main(only: list[str]) -> None:
    folder = Path(tempfile.mkdtemp())
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        for lang in ("en", "zh"):
            made = widgets(lang)
            for name, sizes, langs in SHOTS:
                if lang not in langs or (only and name not in only):
                    continue
                widget = made[name]()
                for width in sizes:
                    page = browser.new_page(viewport={"width": width, "height": 800})
                    mount(page, widget, folder)
                    if name == "neurons":  # a character pinned: the readout shows it
                        page.locator("[data-testid=rnn-colored] .ch").nth(38).click()
                    if name == "attention":  # its connections drawn at the cell's width
                        page.wait_for_selector("[data-testid=attention-lines][data-ready='1']")
                        page.wait_for_selector(
                            "[data-testid=lmscope-widget] .loading", state="detached"
                        )
                    page.wait_for_timeout(300)
                    # the sampling panel's picture was named without its width
                    shown = f"{lang}" if name == "sampling" else f"{lang}-{width}"
                    path = IMAGES / f"notebook-{name}-{shown}.png"
                    page.screenshot(path=str(path), full_page=True)
                    small(path)
                    print(path.relative_to(ROOT))
                    page.close()
        browser.close()


if __name__ == "__main__":
    main(sys.argv[1:])
