"""Fixtures of the web tests: the app (a module overrides ``app`` to serve other models),
a TestClient on it, the same app on a loopback port, headless Chromium, and the page opened
offline: every request to anything but that server is aborted and fails the test, as do page
errors and console errors (a module lists the statuses it expects in ``page_options``)."""

from __future__ import annotations

import pytest
from webtools import CHROMIUM_ARGS, HANG_MS, find_chromium, patient, serve

from tiers import slow_work


@pytest.fixture(scope="module")
def app(tiny_model):
    from lmscope.web import create_app

    return create_app(tiny_model)


@pytest.fixture(scope="session")
def other_gpt2(tiny_model):
    """tiny_model's architecture and tokenizer with other random weights: compared per token."""
    import torch

    from lmscope.engine.transformer import LanguageModel
    from lmscope.models.gpt2 import GPT

    torch.manual_seed(5)
    return LanguageModel(GPT(tiny_model.config), tiny_model.tokenizer, "other-gpt2")


@pytest.fixture(scope="module")
def client(app):
    from fastapi.testclient import TestClient

    with TestClient(app) as c:
        yield c


@pytest.fixture(scope="module")
@slow_work
def server(app):
    with serve(app) as url:
        yield url


# One Chromium per module, not per session: Playwright's sync API keeps an event loop running
# in the thread while it is open, and the load and burst harnesses (asyncio.run) cannot start
# theirs beside it.
@pytest.fixture(scope="module")
@slow_work
def browser():
    sync_api = pytest.importorskip(
        "playwright.sync_api",
        reason="the playwright package is not installed (pip install playwright)",
    )
    chromium = find_chromium()
    if chromium is None:
        pytest.skip("no Chromium found (apt-get install chromium, or set LMSCOPE_CHROMIUM)")
    sync_api.expect.set_options(timeout=HANG_MS)  # its default is 5 s
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, timeout=HANG_MS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def page_options() -> dict:
    """Where the page opens and what it may log: ``path``, ``allowed`` console statuses (a
    rejected request is logged by Chromium as a failed load), ``lang``, ``clipboard``."""
    return {"path": "/", "allowed": ("400", "422")}


@pytest.fixture
def page(browser, server, page_options):
    context = patient(browser.new_context(viewport={"width": 1440, "height": 1000}))
    if page_options.get("clipboard"):
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server)
    page = context.new_page()
    problems = []
    allowed = page_options.get("allowed", ())
    page.on("pageerror", lambda err: problems.append(f"page error: {err}"))
    page.on(
        "console",
        lambda msg: (
            msg.type == "error"
            and not any(status in msg.text for status in allowed)
            and problems.append(f"console: {msg.text}")
        ),
    )

    def offline(route):
        if route.request.url.startswith(server):
            route.continue_()
        else:
            problems.append(f"external request: {route.request.url}")
            route.abort()

    page.route("**/*", offline)
    if page_options.get("lang"):
        page.add_init_script(f"localStorage.setItem('lmscope.lang', '{page_options['lang']}')")
    page.goto(server + page_options.get("path", "/"))
    page.wait_for_selector("body[data-ready='1']")
    page.server = server
    yield page
    context.close()
    assert not problems, problems
