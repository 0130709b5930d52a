"""How a command's parser is made (``lmscope.commands.parsers``): its help texts' catalog ids
follow from the command's and its options' names, and ``cli.help_ids`` finds every one of them
for the catalog's completeness test (tests/ground/test_i18n.py)."""

from __future__ import annotations

import argparse

import pytest

from helpers_cli import parsers
from lmscope import i18n
from lmscope.cli import help_ids
from lmscope.commands.parsers import Commands, recording


def a_lab(lab: str = "lab") -> tuple[argparse.ArgumentParser, Commands]:
    top = argparse.ArgumentParser(prog="lmscope")
    commands = Commands(top.add_subparsers(dest="command"))
    experiments = commands.add(lab).subcommands("lab_command", "EXPERIMENT")
    return top, experiments


def test_the_ids_follow_from_the_names_and_the_texts_are_the_catalog_s():
    with recording() as ids:
        top, lab = a_lab()
        recall = lab.add("recall", run=len)
        recall.option("--queries", type=int, default=7, show_default=True)
        recall.option("--device", key="shared", default="cpu")
        recall.lang()
    assert ids == {
        "help.lab.summary",
        "help.lab.description",
        "help.lab.recall.summary",
        "help.lab.recall.description",
        "help.lab.recall.option.queries",
        "help.shared.option.device",
        "help.common.option.lang",
    }
    said = {a.dest: a.help for a in recall.parser._actions}
    assert said["queries"] == i18n.text("help.lab.recall.option.queries", default="7")
    assert said["device"] == i18n.text("help.shared.option.device")
    assert recall.parser.description == i18n.text("help.lab.recall.description")
    assert top.parse_args(["lab", "recall"]).run is len


def test_a_command_with_subcommands_prints_its_help_when_none_is_named(capsys):
    top, _ = a_lab()
    assert top.parse_args(["lab"]).run(None) == 0
    assert i18n.text("help.lab.description")[:40] in capsys.readouterr().out


def test_an_id_the_catalog_lacks_is_named_when_recorded_and_refused_when_built():
    with recording() as ids:
        a_lab("no-such-command")
    assert "help.no-such-command.summary" in ids  # the completeness test names it
    with pytest.raises(KeyError, match="help.no-such-command.summary"):
        a_lab("no-such-command")


def test_help_ids_are_every_help_text_the_parsers_show(monkeypatch):
    """Built with each text standing for its id, every help, description and group title of
    every parser is an id ``help_ids`` lists (or the top parser's own, literal in cli.py)."""
    ids = help_ids()
    assert {"help.explain.option.layer", "help.lab.recall.option.steps"} <= ids
    monkeypatch.setattr(i18n, "text", lambda message_id, *lang, **values: message_id)
    shown = set()
    for _, parser in parsers():
        shown |= {parser.description, parser.epilog}
        shown |= {group.title for group in parser._action_groups}
        for action in parser._actions:
            shown.add(action.help)
            if isinstance(action, argparse._SubParsersAction):
                shown |= {choice.help for choice in action._choices_actions}
    argparse_own = {None, argparse.SUPPRESS, "show this help message and exit"}
    argparse_own |= {"positional arguments", "options", "show program's version number and exit"}
    top = {"help.lmscope.description", "help.lmscope.epilog"}
    assert shown - argparse_own - top <= ids, (shown - argparse_own - top) - ids
    assert len(shown & ids) > 200
