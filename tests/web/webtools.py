"""Helpers shared by the web tests (fixtures live in conftest.py): a server on a free loopback
port, the headless Chromium they drive, strict JSON, and the page's own readouts."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import threading
import time
from pathlib import Path

import httpx
import torch

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
# How long a web test waits for anything (the server to start, an answer, the page) before it
# calls it hung. CI runs the suite on 2 busy cores, two workers, each with its own Chromium and
# model work: no limit in a test may be one that such a machine can miss. Tests check order
# and counts; the seconds a user waits are measured by benchmarks/.
HANG_S = 120.0
HANG_MS = int(HANG_S * 1000)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def find_chromium() -> str | None:
    candidates = [os.environ.get("LMSCOPE_CHROMIUM")]
    candidates += [shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")]
    return next((c for c in candidates if c and Path(c).exists()), None)


@contextlib.contextmanager
def serve(app):
    """Run ``app`` with uvicorn in a thread on a free loopback port; yields its base URL."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    srv = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + HANG_S
    while not srv.started:
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        srv.should_exit = True
        thread.join(timeout=10)
        sock.close()


def patient(context):
    """A Playwright browser context whose waits give up only after ``HANG_S`` (Playwright's
    own default is 30 s, which a loaded CI machine has missed)."""
    context.set_default_timeout(HANG_MS)
    context.set_default_navigation_timeout(HANG_MS)
    return context


def strict_json(text: str):
    """json.loads that refuses NaN/Infinity, which are not JSON."""

    def refuse(name):
        raise AssertionError(f"response holds {name}")

    return json.loads(text, parse_constant=refuse)


def post(client, path: str, body: dict, status: int = 200):
    """POST with a TestClient; the strict-JSON answer, after checking its status."""
    r = client.post(path, json=body)
    assert r.status_code == status, r.text
    return strict_json(r.text)


def assert_readable_error(client, path: str, body: dict, status: int, words: str) -> None:
    r = client.post(path, json=body)
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert isinstance(error, str) and words in error.lower()


def char_model(name: str = "char-gpt"):
    """A one-layer GPT over printable ASCII: its tokenizer splits text per character."""
    from lmscope.engine.transformer import LanguageModel
    from lmscope.models.gpt2 import GPT, GPTConfig
    from lmscope.tokenizers import CharTokenizer

    tok = CharTokenizer.from_text("".join(chr(i) for i in range(32, 127)) + "\n")
    torch.manual_seed(0)
    config = GPTConfig(vocab_size=len(tok), n_ctx=64, n_embd=32, n_layer=1, n_head=2)
    return LanguageModel(GPT(config), tok, name)


# --- reading the page -------------------------------------------------------------------------


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def api(page, path: str, body: dict):
    """What the page's server answers to ``body`` (to compare the page with)."""
    r = httpx.post(page.server + path, json=body, timeout=HANG_S)
    assert r.status_code == 200, r.text
    return r.json()


def traces(page) -> int:
    return int(page.evaluate("document.body.dataset.traces || 0"))


def wait_for_trace(page, before: int):
    page.wait_for_function(f"() => Number(document.body.dataset.traces || 0) > {before}")


def wait_idle(page):
    page.wait_for_function("() => !document.querySelector('.step-body.loading')")


def chip_ids(page) -> list[int]:
    return [
        int(x)
        for x in page.locator("[data-testid=token-chip]").evaluate_all(
            "els => els.map(e => e.dataset.id)"
        )
    ]


# --- driving the page -------------------------------------------------------------------------


def set_prompt(page, text: str) -> None:
    """Type ``text`` as the prompt and wait for the page's trace of it."""
    before = traces(page)
    page.get_by_test_id("prompt-input").fill(text)
    wait_for_trace(page, before)


def open_step(page, key: str) -> None:
    page.locator(f"[data-testid=step-nav] button[data-step='{key}']").click()
    _opened(page, f".step-body[data-step='{key}']", f"step {key!r}")
    wait_idle(page)


def open_view(page, key: str) -> None:
    page.locator(f"[data-testid=view-nav] button[data-view='{key}']").click()
    _opened(page, f".step-body[data-view='{key}']", f"view {key!r}")
    wait_idle(page)


# What the page held when a click opened no panel: the step it thinks is open, whether it has
# a trace, the flow's step and whether a packet is still in flight (the panel is drawn after it
# lands). A step list rebuilt between a click's press and its release once swallowed clicks.
HELD = """() => {
    const s = window.lmscope?.state, f = window.lmscope?.flow;
    return { step: s?.step, trace: Boolean(s?.trace), flowStep: f?.step ?? null,
             moving: Boolean(f?.moving), body: document.body.className };
}"""


def _opened(page, selector: str, what: str) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_selector(selector)
    except PlaywrightTimeout:
        held = page.evaluate(HELD)
        raise AssertionError(f"{what} opened no panel; the page held {held}") from None


def to_chinese(page) -> None:
    page.get_by_test_id("lang-toggle").click()
    page.wait_for_function("() => document.documentElement.lang === 'zh-CN'")


# Issue 14: every view and bug at a desktop and a phone width, in English and in Chinese.
SIZES = [(1440, "en"), (1440, "zh"), (390, "en"), (390, "zh")]


def at_size(page, width: int, lang: str) -> None:
    """The page at ``width`` px (900 high), switched to Chinese for ``lang == "zh"``."""
    page.set_viewport_size({"width": width, "height": 900})
    if lang == "zh":
        to_chinese(page)


# --- a column of numbers in one style (draw.js's columnFormat) ---------------------------------
def decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def significant(text: str) -> int:
    mantissa = re.sub(r"[^\d.]", "", text.split("e")[0]).lstrip("0.").replace(".", "")
    return len(mantissa)


def one_style(column: list[str]) -> bool:
    """The same decimals in every row, or the same significant digits in every row."""
    numbers = [c for c in column if c not in ("0", "−∞", "")]
    return len({decimals(c) for c in numbers}) == 1 or len({significant(c) for c in numbers}) == 1
