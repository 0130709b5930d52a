"""--help in Chinese under --lang zh (or $LMSCOPE_LANG=zh): every description, option help,
epilog and group title of every parser is a catalog id (``lmscope.i18n``, ``help.…``), rendered
in the language asked for, so an English text written into a parser instead of the catalog fails
here (the pseudo-language shows it); argparse's own words (usage, headings, -h's help) are
Chinese too (``parser.…``); option names, metavars and choices stay as typed. English stays
argparse's own."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

import pytest
from rich.cells import cell_len

from helpers_cli import parsers
from lmscope import i18n
from lmscope.cli import main
from lmscope.commands.parser_words import argparse_words
from lmscope.i18n.pseudo import CLOSE, OPEN

CJK = re.compile(r"[\u4e00-\u9fff]")
OPTION = re.compile(r"(?<![\w-])--?[a-zA-Z][\w-]*")


def help_texts(parser, own: bool = False) -> list[str]:
    """Every text ``parser --help`` shows, in the order the parser has them (None where it has
    none); ``own``: argparse's own words too (-h's help, the headings)."""
    texts = [parser.description, parser.epilog]
    for action in parser._actions:
        texts.append(action.help)
        if isinstance(action, argparse._SubParsersAction):
            texts += [choice.help for choice in action._choices_actions]
    for group in parser._action_groups:
        texts += [group.title, group.description]
    texts = [None if t == argparse.SUPPRESS else t for t in texts]
    return texts if own else [None if t in ARGPARSE_WORDS else t for t in texts]


def built_in(lang: str) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    with i18n.using(lang):
        return list(parsers())


ARGPARSE_WORDS = {
    i18n.text(key, "en")
    for key in ("parser.heading.positional", "parser.heading.options", "parser.help")
} | {i18n.text("parser.version", "en")}
ENGLISH = built_in("en")
ALL_TEXTS = sorted({text for _, p in ENGLISH for text in help_texts(p) if text})
COMMANDS = [" ".join(path[1:]) for path, _ in ENGLISH]
# (English, Chinese) of every text of every parser, side by side
PAIRS = sorted(
    {
        (en, zh)
        for (_, en_parser), (_, zh_parser) in zip(ENGLISH, built_in("zh"), strict=True)
        for en, zh in zip(help_texts(en_parser), help_texts(zh_parser), strict=True)
        if en
    }
)


def run_help(capsys, *argv) -> str:
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--help"])
    assert stop.value.code == 0
    return capsys.readouterr().out


@pytest.fixture
def en(monkeypatch):
    monkeypatch.delenv("LMSCOPE_LANG", raising=False)
    monkeypatch.setenv("COLUMNS", "80")


@pytest.fixture
def zh(monkeypatch):
    monkeypatch.setenv("LMSCOPE_LANG", "zh")
    monkeypatch.setenv("COLUMNS", "80")


def test_the_walk_finds_every_command():
    for command in ("", "explain", "generate", "lens", "ablate", "compare", "serve", "train"):
        assert command in COMMANDS
    for command in ("sample", "export", "minrnn", "neurons", "race", "lab", "lab serial-depth"):
        assert command in COMMANDS
    assert len(ALL_TEXTS) > 150


def test_every_help_text_comes_from_the_catalog():
    """Built in the pseudo-language, a text the catalog did not give stays plain English."""
    plain = [
        text
        for _, parser in built_in("pseudo")
        for text in help_texts(parser)
        if text and not (text.startswith(OPEN) and text.endswith(CLOSE))
    ]
    assert not plain, "help texts not from the catalog (i18n.text):\n" + "\n".join(plain)


def test_argparses_own_words_are_in_the_catalog():
    """-h's help and the headings: the catalog's English is argparse's, so it is recognised."""
    own = {text for _, p in ENGLISH for text in help_texts(p, own=True) if text} - set(ALL_TEXTS)
    assert own == ARGPARSE_WORDS
    for english in own:
        assert CJK.search(argparse_words(english, "zh")), english


@pytest.mark.parametrize(("english", "chinese"), PAIRS, ids=[en[:40] for en, _ in PAIRS])
def test_chinese_keeps_options_and_placeholders(english, chinese):
    assert CJK.search(chinese), chinese
    # what the user types stays as typed; argparse's % formatting must still work
    assert sorted(OPTION.findall(english)) == sorted(OPTION.findall(chinese)), chinese
    assert re.findall(r"%\(\w+\)s|%%", english) == re.findall(r"%\(\w+\)s|%%", chinese)


def test_explain_help_in_chinese_with_lang_before_the_command(en, capsys):
    out = run_help(capsys, "--lang", "zh", "explain")
    assert out.startswith("用法：lmscope explain ")
    assert "\n位置参数：\n" in out and "\n选项：\n" in out and "\n采样：\n" in out
    assert "显示此帮助信息并退出" in out
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  --temperature"))
    assert CJK.search(lines[at] + lines[at + 1]), lines[at : at + 2]  # its help: same or next line
    for kept in (
        "--top-k",
        "--chat",
        "--step",
        "{en,zh,pseudo}",
        "smollm2",
        "SmolLM2-135M-Instruct",
    ):
        assert kept in out
    assert "show this help" not in out and "options:" not in out


def test_lang_after_the_command(en, capsys):
    out = run_help(capsys, "explain", "--lang", "zh")
    assert out.startswith("用法：") and "追踪的提示词" in out


def test_top_help_in_chinese(zh, capsys):
    out = run_help(capsys)
    assert out.startswith("用法：lmscope [-h] [--version] COMMAND ...")
    assert "显示程序版本号并退出" in out
    explain = next(line for line in out.splitlines() if line.strip().startswith("explain"))
    assert CJK.search(explain)


@pytest.mark.slow
def test_lab_experiment_help_in_chinese_from_the_environment():
    env = {**os.environ, "LMSCOPE_LANG": "zh", "COLUMNS": "80"}
    out = subprocess.run(
        [sys.executable, "-m", "lmscope", "lab", "serial-depth", "--help"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    assert out.startswith("用法：lmscope lab serial-depth ")
    lines = out.splitlines()
    for option in ("--out OUT", "--quick", "--clock {wall,cpu}", "--threads THREADS"):
        at = next(i for i, line in enumerate(lines) if line.startswith(f"  {option}"))
        assert CJK.search(lines[at] + lines[at + 1]), lines[at : at + 2]
    assert "10%" in out and "10%%" not in out  # argparse's %% is said once


@pytest.mark.parametrize("command", COMMANDS)
def test_every_chinese_screen_says_argparses_words_in_chinese(zh, capsys, command):
    out = run_help(capsys, *command.split())
    assert out.startswith("用法：lmscope")
    for english in (
        "usage:",
        "options:",
        "positional arguments",
        "show this help",
        "version number",
    ):
        assert english not in out, english
    headings = [line for line in out.splitlines() if line and not line.startswith(" ")]
    assert all(not line.endswith(":") for line in headings), headings


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS)
def test_chinese_help_fits_80_columns(zh, capsys, command):
    """Chinese characters take two columns: the wrapping counts them so."""
    out = run_help(capsys, *command.split())
    assert CJK.search(out)
    wide = [line for line in out.splitlines() if cell_len(line) > 80 and "[" not in line]
    assert not wide, wide


@pytest.mark.parametrize("command", COMMANDS)
def test_english_help_is_argparses(en, capsys, command):
    out = run_help(capsys, *command.split())
    assert not CJK.search(out)
    assert out.startswith("usage: lmscope")
    assert "show this help message and exit" in out
    parser = dict((" ".join(p[1:]), q) for p, q in parsers())[command]
    flat = " ".join(out.split())
    for text in filter(None, help_texts(parser)):
        said = " ".join(text.replace("%%", "%").split()).replace("- ", "-")
        assert said in flat.replace("- ", "-"), text


@pytest.mark.slow
def test_lang_before_the_command_is_the_commands_language(en, capsys):
    """Not only its help: the command speaks the language typed before it."""
    assert main(["--lang", "zh", "lab", "show", "serial-depth"]) == 0
    assert "串行深度" in capsys.readouterr().out
    assert main(["--lang", "zh", "lab", "show", "serial-depth", "--lang", "en"]) == 0
    assert "Serial depth" in capsys.readouterr().out  # the command's own --lang wins
