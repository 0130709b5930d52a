"""The command line's parsers, for the tests that read every one of them."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from lmscope.cli import build_parser


def parsers(
    parser: argparse.ArgumentParser | None = None, path: tuple[str, ...] = ("lmscope",)
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """(command words, parser) for the top parser and every subparser under it."""
    parser = parser or build_parser()
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from parsers(sub, (*path, name))
