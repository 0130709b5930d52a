"""lmscope lens and lmscope ablate from the command line."""

from __future__ import annotations

import json

import pytest
import torch

from lmscope.cli import main

PROMPT = "Data visualization empowers users to"


@pytest.mark.slow
def test_lens_table_and_json(capsys, tiny_hf_dir, tiny_model):
    assert main(["lens", PROMPT, "--model", str(tiny_hf_dir)]) == 0
    out = capsys.readouterr().out
    assert "block 1" in out and "' em'" in out
    assert main(["lens", PROMPT, "--model", str(tiny_hf_dir), "--json", "--positions", "0,5"]) == 0
    lens = json.loads(capsys.readouterr().out)
    assert lens["positions"] == [0, 5] and lens["stages"][-1] == "block 1"
    final = tiny_model.logits(PROMPT)[5].argmax()
    assert lens["cells"][-1][1]["top"][0]["id"] == int(final)


@pytest.mark.slow
def test_ablate_json(capsys, tiny_hf_dir, tiny_model):
    code = main(
        [
            "ablate",
            PROMPT,
            "--model",
            str(tiny_hf_dir),
            "-a",
            "attn*",
            "-a",
            "mlp*",
            "--json",
            "-k",
            "3",
        ]
    )
    assert code == 0
    effect = json.loads(capsys.readouterr().out)
    assert effect["ablations"] == ["attn0", "attn1", "mlp0", "mlp1"] and effect["kl"] > 0
    probs = torch.softmax(tiny_model.logits(PROMPT)[-1], -1)
    assert effect["before"][0]["prob"] == pytest.approx(float(probs.max()), rel=1e-4)


def test_bad_ablation_spec_is_one_line(capsys, tiny_hf_dir):
    assert main(["ablate", PROMPT, "--model", str(tiny_hf_dir), "-a", "L9H0"]) == 2
    err = capsys.readouterr().err
    assert "layer 9 does not exist" in err and len(err.strip().splitlines()) == 1
    assert main(["lens", PROMPT, "--model", str(tiny_hf_dir), "--positions", "a,b"]) == 2


def test_lens_names_the_character_a_byte_token_helps_form(capsys, monkeypatch, tiny_hf_dir):
    """GPT-2 reads 言 as three byte tokens; the lens headed their columns '<0xE8>', '<0xA8>',
    '<0x80>', and a two-byte token '<0xE8…' (cut), where the page and ``explain`` show the
    character they form."""
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["lens", "我爱自然语言处理", "--model", str(tiny_hf_dir)]) == 0
    lines = capsys.readouterr().out.splitlines()
    positions, labels = lines[1].split(), lines[2].split("'")[1::2]
    assert positions[-7:] == [str(p) for p in range(12, 19)]
    # the last seven columns: 言 (three tokens), 处 (two), 理 (two)
    assert lines[2].split()[-14:] == [
        "'言'", "1/3", "'言'", "2/3", "'言'", "3/3",
        "'处'", "1/2", "'处'", "2/2", "'理'", "1/2", "'理'", "2/2",
    ]  # fmt: skip
    assert not any("<0x" in label for label in labels)


def test_lens_shows_tokens_whole_where_the_terminal_has_room(capsys, monkeypatch, tiny_hf_dir):
    """Six positions in 100 columns were headed ' capi…' and ' Fran…', half the line empty:
    a cell was cut at 8 characters however wide the terminal. Narrow, it still shows as many
    positions as 8-character cells allow."""
    prompt = "The capital of France is"
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["lens", prompt, "--model", str(tiny_hf_dir)]) == 0
    header = capsys.readouterr().out.splitlines()[2]
    assert "' capital'" in header and "' France'" in header and "…" not in header
    monkeypatch.setenv("COLUMNS", "40")
    assert main(["lens", prompt, "--model", str(tiny_hf_dir)]) == 0
    narrow = capsys.readouterr().out.splitlines()
    assert narrow[1].split() == ["1", "2", "3", "4"] and "' Fran…'" in narrow[2]


@pytest.mark.parametrize("columns", [80, 60])
def test_explain_lists_a_special_token_whole(capsys, monkeypatch, tiny_hf_dir, columns):
    """Step 4 listed '<|endoftext|>' as '<|endofte…' with half its panel empty (and SmolLM2's
    chat template's '<|im_start|>' as '<|im_star…'): its tables cut every token at 12
    characters in a terminal under 120 columns wide."""
    from rich.cells import cell_len

    monkeypatch.setenv("COLUMNS", str(columns))
    argv = ["explain", "<|endoftext|>Hello", "--model", str(tiny_hf_dir), "--step", "4"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.count("'<|endoftext|>'") == 2  # the tokens and their merges
    assert max(cell_len(line) for line in out.splitlines()) <= columns


@pytest.mark.parametrize("columns", [80, 60])
def test_explain_names_a_special_token_whole_among_those_attended(
    capsys, monkeypatch, tiny_hf_dir, columns
):
    """Step 8's "attends most to" wrote '<|im_star…'@33 in a line that wraps anyway."""
    from rich.cells import cell_len

    monkeypatch.setenv("COLUMNS", str(columns))
    argv = ["explain", "<|endoftext|>Hello", "--model", str(tiny_hf_dir), "--step", "8"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "'<|endoftext|>'@0" in out
    assert max(cell_len(line) for line in out.splitlines()) <= columns


@pytest.fixture(scope="module")
def predicts_end_of_text(tmp_path_factory):
    """A tiny GPT-2 whose every position's likeliest next token is '<|endoftext|>': the final
    norm writes one vector v whatever comes in, and the token's (tied) embedding row is 10 v."""
    from safetensors.torch import load_file, save_file

    from helpers_hf import save_random_hf_gpt2

    folder = save_random_hf_gpt2(tmp_path_factory.mktemp("eot"))
    weights = load_file(folder / "model.safetensors")
    v = torch.nn.functional.normalize(
        torch.randn(64, generator=torch.Generator().manual_seed(1)), dim=0
    )
    weights["transformer.ln_f.weight"] = torch.zeros(64)
    weights["transformer.ln_f.bias"] = v
    weights["transformer.wte.weight"][50256] = 10 * v
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})
    return folder


@pytest.mark.parametrize("step", ["2", "15", "16", "17"])
def test_explain_shows_a_predicted_special_token_whole(
    capsys, monkeypatch, predicts_end_of_text, step
):
    """The tables of predictions cut '<|endoftext|>' (and a Chinese prompt's '<0xEF><0xBC>')
    at 12 characters, '<|endofte…', with most of an 80-column panel empty."""
    from rich.cells import cell_len

    monkeypatch.setenv("COLUMNS", "80")
    assert main(["explain", "Hello", "--model", str(predicts_end_of_text), "--step", step]) == 0
    out = capsys.readouterr().out
    assert "'<|endoftext|>'" in out and "'<|endofte…'" not in out
    assert max(cell_len(line) for line in out.splitlines()) <= 80
