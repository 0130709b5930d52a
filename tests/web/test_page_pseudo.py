"""Every word the page shows comes from the catalog: under ?lang=pseudo (every catalog text
accented and in ⟦brackets⟧, a third longer) the explainer's 20 steps and its views, the
char-RNN page and /why show no Latin word outside brackets, at 1440 and 390 px; and the longer
texts push nothing past a phone's width. The model's own text (tokens, the prompt, names,
probe names) is data, not words: the page marks it (data-verbatim, <code>, inputs)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from webtools import CHROMIUM_ARGS, HANG_MS, find_chromium, patient, serve

from tiers import slow_work

pytestmark = pytest.mark.browser

SHOTS = Path("/tmp/page-shots")
PHONE = 390

# the page's side of the checks: collect() and overflow()
PAGE_JS = (Path(__file__).parent / "pseudo_page.js").read_text(encoding="utf-8").strip().rstrip(";")
COLLECT = f"() => ({PAGE_JS}).collect()"
OVERFLOW = f"() => ({PAGE_JS}).overflow()"

BRACKETED = re.compile(r"⟦[^⟦⟧]*⟧")
LATIN = re.compile(r"[A-Za-z]{2,}")


QUOTED = re.compile(r"“[^“”]*”")  # a token, quoted as the page quotes the model's text
# a measured number and its unit (2.46 ms, 64 KiB): units are SI and IEC symbols, not words
WITH_UNIT = re.compile(r"(?<![A-Za-z])(\d[\d.,]*)\s?(?:ms|µs|ns|KiB|MiB|GiB|kB|MB|GB)(?![A-Za-z])")


def outside_brackets(texts: list[list[str]]) -> list[str]:
    """The Latin words of each text that no pseudo text holds, with the text they are in."""
    found = []
    for text, where in texts:
        rest = WITH_UNIT.sub(" ", QUOTED.sub(" ", text))
        while True:  # a message inside another (an error's part) is bracketed twice
            inner = BRACKETED.sub(" ", rest)
            if inner == rest:
                break
            rest = inner
        words = LATIN.findall(rest.split("=", 1)[1] if re.match(r"^[a-z-]+=", rest) else rest)
        if words:
            found.append(f"{words} in {text[:120]!r} ({where})")
    return found


@pytest.fixture(scope="module")
@slow_work
def pseudo_browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    chromium = find_chromium()
    if chromium is None:
        pytest.skip("no Chromium found")
    sync_api.expect.set_options(timeout=HANG_MS)
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=chromium, args=[*CHROMIUM_ARGS, "--headless"], timeout=HANG_MS
        )
        yield b
        b.close()


@pytest.fixture(scope="module")
@slow_work
def site(tiny_model):
    """The explainer on the tiny GPT-2, a small random char LSTM for /rnn, the lab's results."""
    import torch

    from lmscope.engine.rnn_model import RNNLanguageModel
    from lmscope.models.rnn import CharRNN, CharRNNConfig
    from lmscope.tokenizers import CharTokenizer
    from lmscope.web import create_app

    chars = "\n !\"',-.:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    torch.manual_seed(0)
    net = CharRNN(CharRNNConfig(vocab_size=len(chars), cell="lstm", hidden=16, layers=2))
    rnn = RNNLanguageModel(net, CharTokenizer(chars), name="small-lstm")
    with serve(create_app(tiny_model, rnn=[rnn])) as url:
        yield url


class Walk:
    """One page opened under ?lang=pseudo; every text it shows is checked as it goes."""

    def __init__(self, browser, url: str, path: str, ready: str):
        self.context = patient(browser.new_context(viewport={"width": 1440, "height": 1000}))
        self.page = self.context.new_page()
        self.problems: list[str] = []
        self.page.on("pageerror", lambda err: self.problems.append(f"page error: {err}"))
        self.page.goto(f"{url}{path}?lang=pseudo")
        self.page.wait_for_selector(ready)

    def check(self, where: str) -> None:
        for word in outside_brackets(self.page.evaluate(COLLECT)):
            self.problems.append(f"{where}: {word}")
        if self.page.viewport_size["width"] == PHONE:
            for wide in self.page.evaluate(OVERFLOW):
                self.problems.append(f"{where}: wider than the phone: {wide}")

    def width(self, px: int) -> None:
        self.page.set_viewport_size({"width": px, "height": 900})

    def shot(self, name: str) -> None:
        SHOTS.mkdir(exist_ok=True)
        self.page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)

    def close(self) -> list[str]:
        self.context.close()
        return self.problems


def idle(page) -> None:
    page.wait_for_function(
        "() => !document.querySelector('.step-body.loading, .loading')"
        " && document.body.dataset.ready === '1'"
    )


def test_every_step_and_view_of_the_explainer_speaks_the_catalog(pseudo_browser, site):
    walk = Walk(pseudo_browser, site, "/", "body[data-ready='1']")
    page = walk.page
    assert page.evaluate("document.documentElement.lang") == "en-XA"
    steps = page.locator("[data-testid=step-nav] button[data-step]").evaluate_all(
        "els => els.map(e => e.dataset.step)"
    )
    assert len(steps) == 20
    views = page.locator("[data-testid=view-nav] button[data-view]").evaluate_all(
        "els => els.map(e => e.dataset.view)"
    )
    for px in (1440, PHONE):
        walk.width(px)
        for key in steps:
            page.locator(f"[data-testid=step-nav] button[data-step='{key}']").click()
            page.wait_for_selector(f".step-body[data-step='{key}']")
            idle(page)
            walk.check(f"{px} step {key}")
            # the step's own tabs (LayerNorm ln1/ln2/final, attention lines' modes...)
            tabs = page.locator("[data-testid=step-panel] .segmented button")
            for i in range(tabs.count() if px == 1440 else 0):
                tabs.nth(i).click()
                idle(page)
                walk.check(f"{px} step {key} tab {i}")
        for key in views:
            page.locator(f"[data-testid=view-nav] button[data-view='{key}']").click()
            page.wait_for_selector(f".step-body[data-view='{key}']")
            idle(page)
            walk.check(f"{px} view {key}")
    problems = walk.close()
    assert not problems, "\n".join(problems)


def test_the_char_rnn_page_speaks_the_catalog(pseudo_browser, site):
    walk = Walk(pseudo_browser, site, "/rnn", "body[data-ready='1']")
    page = walk.page
    page.get_by_test_id("rnn-input").fill('The prince said "nothing at all" and went out.\n' * 12)
    page.wait_for_function("() => document.querySelectorAll('#rnn-colored .ch').length > 100")
    page.get_by_test_id("find-text").click()
    page.wait_for_function(
        "() => document.getElementById('rnn-cells-status').innerText.trim()"
        " || document.querySelector('[data-testid=rnn-cells-error]')?.checkVisibility()"
    )
    page.get_by_test_id("rnn-n").fill("40")
    page.get_by_test_id("rnn-sample-go").click()
    page.wait_for_function(
        "() => (document.querySelector('[data-testid=rnn-sample-out]')?.innerText || '')"
        ".length > 30"
    )
    page.locator("#rnn-colored .ch").nth(20).hover()
    for px in (1440, PHONE):
        walk.width(px)
        walk.check(f"{px} rnn")
    problems = walk.close()
    assert not problems, "\n".join(problems)


def test_the_why_page_speaks_the_catalog(pseudo_browser, site):
    walk = Walk(pseudo_browser, site, "/why", "body[data-ready='1']")
    for px in (1440, PHONE):
        walk.width(px)
        walk.check(f"{px} why")
    problems = walk.close()
    assert not problems, "\n".join(problems)
