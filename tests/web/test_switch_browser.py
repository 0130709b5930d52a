"""The page's model menu on a server of two models (a GPT-2 and a Gemma 3): the menu names the
model explained, lists the other served model and the models on this machine (fake Ollama and
LM Studio stores) with the command that serves each or why it cannot open; choosing the other
model (by keyboard at 1440 px in English, by touch-size clicks at 390 px in Chinese) redraws the
whole page for that model's family (the Gemma 3's sliding window; GPT-2's LayerNorm), the
address keeps the choice through reload and back and on to /circuits, the prompt goes along,
nothing is wider than the window with the menu open, and a link to a model the server does not
hold says which it does."""

from __future__ import annotations

from pathlib import Path

import pytest
from webtools import ARTIFACTS, open_step, set_prompt, to_chinese

from helpers_families import tiny_gemma3
from helpers_stores import build_stores, use_stores

pytestmark = pytest.mark.browser

PROMPT = "To be, or not to be."  # longer than the Gemma 3's window of 6
PAGE_JS = (Path(__file__).parent / "pseudo_page.js").read_text(encoding="utf-8").strip().rstrip(";")
OVERFLOW = f"() => ({PAGE_JS}).overflow()"


@pytest.fixture(scope="module")
def app(tmp_path_factory, tiny_model, tiny_hf_dir):
    import lmscope
    from lmscope.web import create_app
    from lmscope.web.on_disk import OnDisk

    root = tmp_path_factory.mktemp("switch-page")
    gemma_dir = tiny_gemma3(root / "tiny-gemma3", PROMPT)
    stores = build_stores(root / "stores")
    with pytest.MonkeyPatch.context() as patch:
        use_stores(patch, stores)
        on_disk = OnDisk()
        on_disk.wait(60)  # read while the fake stores are this machine's
    specs = [str(tiny_hf_dir), str(gemma_dir)]
    return create_app(
        tiny_model,
        more=[lmscope.load(gemma_dir)],
        specs=specs,
        on_disk=on_disk,
        cache_bytes=64 << 20,
    )


def model_family(page) -> str:
    return page.evaluate("window.lmscope.state.model.family")


def open_menu(page):
    page.get_by_test_id("model-menu-button").click()
    panel = page.get_by_test_id("model-menu-panel")
    panel.wait_for(state="visible")
    page.wait_for_selector("[data-testid=disk-model]")
    return panel


def assert_fits(page, width: int) -> None:
    assert page.evaluate(OVERFLOW) == []
    box = page.get_by_test_id("model-menu-panel").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width, box


def test_the_menu_switches_between_the_served_models(page, app):
    gpt2, gemma = list(app.state.served.models)
    button = page.get_by_test_id("model-menu-button")
    assert gpt2 in button.inner_text() and model_family(page) == "gpt2"
    set_prompt(page, PROMPT)

    # 1440 px, English: the menu lists both served models and the machine's others
    panel = open_menu(page)
    served = panel.get_by_test_id("served-model")
    assert served.count() == 2 and served.nth(0).get_attribute("aria-current") == "true"
    assert "explained now" in served.nth(0).inner_text() and gemma in served.nth(1).inner_text()
    assert "gemma3" in served.nth(1).inner_text()
    disk = panel.get_by_test_id("disk-model")
    opens = disk.filter(has_text="ollama:tiny:q8").first
    command = opens.get_by_test_id("disk-model-command").inner_text()
    specs = " ".join(f"--model {s.spec}" for s in app.state.served.models.values())
    assert command == f"lmscope serve {specs} --model ollama:tiny:q8"
    assert "Q8_0" in opens.inner_text() and "llama" in opens.inner_text()
    refused = disk.filter(has_text="ollama:gemma2:2b").first
    assert refused.get_attribute("data-opens") == "false"
    assert "gemma2" in refused.get_by_test_id("disk-model-why").inner_text()
    assert_fits(page, 1440)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "switch-menu-en-1440.png"))

    # Escape closes it and gives the focus back; the keyboard opens it and picks the Gemma 3
    page.keyboard.press("Escape")
    assert panel.is_hidden() and page.evaluate("document.activeElement.id") == "model-menu-button"
    page.keyboard.press("Enter")
    panel.wait_for(state="visible")
    assert page.evaluate("document.activeElement.dataset.model") == gpt2
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.dataset.model") == gemma
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/?model={gemma.replace(' ', '+')}")
    page.wait_for_selector("body[data-ready='1']")
    assert model_family(page) == "gemma3" and gemma in button.inner_text()
    assert page.get_by_test_id("prompt-input").input_value() == PROMPT  # carried along
    open_step(page, "masked-attention")
    assert page.get_by_test_id("family-sliding-window").count() == 1

    # reload keeps the model; back returns to GPT-2's page, which draws its LayerNorm
    page.reload()
    page.wait_for_selector("body[data-ready='1']")
    assert model_family(page) == "gemma3"
    page.go_back()
    page.wait_for_selector("body[data-ready='1']")
    assert model_family(page) == "gpt2" and "model=" not in page.url
    open_step(page, "masked-attention")
    assert page.get_by_test_id("family-sliding-window").count() == 0
    open_step(page, "layernorm")
    assert "LayerNorm" in page.get_by_test_id("step-panel").inner_text()

    # 390 px, Chinese: the same menu, switched by clicks, inside the phone's width
    page.set_viewport_size({"width": 390, "height": 844})
    to_chinese(page)
    assert button.inner_text().startswith("模型")  # said again in the new language, closed too
    panel = open_menu(page)
    assert "正在讲解" in panel.inner_text() and "这台机器上" in panel.inner_text()
    why = panel.get_by_test_id("disk-model").filter(has_text="ollama:gemma2:2b").first
    assert any("\u4e00" <= c <= "\u9fff" for c in why.get_by_test_id("disk-model-why").inner_text())
    assert_fits(page, 390)
    page.screenshot(path=str(ARTIFACTS / "switch-menu-zh-390.png"))
    panel.get_by_test_id("served-model").nth(1).click()
    page.wait_for_selector("body[data-ready='1']")
    assert (
        model_family(page) == "gemma3" and page.evaluate("document.documentElement.lang") == "zh-CN"
    )
    assert page.evaluate(OVERFLOW) == []
    # the header's link to /circuits keeps the model: that page explains it too
    page.locator(".top-actions a[href^='/circuits']").click()
    page.wait_for_selector("body.circuits-page[data-ready='1']")
    assert "model=" in page.url and gemma in page.get_by_test_id("model-menu-button").inner_text()
    assert gemma in page.get_by_test_id("circuits-facts").inner_text()
    # /why does not use the model, but hands it back: its link to the explainer keeps it
    page.locator(".top-actions a[href^='/why']").click()
    page.wait_for_url("**/why?model=*")
    home = page.locator(".top-actions a[href^='/?'], .top-actions a[href='/']").first
    page.wait_for_function("() => document.querySelector(\".top-actions a[href^='/?model=']\")")
    home.click()
    page.wait_for_selector("body[data-ready='1']")
    assert model_family(page) == "gemma3"

    # a link to a model this server does not hold: the page says which it does, the menu too
    page.goto(page.server + "/?model=gpt2")
    error = page.get_by_test_id("error")
    error.filter(has_text=gemma).wait_for()
    assert "gpt2" in error.inner_text() and "没有提供模型" in error.inner_text()
    assert open_menu(page).get_by_test_id("served-model").count() == 2
