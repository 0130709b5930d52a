"""The pseudo-language proves the command line's words come from the catalog: under
``--lang pseudo`` (or ``$LMSCOPE_LANG=pseudo``) every catalog text is accented and bracketed
(⟦…⟧), so a Latin word outside the brackets is a text written into the code instead of the
catalog. Names stay as typed: options, metavars, choices, commands, the values given (a file
name) and the program's name. Checked for every command's --help and for a refusal of each
kind the CLI shows (an option's check, argparse's own, the library's, the system's)."""

from __future__ import annotations

import argparse
import re

import pytest

from helpers_cli import parsers
from lmscope import i18n
from lmscope.cli import main
from lmscope.commands import serve
from lmscope.i18n.pseudo import CLOSE, OPEN

WORD = re.compile(r"[A-Za-z]{2,}")
INNERMOST = re.compile(re.escape(OPEN) + "[^" + OPEN + CLOSE + "]*" + re.escape(CLOSE))


def names_of(parser: argparse.ArgumentParser) -> set[str]:
    """The words a parser's help may show as typed: its program, options, metavars, choices,
    positional names and defaults."""
    shown: list[str] = [parser.prog]
    for action in parser._actions:
        shown += action.option_strings
        shown += [str(action.dest), str(action.dest).upper()]
        metavar = action.metavar
        shown += list(metavar) if isinstance(metavar, tuple) else [str(metavar)]
        shown += [str(choice) for choice in action.choices or ()]
        shown += [str(action.default)]
    return {word for text in shown for word in WORD.findall(text)}


def plain_words(text: str, allowed: set[str]) -> list[str]:
    """The Latin words of ``text`` outside the pseudo-language's brackets that are not names."""
    while INNERMOST.search(text):
        text = INNERMOST.sub(" ", text)
    return [word for word in WORD.findall(text) if word not in allowed]


@pytest.fixture
def pseudo(monkeypatch):
    monkeypatch.setenv("LMSCOPE_LANG", "pseudo")
    monkeypatch.setenv("COLUMNS", "100")


with i18n.using("pseudo"):
    COMMANDS = [(path[1:], names_of(parser)) for path, parser in parsers()]


@pytest.mark.parametrize(
    ("path", "allowed"), COMMANDS, ids=[" ".join(c) or "-" for c, _ in COMMANDS]
)
def test_every_commands_help_is_the_catalogs(capsys, pseudo, path, allowed):
    with pytest.raises(SystemExit) as stop:
        main([*path, "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert OPEN in out
    assert plain_words(out, allowed) == [], out


def test_lang_pseudo_on_the_command_line_and_before_the_command(capsys, monkeypatch):
    monkeypatch.delenv("LMSCOPE_LANG", raising=False)
    for argv in (["lens", "--lang", "pseudo", "--help"], ["--lang", "pseudo", "lens", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        out = capsys.readouterr().out
        assert OPEN in out and "show this help" not in out


def run(capsys, argv) -> str:
    """The error line(s) ``lmscope argv`` prints, status 2."""
    try:
        code = main(argv)
    except SystemExit as stop:
        code = stop.code
    assert code == 2
    return capsys.readouterr().err


def parser_words(argv: list[str]) -> set[str]:
    """What the usage block above an error may show: the words of every parser on the way."""
    with i18n.using("pseudo"):
        found = [names for path, names in COMMANDS if argv[: len(path)] == list(path)]
    return set().union(*found)


REFUSALS = {
    # an option's type function (OptionError)
    "option check": ["generate", "--temperature", "-1", "hi"],
    "option whole number": ["neurons", "--width", "wide", "--find"],
    # argparse's own lines, with the usage above them
    "missing argument": ["lens"],
    "invalid value": ["serve", "--port", "abc"],
    "invalid choice": ["explain", "--lang", "fr", "hi"],
    "unrecognized argument": ["generate", "x", "y"],
    "unknown command": ["nosuchcommand"],
    # the commands' own checks (InvalidInputError)
    "command check": ["compare", "--model", "a", "--model", "b", "--model", "c", "--text", "x"],
    "empty name": ["export", " ", "out"],
    "port range": ["serve", "--port", "70000"],
    "what to show": ["neurons", "--text", "notes.txt"],
    # the library's (ModelNotFoundError from the loader)
    "no such model": ["generate", "--model", "no/such/model-folder", "hi"],
}


@pytest.mark.parametrize("argv", REFUSALS.values(), ids=REFUSALS.keys())
def test_every_kind_of_refusal_is_the_catalogs(capsys, pseudo, argv):
    err = run(capsys, argv)
    line = err.rstrip("\n").splitlines()[-1]
    assert OPEN in line, line
    allowed = parser_words(argv) | {w for a in argv for w in WORD.findall(a)} | {"lmscope"}
    assert plain_words(err, allowed) == [], err


def test_a_system_error_is_one_line_with_the_systems_reason(capsys, pseudo, monkeypatch):
    """An OSError the CLI did not expect: the catalog's words, the file and the reason as
    values (the system says its reason in its own language)."""

    def refused(args):
        raise PermissionError(13, "Permission denied", "/srv/locked.txt")

    monkeypatch.setattr(serve, "run", refused)
    err = run(capsys, ["serve"])
    assert err.count("\n") == 1 and "/srv/locked.txt" in err and "Permission denied" in err
    assert plain_words(err, {"lmscope", "srv", "locked", "txt", "Permission", "denied"}) == []
    monkeypatch.setenv("LMSCOPE_LANG", "en")
    assert run(capsys, ["serve"]) == "lmscope: error: /srv/locked.txt: Permission denied\n"
