"""lmscope neurons: coloured text to the terminal and to PNG/SVG/HTML/JSON, the finder's
table and report, and one-line errors."""

from __future__ import annotations

import json

import pytest

from lmscope.cli import main
from lmscope.interpret.features import resolve_features

LINE = 'he said "yes it is" and then "no" '


@pytest.fixture()
def text_file(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text((LINE + "\n") * 40, encoding="utf-8")
    return path


def run(*args: str) -> int:
    return main(["neurons", *map(str, args)])


def test_cell_to_files(tmp_path, quote_lstm, text_file):
    for suffix in ("png", "svg", "html", "json"):
        out = tmp_path / f"cell.{suffix}"
        assert run("--model", quote_lstm, "--text", text_file, "--cell", "0:5", "--out", out) == 0
        assert out.stat().st_size > 500
    body = json.loads((tmp_path / "cell.json").read_text())
    assert body["kind"] == "c" and "layer 0, unit 5" in body["title"]
    assert len(body["values"]) == len(text_file.read_text())
    assert "<span" in (tmp_path / "cell.html").read_text()


def test_cell_in_the_terminal_with_skipped_characters(capsys, tmp_path, quote_lstm):
    path = tmp_path / "odd.txt"
    path.write_text('Zut, "oui" dit-il\n', encoding="utf-8")
    assert run("--model", quote_lstm, "--text", path, "--cell", "0:5", "--kind", "h") == 0
    captured = capsys.readouterr()
    assert "layer 0, unit 5, hidden state (h)" in captured.out
    assert "skipped 3 character(s)" in captured.err and "'Z'" in captured.err


def test_find_prints_the_best_units_and_writes_the_report(capsys, tmp_path, quote_lstm, text_file):
    out = tmp_path / "report.json"
    assert run("--model", quote_lstm, "--text", text_file, "--find", "--out", out) == 0
    printed = capsys.readouterr().out
    assert "inside_quotes" in printed and "0:5 c" in printed
    assert "inside_quotes: best |r| =" in printed and "line_position: best |r| =" in printed
    report = json.loads(out.read_text())
    quotes = next(f for f in report["features"] if f["name"] == "inside_quotes")
    assert quotes["best"][0]["unit"] == 5 and quotes["best"][0]["f1"] > 0.99


def test_find_on_python_uses_the_code_features(capsys, tmp_path, quote_lstm):
    path = tmp_path / "mod.py"
    code = 'def f(a, b):\n    """say "hi" to a"""\n    return (a, "b #", [b])  # done\n'
    path.write_text(code * 30, encoding="utf-8")
    out = tmp_path / "cells.json"
    assert run("--model", quote_lstm, "--text", path, "--find", "--out", out) == 0
    printed = capsys.readouterr().out
    assert "code features" in printed and "inside_string: best |r| =" in printed
    names = [f["name"] for f in json.loads(out.read_text())["features"]]
    assert names == resolve_features("code")  # its names and order: test_code_features.py
    assert run("--model", quote_lstm, "--text", path, "--find", "--features", "prose") == 0
    assert "inside_quotes: best |r|" in capsys.readouterr().out
    args = ("--model", quote_lstm, "--text", path, "--find", "--features", "inside_string,x")
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
def test_errors_are_one_line(capsys, quote_lstm, text_file, args, message):
    assert run("--model", quote_lstm, "--text", text_file, *args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


def test_text_errors(capsys, tmp_path, quote_lstm):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert run("--model", quote_lstm, "--text", empty, "--cell", "0:1") == 2
    assert "is empty" in capsys.readouterr().err
    assert run("--model", quote_lstm, "--text", tmp_path / "nope.txt", "--cell", "0:1") == 2
    assert "no text file at" in capsys.readouterr().err
    foreign = tmp_path / "foreign.txt"
    foreign.write_text("ÀÉÎ", encoding="utf-8")
    assert run("--model", quote_lstm, "--text", foreign, "--cell", "0:1") == 2
    assert "none of the text's characters" in capsys.readouterr().err


def test_a_gpt_is_refused(capsys, text_file):
    assert run("--model", "shakespeare", "--text", text_file, "--cell", "0:1") == 2
    assert "not a char-RNN/LSTM/GRU" in capsys.readouterr().err
