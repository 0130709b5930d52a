"""Step 5 on a character model (`lmscope train --tokenizer char`): it says what a character
tokenizer does (one token per character, the characters seen in training, what happens to
others), in English and Chinese, and shows no BPE merges, in the catalogue, the CLI and the
API alike."""

from __future__ import annotations

import pytest

from lmscope.cli import main
from lmscope.explain.catalogue import catalogue, step_text

CHARS = "\n !',.:;?ABCDEHILMNORSTUWabcdefghiklmnoprstuvwy"
BPE_WORDS = ("BPE", "subword", "merge", "byte")


@pytest.fixture(scope="module")
def char_folder(tmp_path_factory):
    import torch

    from lmscope.engine.loading import save_model
    from lmscope.models.gpt2 import GPT, GPTConfig
    from lmscope.tokenizers import CharTokenizer

    torch.manual_seed(0)
    config = GPTConfig(vocab_size=len(CHARS), n_ctx=32, n_embd=32, n_layer=1, n_head=2)
    folder = tmp_path_factory.mktemp("models") / "chars"
    return save_model(GPT(config), folder, tokenizer=CharTokenizer(CHARS), meta={"name": "c"})


def test_catalogue_has_a_character_variant_of_step_5():
    text = step_text("token-embedding", "gpt2", tokenizer="chars")
    assert not any(w in text.text["en"] for w in BPE_WORDS) and "character" in text.text["en"]
    assert "BPE" not in text.text["zh"] and "字符" in text.text["zh"]
    assert "subword" not in text.summary["en"] and "character" in text.summary["en"]
    # BPE models keep the byte-level text; the catalogue says it per tokenizer
    assert "BPE" in step_text("token-embedding", "gpt2").text["en"]
    doc = catalogue("gpt2", tokenizer="chars").steps[3]
    assert doc.key == "token-embedding" and doc.texts["text"].id == text.text.id


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_cli_step_5_on_a_character_model(capsys, char_folder, lang):
    code = main(
        ["explain", "ROMEO: what", "--model", str(char_folder), "--step", "4"] + ["--lang", lang]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert not any(w in out for w in ("BPE", "subword", "single byte", "字节", "子词"))
    assert ("character" in out) if lang == "en" else ("字符" in out)
