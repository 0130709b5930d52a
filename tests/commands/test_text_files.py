"""The text files `--text` names (compare, neurons): one reader, the same one-line refusals in
both commands, and a hint when the value is a sentence rather than a file's name."""

from __future__ import annotations

import io
import sys

import pytest

from lmscope.cli import main
from lmscope.commands.common import read_text_file
from lmscope.errors import InvalidInputError


def refusal(path, **kwargs) -> str:
    with pytest.raises(InvalidInputError) as err:
        read_text_file(path, **kwargs)
    return str(err.value)


def test_a_file_its_first_characters_and_standard_input(tmp_path, monkeypatch):
    file = tmp_path / "t.txt"
    file.write_text("hello there", encoding="utf-8")
    assert read_text_file(file) == "hello there"
    assert read_text_file(str(file), max_chars=5) == "hello"
    monkeypatch.setattr(sys, "stdin", io.StringIO("from a pipe"))
    assert read_text_file("-") == "from a pipe"


def test_what_is_not_a_text_file_is_refused_in_one_line(tmp_path, monkeypatch):
    (tmp_path / "empty.txt").write_text("  \n")
    (tmp_path / "latin.txt").write_bytes("café".encode("latin-1"))
    assert refusal(tmp_path / "empty.txt").endswith("empty.txt is empty")
    assert refusal(tmp_path / "latin.txt").endswith("latin.txt is not a UTF-8 text file")
    assert "is a folder" in refusal(tmp_path)
    assert refusal(tmp_path / "nope.txt") == f"no such text file: {tmp_path / 'nope.txt'}"
    assert "/dev/zero" in refusal("/dev/zero")  # a device never ends: not read
    monkeypatch.setattr(sys, "stdin", io.StringIO(" \n"))
    assert refusal("-") == "standard input is empty; pipe some text in"


def test_a_sentence_given_as_the_file_gets_the_way_to_read_it():
    said = refusal("The quick brown fox jumps over the lazy dog.")
    assert said.startswith("no such text file: The quick brown fox")
    assert "--text -" in said and "echo" in said and "\n" not in said


@pytest.mark.parametrize("command", ["neurons", "compare"])
def test_both_commands_say_it_the_same_way(capsys, quote_lstm, command):
    models = ["--model", quote_lstm] + (["--model", quote_lstm] if command == "compare" else [])
    extra = ["--cell", "0:1"] if command == "neurons" else []
    assert main([command, *map(str, models), "--text", "a b c", *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such text file: a b c" in err and "--text -" in err
