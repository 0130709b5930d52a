"""The screenshots of the family steps in docs/models.md: Gemma 3's sliding window (the
masked-attention step) and a mixture of experts' router (the MLP step), in English and Chinese,
at 1440 and 390 px, into docs/images/.

    python scripts/family_screenshots.py

The router is the shipped shakespeare-moe's. The window is a tiny Gemma 3 made here (random
weights, a character vocabulary, layers local/global/local, a window of 6 keys) because the
step draws the mask around the query, and a real Gemma 3's window (512 keys) is wider than
that: with 6 the window's edge shows. Needs Chromium and Playwright (the test extra).
"""

from __future__ import annotations

import shutil
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the browser test's tiny Gemma 3

import lmscope  # noqa: E402
from helpers_families import tiny_gemma3  # noqa: E402
from lmscope.web import create_app  # noqa: E402

OUT = ROOT / "docs" / "images"
GEMMA_PROMPT = "To be, or not to be: that is the question."
MOE_PROMPT = "ROMEO:\nWhat say you, my lord? I go."
SIZES = [(1440, "en"), (390, "en"), (1440, "zh"), (390, "zh")]


def serve(app):
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    while not server.started:
        time.sleep(0.02)
    return server, f"http://127.0.0.1:{sock.getsockname()[1]}"


def shoot(browser, model, prompt: str, step: str, view: str, name: str) -> None:
    server, url = serve(create_app(model))
    try:
        for width, lang in SIZES:
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.add_init_script(f"localStorage.setItem('lmscope.lang', '{lang}')")
            page.goto(url + "/")
            page.wait_for_selector("body[data-ready='1']")
            before = int(page.evaluate("document.body.dataset.traces || 0"))
            page.get_by_test_id("prompt-input").fill(prompt)
            page.wait_for_function(f"() => Number(document.body.dataset.traces || 0) > {before}")
            page.locator(f"[data-testid=step-nav] button[data-step='{step}']").click()
            page.wait_for_selector(f"[data-testid=family-{view}]")
            page.wait_for_function("() => !document.querySelector('.step-body.loading')")
            shot = page.get_by_test_id(f"family-{view}")
            shot.scroll_into_view_if_needed()
            path = OUT / f"{name}-{lang}-{width}.png"
            shot.screenshot(path=str(path))
            print(path)
            page.close()
    finally:
        server.should_exit = True


def main() -> None:
    from playwright.sync_api import sync_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        gemma = lmscope.load(tiny_gemma3(Path(tmp) / "tiny-gemma3", GEMMA_PROMPT))
        shoot(browser, gemma, GEMMA_PROMPT, "masked-attention", "sliding-window", "family-window")
        moe = lmscope.load("shakespeare-moe")
        shoot(browser, moe, MOE_PROMPT, "mlp", "router", "family-router")
        browser.close()


if __name__ == "__main__":
    main()
