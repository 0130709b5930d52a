"""lmscope neurons: coloured text to the terminal and to PNG/SVG/HTML/JSON, the finder's
table and report, and one-line errors."""

from __future__ import annotations

import json

import pytest
import torch

from lmscope.cli import main
from lmscope.engine.loading import save_model
from lmscope.interpret.planted import plant_quote_cell
from lmscope.models.rnn import CharRNN, CharRNNConfig
from lmscope.tokenizers import CharTokenizer

CHARS = '\n "abcdefghijklmnopqrstuvwxyz'
LINE = 'he said "yes it is" and then "no" '


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    torch.manual_seed(0)
    net = CharRNN(CharRNNConfig(vocab_size=len(CHARS), cell="lstm", hidden=12, layers=1))
    plant_quote_cell(net, CHARS.index('"'), unit=5)
    folder = tmp_path_factory.mktemp("models") / "quote-lstm"
    return save_model(net, folder, tokenizer=CharTokenizer(CHARS), meta={"name": "quote-lstm"})


@pytest.fixture()
def text_file(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text((LINE + "\n") * 40, encoding="utf-8")
    return path


def run(*args: str) -> int:
    return main(["neurons", *map(str, args)])


def test_cell_to_files(tmp_path, model_dir, text_file):
    for suffix in ("png", "svg", "html", "json"):
        out = tmp_path / f"cell.{suffix}"
        assert run("--model", model_dir, "--text", text_file, "--cell", "0:5", "--out", out) == 0
        assert out.stat().st_size > 500
    body = json.loads((tmp_path / "cell.json").read_text())
    assert body["kind"] == "c" and "layer 0, unit 5" in body["title"]
    assert len(body["values"]) == len(text_file.read_text())
    assert "<span" in (tmp_path / "cell.html").read_text()


def test_cell_in_the_terminal_with_skipped_characters(capsys, tmp_path, model_dir):
    path = tmp_path / "odd.txt"
    path.write_text('Zut, "oui" dit-il\n', encoding="utf-8")
    assert run("--model", model_dir, "--text", path, "--cell", "0:5", "--kind", "h") == 0
    captured = capsys.readouterr()
    assert "layer 0, unit 5, hidden state (h)" in captured.out
    assert "skipped 3 character(s)" in captured.err and "'Z'" in captured.err


def test_find_prints_the_best_units_and_writes_the_report(capsys, tmp_path, model_dir, text_file):
    out = tmp_path / "report.json"
    assert run("--model", model_dir, "--text", text_file, "--find", "--out", out) == 0
    printed = capsys.readouterr().out
    assert "inside_quotes" in printed and "0:5 c" in printed
    assert "inside_quotes: best |r| =" in printed and "line_position: best |r| =" in printed
    report = json.loads(out.read_text())
    quotes = next(f for f in report["features"] if f["name"] == "inside_quotes")
    assert quotes["best"][0]["unit"] == 5 and quotes["best"][0]["f1"] > 0.99


def test_find_on_python_uses_the_code_features(capsys, tmp_path, model_dir):
    path = tmp_path / "mod.py"
    code = 'def f(a, b):\n    """say "hi" to a"""\n    return (a, "b #", [b])  # done\n'
    path.write_text(code * 30, encoding="utf-8")
    out = tmp_path / "cells.json"
    assert run("--model", model_dir, "--text", path, "--find", "--out", out) == 0
    printed = capsys.readouterr().out
    assert "code features" in printed and "inside_string: best |r| =" in printed
    names = [f["name"] for f in json.loads(out.read_text())["features"]]
    assert names == [
        "inside_string",
        "inside_comment_py",
        "bracket_depth_py",
        "indent_level",
        "line_position",
        "inside_url",
    ]
    assert run("--model", model_dir, "--text", path, "--find", "--features", "prose") == 0
    assert "inside_quotes: best |r|" in capsys.readouterr().out
    args = ("--model", model_dir, "--text", path, "--find", "--features", "inside_string,x")
    assert run(*args) == 2
    assert "unknown feature 'x'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cell", "0:12"], "unit 12 does not exist; each layer has units 0..11"),
        (["--cell", "1:0"], "layer 1 does not exist"),
        (["--cell", "five"], "write LAYER:UNIT"),
        (["--cell", "0:1", "--kind", "z"], "an LSTM has no 'z' values"),
        ([], "say what to show"),
        (["--cell", "0:1", "--find"], "use one of them"),
        (["--cell", "0:1", "--out", "cell.gif"], "must end in .png"),
        (["--cell", "0:1", "--max-chars", "0"], "--max-chars must be at least 1"),
    ],
)
def test_errors_are_one_line(capsys, model_dir, text_file, args, message):
    assert run("--model", model_dir, "--text", text_file, *args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


def test_text_errors(capsys, tmp_path, model_dir):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert run("--model", model_dir, "--text", empty, "--cell", "0:1") == 2
    assert "is empty" in capsys.readouterr().err
    assert run("--model", model_dir, "--text", tmp_path / "nope.txt", "--cell", "0:1") == 2
    assert "no text file at" in capsys.readouterr().err
    foreign = tmp_path / "foreign.txt"
    foreign.write_text("ÀÉÎ", encoding="utf-8")
    assert run("--model", model_dir, "--text", foreign, "--cell", "0:1") == 2
    assert "none of the text's characters" in capsys.readouterr().err


def test_a_gpt_is_refused(capsys, text_file):
    assert run("--model", "shakespeare", "--text", text_file, "--cell", "0:1") == 2
    assert "not a char-RNN/LSTM/GRU" in capsys.readouterr().err
