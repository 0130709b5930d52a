"""The page on a small self-trained-style model: a character vocabulary of Shakespeare's
letters and a context of 32. The page must open on a prompt that fits, and examples the model
cannot read (unseen characters, too long even when cut) are disabled with a reason."""

from __future__ import annotations

import pytest
from webtools import ARTIFACTS, patient

pytestmark = pytest.mark.browser

# run2's vocabulary: what `lmscope train --tokenizer char` keeps from the Shakespeare corpus
CHARS = "\n !$&',-.3:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def small_char_gpt():
    import torch

    from lmscope.engine.transformer import LanguageModel
    from lmscope.models.gpt2 import GPT, GPTConfig
    from lmscope.tokenizers import CharTokenizer

    torch.manual_seed(0)
    config = GPTConfig(vocab_size=len(CHARS), n_ctx=32, n_embd=32, n_layer=2, n_head=2)
    return LanguageModel(GPT(config), CharTokenizer(CHARS), "small-char")


@pytest.fixture(scope="module")
def app():
    from lmscope.web import create_app

    return create_app(small_char_gpt())


def test_model_says_which_examples_fit(client):
    examples = client.get("/api/model").json()["examples"]
    usable = [e for e in examples if e["usable"]]
    assert usable, examples
    for e in usable:  # each one traces: in the vocabulary and within the context
        r = client.post("/api/trace", json={"text": e["text"]})
        assert r.status_code == 200, (e, r.text)
    cut = next(e for e in examples if e["full"].startswith("Data visualization"))
    assert cut["usable"] and cut["cut"] and cut["text"] == cut["full"][: len(cut["text"])]
    assert not cut["text"].endswith(" ")  # cut at a word boundary
    zh = next(e for e in examples if e["full"].startswith("数据"))
    assert not zh["usable"] and zh["problem"] == "unknown_chars" and "数" in zh["unknown"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_opens_on_a_prompt_that_fits(browser, server, lang):
    context = patient(browser.new_context(viewport={"width": 1440, "height": 1000}))
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.add_init_script(f"localStorage.setItem('lmscope.lang', '{lang}')")
    page.goto(server + "/")
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#error").is_hidden(), page.locator("#error").inner_text()
    assert page.locator("[data-testid=token-chip]").count() > 0
    buttons = page.get_by_test_id("example")
    disabled = [buttons.nth(i) for i in range(buttons.count()) if buttons.nth(i).is_disabled()]
    assert disabled and all(b.get_attribute("title") for b in disabled)
    title = next(b.get_attribute("title") for b in disabled if "数" in b.inner_text())
    assert ("数" in title) and (("字符" in title) if lang == "zh" else ("never saw" in title))
    for i in range(buttons.count()):  # every enabled example traces without an error
        if buttons.nth(i).is_enabled():
            buttons.nth(i).click()
            page.wait_for_timeout(50)
            page.wait_for_function("() => !document.body.classList.contains('busy')")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"small-char-{lang}.png"), full_page=True)
    assert page.locator("#error").is_hidden(), page.locator("#error").inner_text()
    assert not errors, errors
    context.close()


def test_unknown_characters_are_named_in_api_words(client):
    r = client.post("/api/trace", json={"text": "hi 你"})
    body = r.json()
    assert r.status_code == 400 and "'你'" in body["error"] and "unknown=" not in body["error"]
    assert body["code"] == "error.tokenizer.unknown-chars" and "你" in str(body["params"])


def test_switching_to_chinese_while_an_error_shows(page):
    page.get_by_test_id("prompt-input").fill("hi 你")
    page.wait_for_selector("#error:not([hidden])")
    assert "'你'" in page.locator("#error").inner_text()
    # nothing to scrub through: the position slider is not shown as an empty bar
    assert not page.get_by_test_id("position-slider").is_visible()
    page.locator("#lang").click()
    error = page.locator("#error").inner_text()
    assert "'你'" in error and "字符" in error and "character" not in error
    facts = page.locator("#facts").inner_text()
    assert "层" in facts and "layers" not in facts and "parameters" not in facts
    assert "20 个步骤" in page.locator("#steps").inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "small-char-zh-error.png"))


def test_chinese_page_says_blocks_in_chinese(browser, server):
    context = patient(browser.new_context(viewport={"width": 1440, "height": 1000}))
    page = context.new_page()
    page.add_init_script("localStorage.setItem('lmscope.lang', 'zh')")
    page.goto(server + "/")
    page.wait_for_selector("body[data-ready='1']")
    text = page.locator("body").inner_text()
    context.close()
    assert "个 block" not in text and "2 层" in text


def test_step_5_tells_a_character_tokenizer(client, page):
    from webtools import open_step

    said = {
        lang: next(
            s
            for s in client.get(f"/api/steps?lang={lang}").json()["steps"]
            if s["key"] == "token-embedding"
        )["said"]["text"]
        for lang in ("en", "zh")
    }
    assert "BPE" not in said["en"] and "character" in said["en"] and "字符" in said["zh"]
    open_step(page, "token-embedding")
    page.wait_for_function("() => !document.querySelector('.step-body.loading')")
    body = page.locator(".step-body").inner_text()
    assert "BPE" not in body and "byte" not in body.lower(), body
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "small-char-step5.png"), full_page=True)


def test_chinese_lens_rows_name_layers(browser, server):
    from webtools import open_view

    context = patient(browser.new_context(viewport={"width": 1440, "height": 1000}))
    page = context.new_page()
    page.add_init_script("localStorage.setItem('lmscope.lang', 'zh')")
    page.goto(server + "/")
    page.wait_for_selector("body[data-ready='1']")
    open_view(page, "lens")
    text = page.locator(".step-body").inner_text()
    context.close()
    assert "第 0 层" in text and "block 0" not in text
