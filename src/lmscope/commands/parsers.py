"""How a command's parser is made: its words are the catalog's, by ids that follow from the
command's name.

A command ``NAME`` (a subcommand ``PARENT.NAME``: ``lab.recall``) says its help and
description as ``help.NAME.summary`` and ``help.NAME.description``; its option ``--FLAG`` as
``help.NAME.option.FLAG`` and its argument ``ARG`` as ``help.NAME.argument.ARG``, or the same
under another key where several commands share one text (``help.shared.argument.text``).

These ids are made at run time, so the catalog's completeness test cannot find them as
literals: ``recording`` collects every id a parser is built with, and ``lmscope.cli.help_ids``
builds every parser under it (``tests/ground/test_i18n.py`` lists it in ``RUNTIME_IDS``).
"""

from __future__ import annotations

import argparse
import contextlib
import contextvars
from collections.abc import Callable, Iterator, Sequence

from lmscope import i18n
from lmscope.commands.common import (
    LANGS,
    min_p_value,
    seed_value,
    temperature_value,
    top_k_value,
    top_p_value,
)

_recorded: contextvars.ContextVar[set[str] | None] = contextvars.ContextVar(
    "lmscope help ids", default=None
)


@contextlib.contextmanager
def recording() -> Iterator[set[str]]:
    """The ids the help texts made inside the block are said from (each parser's ids as it is
    built). An id the catalog lacks is recorded, not refused, so the check names it."""
    ids: set[str] = set()
    token = _recorded.set(ids)
    try:
        yield ids
    finally:
        _recorded.reset(token)


def help_text(message_id: str, **values: object) -> str:
    """The catalog's text ``message_id`` in the language in use, for a parser's help."""
    ids = _recorded.get()
    if ids is not None:
        ids.add(message_id)
        if not i18n.has(message_id):
            return message_id
    return i18n.text(message_id, **values)


def help_id(key: str, *parts: str) -> str:
    """``help.KEY.PART...``: the catalog id of a text of command ``KEY``."""
    return ".".join(("help", key, *parts))


def _flag_name(flags: Sequence[str]) -> str:
    """The name an option's help id uses: its first long flag without the dashes."""
    long = [f for f in flags if f.startswith("--")] or list(flags)
    return long[0].lstrip("-")


def print_help(parser: argparse.ArgumentParser) -> int:
    """What a command with subcommands does when none is named."""
    parser.print_help()
    return 0


class Options:
    """Where options are added (a parser, or a group of its options) and the key their help
    ids are under (``help.KEY.option.FLAG``)."""

    def __init__(self, parser, key: str):
        self.parser = parser  # an ArgumentParser or an argument group of one
        self.key = key

    def _help(self, kind: str, name: str, key: str | None, values: dict | None) -> str:
        return help_text(help_id(key or self.key, kind, name), **(values or {}))

    def option(
        self,
        *flags: str,
        key: str | None = None,
        name: str | None = None,
        values: dict | None = None,
        show_default: bool = False,
        **settings,
    ) -> argparse.Action:
        """``add_argument(*flags, **settings)``, its help ``help.KEY.option.NAME`` (``NAME``:
        the first long flag's) filled in with ``values`` (``show_default``: and ``{default}``,
        the option's default); ``key`` names a text several commands share (``shared``)."""
        if show_default:
            default = settings["default"]
            shown = f"{default:g}" if isinstance(default, float) else str(default)
            values = {**(values or {}), "default": shown}
        said = self._help("option", name or _flag_name(flags), key, values)
        return self.parser.add_argument(*flags, help=said, **settings)

    def argument(
        self, name: str, *, key: str | None = None, values: dict | None = None, **settings
    ) -> argparse.Action:
        """A positional argument, its help ``help.KEY.argument.NAME`` (``_`` read as ``-``)."""
        said = self._help("argument", name.replace("_", "-"), key, values)
        return self.parser.add_argument(name, help=said, **settings)

    def flag(self, *flags: str, key: str | None = None) -> argparse.Action:
        """An on/off option."""
        return self.option(*flags, key=key, action="store_true")

    def unset(self, defaults, flag: str, type_, *, values: dict | None = None, **settings):
        """An option whose default is None, so that only what the user typed overrides what
        fills in the rest (a checkpoint, --quick); its help shows ``defaults``' field of the
        same name."""
        field = flag.lstrip("-").replace("-", "_")
        said = self._help("option", flag.lstrip("-"), None, values)
        default = getattr(defaults, field)
        if default is not None:
            said = help_text("help.common.with-default", help=said, default=str(default))
        self.parser.add_argument(flag, type=type_, default=None, dest=field, help=said, **settings)

    def switches(self, *flags: str) -> None:
        """On/off options that exclude each other: argparse refuses two of them."""
        group = self.one_of()
        for flag in flags:
            group.flag(flag)

    def one_of(self, *, required: bool = False) -> Options:
        """A group of options of which at most one (``required``: exactly one) may be given."""
        return Options(self.parser.add_mutually_exclusive_group(required=required), self.key)

    def group(self, title_id: str) -> Options:
        """Options listed under a heading of their own (``help.group.…``)."""
        return Options(self.parser.add_argument_group(help_text(title_id)), self.key)

    # --- the options several commands share (their texts: help.common.option.…) -------------
    def model(self, *, nonfinite: bool = True) -> None:
        """--model, and --allow-nonfinite unless ``nonfinite`` is False."""
        self.option("--model", "-m", key="common", default=None)
        if nonfinite:
            self.nonfinite()

    def nonfinite(self) -> None:
        self.flag("--allow-nonfinite", key="common")

    def lang(self) -> None:
        self.option("--lang", key="common", choices=LANGS, default=None)

    def chat(self) -> None:
        self.flag("--chat", key="common")

    def ablate(self) -> None:
        self.option("--ablate", key="common", action="append", default=None, metavar="SPEC")

    def sampling(self, *, seed: bool = True) -> None:
        """The sampling controls; ``seed=False`` for a command that never draws a token."""
        group = self.group("help.group.sampling")
        group.option("--temperature", "-t", key="common", type=temperature_value, default=1.0)
        group.option("--top-k", key="common", type=top_k_value, default=None)
        group.option("--top-p", key="common", type=top_p_value, default=None)
        group.option("--min-p", key="common", type=min_p_value, default=None)
        group.flag("--greedy", key="common")
        if seed:
            group.option("--seed", key="common", type=seed_value, default=None)


class Command(Options):
    """A command's parser: its options, and its subcommands when it has them."""

    def subcommands(self, dest: str, metavar: str) -> Commands:
        return Commands(self.parser.add_subparsers(dest=dest, metavar=metavar), self.key)


class Commands:
    """A parser's subcommands; each one's help texts are under its parent's key."""

    def __init__(self, actions, under: str = ""):
        self.actions = actions  # what add_subparsers returned
        self.under = under

    def add(self, name: str, run: Callable[[argparse.Namespace], int] | None = None) -> Command:
        """The parser of subcommand ``name``, its help and description from the catalog; it
        runs ``run``, or prints its help (a command whose subcommands do the work)."""
        key = f"{self.under}.{name}" if self.under else name
        parser = self.actions.add_parser(
            name,
            help=help_text(help_id(key, "summary")),
            description=help_text(help_id(key, "description")),
        )
        parser.set_defaults(run=run or (lambda args: print_help(parser)))
        return Command(parser, key)
