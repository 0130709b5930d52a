"""The page on a Llama 2-shaped model, whose tokenizer is SentencePiece's BPE over characters:
step 5 says how that tokenizer cuts text (not the byte-level note), the chips read as the text
with its spaces, and an emoji falls back to byte chips under one character label."""

from __future__ import annotations

import pytest
from webtools import ARTIFACTS, open_step, set_prompt

pytestmark = pytest.mark.browser

PROMPT = "Data visualization 数据可视化 🤖 empowers users to"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    import lmscope
    from helpers_hf import save_random_llama
    from helpers_spm import spm_folder
    from lmscope.web import create_app

    folder = tmp_path_factory.mktemp("llama2")
    save_random_llama(folder, "llama", vocab_size=1456)
    spm_folder(folder, "normalizer")
    return create_app(lmscope.load(folder))


def test_step_5_explains_a_sentencepiece_tokenizer(page):
    set_prompt(page, PROMPT)
    pieces = page.locator("[data-testid=token-chip] .piece").all_inner_texts()
    assert pieces[0] == "<s>" and pieces[1].startswith("·")  # the prefix space, drawn as ·
    assert [p for p in pieces if p.startswith("<0x")] == ["<0xF0>", "<0x9F>", "<0xA4>", "<0x96>"]
    open_step(page, "token-embedding")
    assert page.get_by_test_id("byte-level-note").count() == 0
    note = page.get_by_test_id("sentencepiece-note").inner_text()
    assert "▁" in note and "E9 BE 98" in note
    assert "SentencePiece" in page.locator(".step-body").inner_text()
    labels = page.locator(".mini-chips [data-testid=char-span]").all_inner_texts()
    assert "🤖" in labels
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "sentencepiece-step5.png"))
