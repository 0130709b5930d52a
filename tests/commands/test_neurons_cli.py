"""lmscope neurons: coloured text to the terminal and to PNG/SVG/HTML/JSON, the finder's
table and report, and one-line errors."""

from __future__ import annotations

import json
import re

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


@pytest.mark.slow
def test_cell_to_files(tmp_path, quote_lstm, text_file):
    for suffix in ("png", "svg", "html", "json"):
        out = tmp_path / f"cell.{suffix}"
        assert run("--model", quote_lstm, "--text", text_file, "--cell", "0:5", "--out", out) == 0
        assert out.stat().st_size > 500
    body = json.loads((tmp_path / "cell.json").read_text())
    assert body["kind"] == "c" and "layer 0, unit 5" in body["title"]
    assert len(body["values"]) == len(text_file.read_text())
    assert "<span" in (tmp_path / "cell.html").read_text()


@pytest.mark.parametrize(
    ("limit", "shown"),
    [
        (100, 2 * (len(LINE) + 1)),  # cut inside the third line: two whole lines
        (2 * (len(LINE) + 1), 2 * (len(LINE) + 1)),  # cut at a line end: kept as it is
        (10, 10),  # no line end in it: the characters asked for
        (10_000, 40 * (len(LINE) + 1)),  # the whole file, shorter than the limit
    ],
)
def test_a_cell_view_cut_by_max_chars_ends_at_a_line_end(
    tmp_path, quote_lstm, text_file, limit, shown
):
    """The docs' picture of a code unit stopped at "global" in the middle of a line: a view
    cut at --max-chars now ends with the last whole line it holds."""
    out = tmp_path / "cell.json"
    args = ("--model", quote_lstm, "--text", text_file, "--cell", "0:5", "--max-chars", limit)
    assert run(*args, "--out", out) == 0
    body = json.loads(out.read_text())
    assert len(body["values"]) == shown


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
    assert "inside_quotes: chosen on the first part: unit" in printed
    report = json.loads(out.read_text())
    quotes = next(f for f in report["features"] if f["name"] == "inside_quotes")
    assert quotes["best"][0]["unit"] == 5 and quotes["best"][0]["f1"] > 0.99


@pytest.mark.slow
def test_find_on_python_uses_the_code_features(capsys, tmp_path, quote_lstm):
    path = tmp_path / "mod.py"
    code = 'def f(a, b):\n    """say "hi" to a"""\n    return (a, "b #", [b])  # done\n'
    path.write_text(code * 30, encoding="utf-8")
    out = tmp_path / "cells.json"
    assert run("--model", quote_lstm, "--text", path, "--find", "--out", out) == 0
    printed = capsys.readouterr().out
    assert "code features" in printed and "inside_string: chosen on the first part" in printed
    names = [f["name"] for f in json.loads(out.read_text())["features"]]
    assert names == resolve_features("code")  # its names and order: test_code_features.py
    assert run("--model", quote_lstm, "--text", path, "--find", "--features", "prose") == 0
    assert "inside_quotes: chosen on the first part" in capsys.readouterr().out
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
    assert "no such text file" in capsys.readouterr().err
    foreign = tmp_path / "foreign.txt"
    foreign.write_text("ÀÉÎ", encoding="utf-8")
    assert run("--model", quote_lstm, "--text", foreign, "--cell", "0:1") == 2
    assert "none of the text's characters" in capsys.readouterr().err


@pytest.mark.slow
def test_a_gpt_is_refused(capsys, text_file):
    assert run("--model", "shakespeare", "--text", text_file, "--cell", "0:1") == 2
    assert "not a char-RNN/LSTM/GRU" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cell", "0:1", "--out", "w.png", "--width", "0"], "--width must be at least 40"),
        (["--cell", "0:1", "--out", "w.svg", "--width", "-3"], "--width must be at least 40"),
        (["--cell", "0:1", "--width", "9999"], "--width must be at most 400"),
        (["--find", "--select", "0"], "--select must be between 0 and 1"),
        (["--find", "--select", "1.5"], "--select must be between 0 and 1"),
        (["--find", "--select", "half"], "--select must be a number"),
        (["--find", "--top", "0"], "--top must be at least 1"),
        (["--find", "--features", "bogus"], "--features: unknown feature 'bogus'"),
    ],
)
def test_bad_options_are_refused_before_the_model_loads(capsys, tmp_path, args, message):
    # a model that does not exist: the option must be refused first, naming its flag
    text = tmp_path / "t.txt"
    text.write_text(LINE)
    assert run("--model", tmp_path / "no-model", "--text", text, *args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
    assert "Traceback" not in err and "select_fraction" not in err


@pytest.mark.slow
def test_pictures_and_json_speak_chinese(capsys, monkeypatch, tmp_path, quote_lstm, text_file):
    import matplotlib

    from lmscope.interpret.cell_views import CellText

    figures = []
    draw = CellText.figure
    monkeypatch.setattr(
        CellText, "figure", lambda self, *a: figures.append(draw(self, *a)) or figures[-1]
    )
    out = tmp_path / "quote-zh.png"
    args = ("--model", quote_lstm, "--text", text_file, "--cell", "0:5", "--lang", "zh")
    assert run(*args, "--out", out) == 0 and out.stat().st_size > 500
    title = figures[0].texts[0]
    assert title.get_text() == "quote-lstm：第 0 层，单元 5，细胞状态（c）"
    installed = {f.name for f in matplotlib.font_manager.fontManager.ttflist}
    if "Noto Sans CJK SC" in installed:  # drawn with a font that has the glyphs
        assert "Noto Sans CJK SC" in title.get_fontfamily()
    legend = [t.get_text() for ax in figures[0].axes for t in ax.get_xticklabels()]
    assert "tanh(c) = −1" in legend
    assert run(*args, "--out", tmp_path / "cell.json") == 0
    assert "第 0 层" in json.loads((tmp_path / "cell.json").read_text())["title"]


def test_find_at_80_columns_keeps_feature_names_whole(capsys, monkeypatch, tmp_path, quote_lstm):
    monkeypatch.setenv("COLUMNS", "80")
    text = tmp_path / "t.txt"
    text.write_text((LINE + "\n") * 40)
    out = tmp_path / "cells.json"
    assert run("--model", quote_lstm, "--text", text, "--find", "--out", out) == 0
    printed = capsys.readouterr().out
    table = printed.split("\ninside_quotes: ")[0]
    assert max(map(len, table.splitlines())) <= 80
    for name in ("inside_quotes", "line_position", "bracket_depth", "inside_comment"):
        assert re.search(rf"^ ?{name} ", table, flags=re.M), table
    # a feature it could not score says why in one pair of parentheses
    flat = " ".join(printed.split())  # the line wraps at 80 columns
    assert re.search(r"inside_url: not scored \([^()]+ have it\) ", flat), flat
    assert not re.search(r"\([^)]*\(", flat.split("cells.json")[0]), flat  # none nested


@pytest.mark.parametrize("args", [["--cell", "0:1"], ["--find"]])
def test_an_out_that_cannot_be_written_is_one_line_before_the_model_loads(capsys, tmp_path, args):
    text = tmp_path / "t.txt"
    text.write_text(LINE)
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    folder = tmp_path / "a-folder.json"
    folder.mkdir()
    name = "c.png" if "--cell" in args else "c.json"
    cases = [
        (notes / "run" / name, f"--out {notes / 'run' / name}: {notes} is a file, not a folder"),
        (folder, f"--out {folder}: it is a folder; name the file to write"),
    ]
    for out, message in cases:
        if out == folder and "--cell" in args:
            out, message = folder.with_suffix(".png"), message.replace(".json", ".png")
            out.mkdir()
        assert run("--model", tmp_path / "no-model", "--text", text, *args, "--out", out) == 2
        err = capsys.readouterr().err
        assert err.strip() == f"lmscope: error: {message}", err
    assert notes.read_text() == "mine"


def test_standard_input_that_is_not_utf8_is_one_line(capsys, monkeypatch, quote_lstm):
    """--text - with bytes that are not UTF-8 was a UnicodeDecodeError traceback."""
    import io
    import sys

    stdin = io.TextIOWrapper(io.BytesIO(b"\xff\xfe not text"), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", stdin)
    assert run("--model", quote_lstm, "--text", "-", "--cell", "0:1") == 2
    err = capsys.readouterr().err
    assert err == "lmscope: error: standard input is not UTF-8 text\n", err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # an empty --corpus read every text file of the current folder
        (["--corpus", ""], "--corpus is empty; name a bundled corpus, e.g. warpeace-novel"),
        (["--corpus", " "], "--corpus is empty"),
        (["--text", ""], "--text is empty; name a UTF-8 text file, or '-' for standard input"),
    ],
)
def test_an_empty_text_source_is_refused(capsys, tmp_path, monkeypatch, quote_lstm, args, message):
    (tmp_path / "notes.txt").write_text(LINE * 40, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert run("--model", quote_lstm, *args, "--cell", "0:1") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


# --- no text named: the corpus the model was trained on ---------------------------------------
@pytest.fixture(scope="module")
def trained_on(tmp_path_factory):
    """The quote LSTM saved as `lmscope train` saves a model trained on ``corpus``."""
    import torch
    from tests.commands.conftest import CHARS

    from lmscope.engine.loading import save_model
    from lmscope.interpret.planted import plant_quote_cell
    from lmscope.models.rnn import CharRNN, CharRNNConfig
    from lmscope.tokenizers import CharTokenizer

    def saved(corpus: str):
        torch.manual_seed(0)
        net = CharRNN(CharRNNConfig(vocab_size=len(CHARS), cell="lstm", hidden=12, layers=1))
        plant_quote_cell(net, CHARS.index('"'), unit=5)
        folder = tmp_path_factory.mktemp("trained") / "lstm"
        meta = {"name": "lstm", "training": {"corpus": corpus}}
        return save_model(net, folder, tokenizer=CharTokenizer(CHARS), meta=meta)

    return saved


def test_with_no_text_named_it_reads_the_held_out_part_of_the_models_own_corpus(capsys, trained_on):
    model = trained_on("shakespeare")
    assert run("--model", model, "--cell", "0:5", "--max-chars", 300) == 0
    own = capsys.readouterr().out
    from lmscope.interpret.features import validation_text

    held_out = validation_text("shakespeare", 300)
    assert held_out.split("\n")[1] in own.replace("↵", "")  # its text, coloured
    named = ["--corpus", "shakespeare"]
    assert run("--model", model, *named, "--cell", "0:5", "--max-chars", 300) == 0
    assert capsys.readouterr().out == own  # the same as naming it


@pytest.mark.parametrize("corpus", [None, "notes.txt"])
def test_with_no_text_and_no_bundled_corpus_of_its_own_it_asks_for_one_in_one_line(
    capsys, monkeypatch, tmp_path, trained_on, quote_lstm, corpus
):
    # a model trained on a file names it as given then: it is not read again from here
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text(LINE * 40, encoding="utf-8")
    model = quote_lstm if corpus is None else trained_on(corpus)
    assert run("--model", model, "--find") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--text" in err and "--corpus" in err, err
    assert "warpeace-novel" in err


def test_find_names_the_rule_that_ranks_a_yes_no_features_table(capsys, monkeypatch, tmp_path):
    """On a short text the table listed word_start's units 0:260, 0:129 and 1:212, ranked by
    the F1 of their threshold rules, while the line under it named 1:227, the unit of largest
    |r|, which is not in the table: the line now names the rule's unit too."""
    words = ["the", "a", "he", "she", "said", "went", "into", "house", "and", "with", "her"]
    words += ["his", '"yes"', "(now)", "no"]
    path = tmp_path / "words.txt"
    path.write_text(" ".join(words[(7 * i) % len(words)] for i in range(60)), encoding="utf-8")
    out = tmp_path / "cells.json"
    monkeypatch.setenv("COLUMNS", "200")  # each line whole
    assert run("--model", "warpeace-lstm", "--text", path, "--find", "--out", out) == 0
    lines = capsys.readouterr().out.splitlines()
    scored = [f for f in json.loads(out.read_text())["features"] if f["best"]]
    assert any(f["kind"] == "binary" for f in scored)
    for f in scored:
        line = next((x for x in lines if x.startswith(f"{f['name']}: by its best rule")), "")
        top = f["best"][0]
        rule = f"unit {top['layer']}:{top['unit']} {top['kind']} ({top['direction']}"
        said = rule in line and f"held-out F1 = {top['f1']:.3f}" in line
        assert said == (f["kind"] == "binary"), line
