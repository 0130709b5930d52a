"""Side-by-side losses of two models, per token or per character."""

from __future__ import annotations

import json
import math

import pytest
import torch

import lmscope
from lmscope.cli import main
from lmscope.engine.loading import save_model
from lmscope.errors import InvalidInputError
from lmscope.interpret.compare import compare, to_html, token_losses
from lmscope.models.gpt2 import GPT, GPTConfig
from lmscope.tokenizers import CharTokenizer

TEXT = "To be, or not to be, that is the question:\nWhether 'tis nobler in the mind to suffer"


@pytest.fixture(scope="module")
def char_model_dir(tmp_path_factory):
    tok = CharTokenizer.from_text(TEXT + " abcdefghijklmnopqrstuvwxyz")
    torch.manual_seed(0)
    gpt = GPT(GPTConfig(vocab_size=tok.vocab_size, n_ctx=32, n_embd=32, n_layer=1, n_head=2))
    folder = tmp_path_factory.mktemp("char-gpt")
    save_model(gpt, folder, meta={"name": "char-gpt"})
    tok.save(folder)
    return folder


def test_token_losses_are_negative_log_likelihoods(tiny_model):
    tl = token_losses(tiny_model, TEXT)
    ids = tiny_model.tokenizer.encode(TEXT)
    seq = [tiny_model.tokenizer.eot_id] + ids
    logp = torch.log_softmax(tiny_model.logits(seq), -1)
    expected = [-float(logp[i, seq[i + 1]]) for i in range(len(ids))]
    assert tl.losses == pytest.approx(expected, rel=1e-5)
    assert tl.text == TEXT


@pytest.mark.slow
def test_long_text_uses_a_sliding_window(tiny_model):
    text = TEXT * 6  # longer than the tiny model's 128-token context
    tl = token_losses(tiny_model, text)
    assert len(tl.losses) > 128 and all(x is not None and math.isfinite(x) for x in tl.losses)
    head = token_losses(tiny_model, tiny_model.decode(tiny_model.tokenizer.encode(text)[:100]))
    assert tl.losses[:100] == pytest.approx(head.losses, rel=1e-5)  # first window untouched


@pytest.mark.slow
def test_same_tokenizer_compares_per_token(tiny_model, tiny_hf_dir, make_hf_gpt2):
    other = lmscope.load(make_hf_gpt2(seed=5))
    c = compare(tiny_model, other, TEXT)
    assert c.unit == "token" and "".join(c.pieces) == TEXT
    assert c.diff[3] == pytest.approx(c.loss_b[3] - c.loss_a[3])
    assert c.mean_a == pytest.approx(token_losses(tiny_model, TEXT).mean())


def test_different_tokenizers_fall_back_to_characters(tiny_model, char_model_dir):
    char = lmscope.load(char_model_dir)
    c = compare(tiny_model, char, TEXT)
    assert c.unit == "character" and c.pieces == list(TEXT) and "characters" in c.note
    total = sum(token_losses(tiny_model, TEXT).losses)
    assert sum(x for x in c.loss_a if x is not None) == pytest.approx(total, rel=1e-5)
    assert c.loss_b[0] is None  # a char model without <|endoftext|> cannot predict the first
    page = to_html(c)
    assert page.count("<span") == 3 * len(TEXT)


def test_empty_text_and_unaligned_models(tiny_model):
    with pytest.raises(InvalidInputError):
        token_losses(tiny_model, "")


@pytest.mark.parametrize("other", [None, "gpt2", 3])
def test_compare_names_what_is_not_a_model(tiny_model, other):
    with pytest.raises(InvalidInputError, match="compare needs models from lmscope.load, got"):
        compare(tiny_model, other, "some text")


def test_token_ids_to_compare_are_named_as_such(tiny_model):
    with pytest.raises(InvalidInputError, match="must be a str, got list"):  # not "is empty"
        compare(tiny_model, tiny_model, [1, 2, 3])


@pytest.mark.slow
def test_cli_writes_html_png_json(tmp_path, tiny_hf_dir, char_model_dir, capsys):
    text_file = tmp_path / "t.txt"
    text_file.write_text(TEXT, encoding="utf-8")
    out = tmp_path / "out"
    code = main(
        [
            "compare",
            "-m",
            str(tiny_hf_dir),
            "-m",
            str(char_model_dir),
            "--text",
            str(text_file),
            "--out",
            str(out),
        ]
    )
    assert code == 0
    data = json.loads((out / "compare.json").read_text())
    assert data["unit"] == "character" and len(data["loss_a"]) == len(TEXT)
    assert (out / "compare.png").stat().st_size > 1000
    assert "<span" in (out / "compare.html").read_text()
    assert main(["compare", "-m", str(tiny_hf_dir), "--text", str(text_file)]) == 2
    assert (
        main(
            [
                "compare",
                "-m",
                str(tiny_hf_dir),
                "-m",
                str(tiny_hf_dir),
                "--text",
                str(tmp_path / "missing.txt"),
            ]
        )
        == 2
    )
    assert "no such text file" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_files_speak_the_chosen_language(tmp_path, tiny_hf_dir, char_model_dir, monkeypatch):
    """With --lang zh only the terminal summary was Chinese: the HTML page and the PNG's titles
    stayed English."""
    import lmscope.interpret.compare_png as png

    text_file = tmp_path / "t.txt"
    text_file.write_text(TEXT, encoding="utf-8")
    titles = []
    real_draw = png.draw
    monkeypatch.setattr(png, "draw", lambda *a, **k: (titles.extend(p[3] for p in a[2]),
                                                      real_draw(*a, **k)))  # fmt: skip
    argv = ["compare", "-m", str(tiny_hf_dir), "-m", str(char_model_dir), "--text"]
    assert main([*argv, str(text_file), "--out", str(tmp_path / "zh"), "--lang", "zh"]) == 0
    page = (tmp_path / "zh" / "compare.html").read_text()
    assert "<html lang=zh-CN>" in page and "每个字符的损失" in page and "平均损失" in page
    assert "两个模型把文本切成了不同的 token" in page  # the note, too
    assert "Per-character loss" not in page and "red = surprised" not in page
    assert titles[0].startswith("A：") and "平均" in titles[0]
    assert main([*argv, str(text_file), "--out", str(tmp_path / "en")]) == 0
    page = (tmp_path / "en" / "compare.html").read_text()
    assert "<html lang=en>" in page and "Per-character loss" in page
    assert titles[3].startswith("A: ")
