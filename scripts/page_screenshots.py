"""The docs' screenshots of the explainer page, its model menu and /rnn (README, docs/index.md,
docs/web-app.md, docs/char-rnns.md), taken the same way every time: the app ``lmscope serve``
builds (the default model, SmolLM2, and the shipped char models), served on a loopback port,
opened in headless Chromium at a fixed size with reduced motion, each picture taken once the
page says it is drawn (its trace counted, no part still loading, the fonts loaded), never
after a guessed sleep. PNGs made small by small_png.py.

    python scripts/page_screenshots.py                    # every picture, into docs/
    python scripts/page_screenshots.py first-look rope    # only those named

Needs Chromium and Playwright (the test extra).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "web"))  # the browser tests' helpers

from playwright.sync_api import Page, sync_playwright  # noqa: E402
from small_png import small  # noqa: E402
from webtools import CHROMIUM_ARGS, find_chromium, serve  # noqa: E402

DOCS = ROOT / "docs"
PROMPT = "Data visualization empowers users to"
LINES_PROMPT = (
    "The cat sat on the mat because it was tired, and then the cat fell asleep on the mat"
)
ZH_PROMPT = "数据可视化让用户能够"
DESKTOP, PHONE = (1440, 900), (390, 844)

# The page is drawn: no part waits for an answer, the fonts are in, and the layout has
# stood still (the scroll position and the page's height) for three painted frames, so a
# step that scrolls its lit part into view has finished doing so.
DRAWN = """async () => {
  await document.fonts.ready;
  const frame = () => new Promise((r) => requestAnimationFrame(r));
  let last = null;
  for (let same = 0; same < 3; ) {
    await frame();
    const now = `${window.scrollY} ${document.documentElement.scrollHeight}`;
    same = now === last ? same + 1 : 0;
    last = now;
  }
}"""


def settle(page: Page) -> None:
    page.wait_for_function(
        "() => !document.querySelector('.loading, .step-body.loading, [aria-busy=true]')"
    )
    page.evaluate(DRAWN)


def traces(page: Page) -> int:
    return int(page.evaluate("document.body.dataset.traces || 0"))


def opened(browser, url: str, size: tuple[int, int], lang: str, path: str = "/") -> Page:
    context = browser.new_context(
        viewport={"width": size[0], "height": size[1]},
        reduced_motion="reduce",
        device_scale_factor=1,
    )
    page = context.new_page()
    page.add_init_script(f"localStorage.setItem('lmscope.lang', '{lang}')")
    page.goto(url + path)
    page.wait_for_selector("body[data-ready='1']")
    settle(page)
    return page


def prompt(page: Page, text: str) -> None:
    if page.get_by_test_id("prompt-input").input_value() == text:
        return
    before = traces(page)
    page.get_by_test_id("prompt-input").fill(text)
    page.wait_for_function(f"() => Number(document.body.dataset.traces || 0) > {before}")
    settle(page)


def step(page: Page, key: str, layer: int | None = None, head: int | None = None) -> None:
    """Open a step from the tour's list, then its layer and head, as a reader would."""
    page.locator(f"[data-testid=step-nav] button[data-step='{key}']").click()
    page.wait_for_selector(f".step-body[data-step='{key}']")
    settle(page)
    for testid, value in (("layer-select", layer), ("head-select", head)):
        if value is not None:
            page.locator(f"#step [data-testid={testid}]").select_option(str(value))
            page.wait_for_selector(f".step-body[data-step='{key}']")
            settle(page)


def save(name: str) -> Path:
    path = DOCS / f"{name}.png"
    print(path.relative_to(ROOT))
    return path


def element(page: Page, selector: str, name: str) -> None:
    box = page.locator(selector).first
    box.scroll_into_view_if_needed()
    settle(page)
    path = save(name)
    box.screenshot(path=str(path))
    small(path)


def around(page: Page, selector: str, name: str, pad: int = 8) -> None:
    """The part and a margin round it, as the window shows it (with the tour card where it
    sits): the part scrolled to the window's top, its box clipped out of the window."""
    page.evaluate(
        "([sel, pad]) => { const b = document.querySelector(sel).getBoundingClientRect();"
        " window.scrollBy(0, b.top - pad); }",
        [selector, pad],
    )
    settle(page)
    b = page.locator(selector).first.bounding_box()
    size = page.viewport_size
    x, y = max(0, b["x"] - pad), max(0, b["y"] - pad)
    clip = {
        "x": x,
        "y": y,
        "width": min(size["width"], b["x"] + b["width"] + pad) - x,
        "height": min(size["height"], b["y"] + b["height"] + pad) - y,
    }
    window(page, name, clip=clip)


def window(page: Page, name: str, **options) -> None:
    path = save(name)
    page.screenshot(path=str(path), **options)
    small(path)


# --- the pictures -----------------------------------------------------------------------------


def hero(browser, url: str) -> None:
    """README and the docs' front page: the page's top at step 8, the attention part lit."""
    page = opened(browser, url, (1440, 1250), "en")
    prompt(page, PROMPT)
    step(page, "self-attention")
    page.evaluate("window.scrollTo(0, 0)")
    settle(page)
    window(page, "screenshot")
    page.context.close()


def first_look(browser, url: str) -> None:
    """Step 8 opened from the list, the window as the page leaves it: the lit part and the
    tour card with its explanation, at 1440x900 and 390x844, in English and Chinese."""
    for size, where in ((DESKTOP, "desktop"), (PHONE, "phone")):
        for lang in ("en", "zh"):
            page = opened(browser, url, size, lang)
            prompt(page, PROMPT)
            step(page, "self-attention")
            window(page, f"first-look-{where}-{lang}")
            page.context.close()


def flow(browser, url: str) -> None:
    """The flow diagram at the embedding step and at the probabilities step."""
    page = opened(browser, url, (1440, 1000), "en")
    prompt(page, PROMPT)
    for key, name in (("embedding", "flow-embedding"), ("probabilities", "flow-probabilities")):
        step(page, key)
        around(page, "[data-testid=flow]", name)
    page.context.close()


def lines(browser, url: str) -> None:
    """Attention as connections: every head of layer 3 from the last token."""
    page = opened(browser, url, DESKTOP, "en")
    prompt(page, LINES_PROMPT)
    step(page, "self-attention", layer=3)
    page.locator("[data-testid=lines-mode] button[data-mode=all]").click()
    page.wait_for_selector("[data-testid=lines-mode] button[data-mode=all].active")
    around(page, "[data-testid=attention-lines]", "attention-lines")
    page.context.close()


def chinese(browser, url: str) -> None:
    """A Chinese prompt in Chinese: each character over its byte tokens (the page's top)."""
    page = opened(browser, url, DESKTOP, "zh")
    prompt(page, ZH_PROMPT)
    step(page, "token-embedding")
    page.evaluate("window.scrollTo(0, 0)")
    settle(page)
    bottom = page.evaluate(
        "document.querySelector('[data-testid=tokens]').getBoundingClientRect().bottom"
    )
    window(page, "chinese-prompt", clip={"x": 0, "y": 0, "width": 1440, "height": bottom + 16})
    page.context.close()


def family_steps(browser, url: str) -> None:
    """SmolLM2's own steps: RoPE (layer 3, head 4) and SwiGLU (layer 3), the step panel."""
    page = opened(browser, url, DESKTOP, "en")
    prompt(page, LINES_PROMPT)
    step(page, "positional-encoding", layer=3, head=4)
    element(page, "#step", "smollm2-rope")
    step(page, "mlp", layer=3)
    element(page, "#step", "smollm2-swiglu")
    page.context.close()


def rnn(browser, url: str) -> None:
    """/rnn as it opens: the War and Peace LSTM's quote unit over its passage."""
    page = opened(browser, url, DESKTOP, "en", "/rnn")
    around(page, "section.panel:has(#rnn-colored)", "rnn-quote-cell")
    page.context.close()


def code_cell(browser, url: str) -> None:
    """The picture docs/char-rnns.md's command writes (lmscope neurons --out): stdlib-lstm's
    bracket unit over the validation split's first file."""
    import subprocess

    path = save("code-cell")
    command = "neurons --model stdlib-lstm --corpus python-stdlib --cell 1:238 --kind h --out"
    subprocess.run([sys.executable, "-m", "lmscope", *command.split(), str(path)], check=True)
    small(path)


def model_menu(browser, url: str) -> None:
    """docs/web-app.md: the model menu open at 1440 px over SmolLM2's page, served beside the
    shipped MoE (`lmscope serve --model smollm2 --model shakespeare-moe`), with the models this
    machine has besides. Its own server: the other pictures are of one served model."""
    from lmscope.web.factory import ServeSettings, build_app

    app = build_app(ServeSettings(model="smollm2", more=["shakespeare-moe"]))
    with serve(app) as both:
        page = opened(browser, both, DESKTOP, "en")
        prompt(page, PROMPT)
        page.get_by_test_id("model-menu-button").click()
        page.wait_for_selector("[data-testid=disk-models], [data-testid=model-menu-panel] p")
        settle(page)
        window(page, "model-menu")
        page.context.close()


SHOTS: dict[str, Callable] = {
    "hero": hero,
    "first-look": first_look,
    "flow": flow,
    "lines": lines,
    "chinese": chinese,
    "family": family_steps,
    "rnn": rnn,
    "code-cell": code_cell,
    "model-menu": model_menu,
}


def main(only: list[str]) -> None:
    from lmscope.web.factory import ServeSettings, build_app

    unknown = set(only) - set(SHOTS)
    if unknown:
        raise SystemExit(f"no such picture: {', '.join(sorted(unknown))}; know {', '.join(SHOTS)}")
    app = build_app(ServeSettings())  # what `lmscope serve` serves, with no options
    with serve(app) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        for name, take in SHOTS.items():
            if not only or name in only:
                take(browser, url)
        browser.close()


if __name__ == "__main__":
    main(sys.argv[1:])
