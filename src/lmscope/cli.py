"""The ``lmscope`` command. Thin: parse arguments, call the library, print.

Each subcommand lives in ``lmscope.commands.<name>`` and exposes ``register(commands)``,
which adds its parser, ``commands.add(name, run)`` (``lmscope.commands.parsers``: its help
texts' catalog ids follow from its name), ``run`` a ``function(args) -> int``. User mistakes
raise LmscopeError and are printed as one line (exit 2), never as a traceback, rendered from
the catalog in the language asked for (--lang, $LMSCOPE_LANG, the system's locale: en, zh or
the pseudo-language), as are the option parser's (``Parser``) and every --help (its texts are
catalog ids, ``lmscope.i18n``; argparse's own words ``commands.parser_words``). An error of the
system (a file that cannot be read) is one line too: the catalog's words with the system's
reason as a value.
"""

from __future__ import annotations

import argparse
import contextvars
import importlib
import os
import sys

from lmscope import __version__, i18n
from lmscope.errors import LmscopeError

COMMAND_MODULES = (
    "explain",
    "generate",
    "train",
    "sample",
    "lens",
    "ablate",
    "compare",
    "serve",
    "export",
    "minrnn",
    "lab",
    "race",
    "neurons",
    "circuits",
    "models",
)
SIGPIPE_STATUS = 141  # what a shell reports for a writer that a closed pipe stopped (128 + 13)


# argparse's words (never translated by it) for a required argument left out
REQUIRED = "the following arguments are required"


class Parser(argparse.ArgumentParser):
    """argparse's parser, its error line and --help in the language asked for: in Chinese the
    error's message (``parser_words``) and its label, the usage block's heading (its option
    names as typed), argparse's headings and -h's help (``parser_words``); the help's own
    texts are catalog ids, rendered when the parser is built. English is argparse's own, byte
    for byte, but for words a command does not take: the command refuses them itself, naming the
    option meant (``parser_words.unrecognized``). Subcommands' parsers are of this class too
    (``add_subparsers`` makes its parsers of the class it is called on)."""

    def format_help(self) -> str:
        return self._in_lang(super().format_help)

    def format_usage(self) -> str:  # above an error line too: 用法：under a Chinese error
        return self._in_lang(super().format_usage)

    def _in_lang(self, format_text) -> str:
        from lmscope.commands.common import current_lang

        if current_lang() == "en":
            return format_text()
        from lmscope.commands.parser_words import help_in

        english = self.formatter_class
        self.formatter_class = help_in(english, current_lang())
        try:
            return format_text()
        finally:
            self.formatter_class = english

    def parse_known_args(self, args=None, namespace=None):
        # words a command does not take are refused by that command, under its own usage, with
        # the option meant (argparse refused them at the top, as lmscope's, naming none)
        self._words = list(sys.argv[1:] if args is None else args)
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            from lmscope.commands.parser_words import unrecognized

            self.error(unrecognized(self, extras))
        return parsed, extras

    def _unknown_options(self) -> list[str]:
        """The long options typed (before ``--``) that this parser takes neither whole nor as
        the one option they begin (argparse's abbreviations)."""
        longs = [o for o in self._option_string_actions if o.startswith("--")]
        words = getattr(self, "_words", [])
        typed = words[: words.index("--")] if "--" in words else words
        names = [w.split("=", 1)[0] for w in typed if w.startswith("--") and len(w) > 2]
        return [n for n in names if n not in longs and sum(o.startswith(n) for o in longs) != 1]

    def error(self, message: str):
        from lmscope.commands.common import current_lang

        # argparse finds a missing required option before a mistyped one: the mistyped one is
        # more often why the other is missing (--answer typed for --token)
        if message.startswith(REQUIRED) and not self._subparsers:
            unknown = self._unknown_options()
            if unknown:
                from lmscope.commands.parser_words import unrecognized

                message = unrecognized(self, unknown)
        lang = current_lang()
        if lang == "en":
            super().error(message)
        from lmscope.commands.parser_words import parser_message_in

        self.print_usage(sys.stderr)
        said = parser_message_in(message, lang)
        self.exit(2, i18n.text("report.cli.error", prog=self.prog, message=said) + "\n")


def build_parser() -> argparse.ArgumentParser:
    from lmscope.commands.common import LANGS
    from lmscope.commands.parsers import Commands

    parser = Parser(
        prog="lmscope",
        description=i18n.text("help.lmscope.description"),
        epilog=i18n.text("help.lmscope.epilog"),
    )
    parser.add_argument("--version", action="version", version=f"lmscope {__version__}")
    # 'lmscope --lang zh COMMAND ...' as well as 'lmscope COMMAND --lang zh': unlisted, so the
    # help stays as it was; the command's own --lang wins (``main``)
    parser.add_argument("--lang", dest="lang_before_command", choices=LANGS, help=argparse.SUPPRESS)
    sub = Commands(parser.add_subparsers(dest="command", metavar="COMMAND"))
    for name in COMMAND_MODULES:
        importlib.import_module(f"lmscope.commands.{name}").register(sub)
    return parser


def help_ids() -> set[str]:
    """Every catalog id the parsers' help texts are said from, made from the commands' names
    (``lmscope.commands.parsers``): for the catalog's completeness test."""
    from lmscope.commands.parsers import recording

    with recording() as ids:
        build_parser()
    return ids


def main(argv: list[str] | None = None) -> int:
    """Run one command line; the language it chose ends with it (a copy of the context), so a
    caller in the same thread (a notebook, a test) keeps its own."""
    return contextvars.copy_context().run(_main, argv)


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    _use_lang_asked(argv)  # for the errors of parsing; the parsed --lang decides again below
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except LmscopeError as err:  # an option's type function refused its value (OptionError)
        _print_error(err)
        return 2
    if getattr(args, "lang", None) is None and args.lang_before_command:
        args.lang = args.lang_before_command
    if not getattr(args, "run", None):
        parser.print_help()
        return 0
    _pipe_errors_reach_main()
    try:
        from lmscope.commands.common import use_lang

        use_lang(args)  # the language errors are said in, for every command (--lang, $LMSCOPE_LANG)
        code = args.run(args) or 0
        sys.stdout.flush()  # here, so a closed pipe is reported below, not at interpreter exit
        return code
    except BrokenPipeError:
        return _reader_went_away()
    except LmscopeError as err:
        from lmscope.engine.advice import in_front_words  # light: no torch

        # the engine's advice in the command line's words (--truncate for truncate=...)
        _print_error(in_front_words(err, "cli", vars(args)))
        return 2
    except OSError as err:  # the system refused (a file, a folder, a socket): its reason
        _print_error(system_error(err))
        return 2
    except (ValueError, ArithmeticError) as err:
        if not getattr(args, "allow_nonfinite", False):
            raise
        # weights with NaN or infinity, loaded on purpose: a view that computes with its
        # numbers may not be able to; one line, naming the view that shows NaN as NaN
        detail = str(err).splitlines()[0][:80] if str(err) else type(err).__name__
        _print_error(LmscopeError("report.cli.nonfinite", detail=detail))
        return 2
    except KeyboardInterrupt:
        print(i18n.text("report.cli.interrupted"), file=sys.stderr)
        return 130


def _use_lang_asked(argv: list[str]) -> None:
    """The language a command line asks for, from now on the one errors are said in, even
    when the line does not parse: its last ``--lang en|zh|pseudo`` (or ``--lang=zh``) before ``--``,
    else $LMSCOPE_LANG, else the system's locale (``LANG=zh_CN.UTF-8``), else English (an
    unknown $LMSCOPE_LANG is refused once the line parses, in English)."""
    from lmscope.commands.common import LANGS, use_lang

    asked = None
    words = iter(argv)
    for word in words:
        if word == "--":
            break
        if word == "--lang":
            value = next(words, None)
        elif word.startswith("--lang="):
            value = word.removeprefix("--lang=")
        else:
            continue
        if value in LANGS:
            asked = value
    try:
        use_lang(argparse.Namespace(lang=asked))
    except LmscopeError:
        use_lang(argparse.Namespace(lang="en"))


def _print_error(error: LmscopeError) -> None:
    """``lmscope: error: MESSAGE`` on stderr, rendered in the language asked for."""
    print(i18n.text("report.cli.error", prog="lmscope", message=error), file=sys.stderr)


def system_error(err: OSError) -> LmscopeError:
    """An error of the system as one line: the file it names and the system's reason."""
    reason = err.strerror or type(err).__name__
    if err.filename is not None:
        return LmscopeError("error.cli.system-file", file=str(err.filename), why=reason)
    return LmscopeError("error.cli.system", why=reason)


def _raise_broken_pipe(console) -> None:
    raise BrokenPipeError


def _pipe_errors_reach_main() -> None:
    """rich's consoles end the process themselves (status 1) when the pipe closes: let them
    raise, so the one handler in ``main`` answers every command the same way."""
    from rich.console import Console

    Console.on_broken_pipe = _raise_broken_pipe


def _reader_went_away() -> int:
    """The reader closed the pipe (``lmscope generate ... | head``): stop quietly, as ``head``
    expects. Output still buffered would fail again when the interpreter flushes it at exit, so
    standard output now goes to the null device."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file descriptor (a test's capture)
        pass
    return SIGPIPE_STATUS


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
