"""The two test tiers and the one meaning of ``slow``.

``python -m pytest -m "not slow"`` is the quick tier: every layer, in under a minute.
``slow`` marks every test that loads a real pretrained model, starts a browser, a server or a
subprocess, trains more than a few steps, or runs a load, burst or fuzz harness. A test is
slow when it carries ``@pytest.mark.slow`` or ``@pytest.mark.browser``, or when a fixture it
uses (directly or through others) is marked with ``slow_work``; and a quick test that starts a
subprocess fails, naming the marker it lacks (``refuse_subprocesses``)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from typing import TypeVar

import pytest

F = TypeVar("F", bound=Callable)


def slow_work(fixture: F) -> F:
    """Under ``@pytest.fixture``: the fixture does slow work (a real model, a browser, a
    server, training), so every test that uses it is in the slow tier."""
    fixture.slow_work = True  # type: ignore[attr-defined]
    return fixture


def is_slow(item: pytest.Item) -> bool:
    if item.get_closest_marker("slow") or item.get_closest_marker("browser"):
        return True
    fixtures = getattr(item, "_fixtureinfo", None)
    definitions = fixtures.name2fixturedefs.values() if fixtures else ()
    return any(getattr(d.func, "slow_work", False) for defs in definitions for d in defs)


def mark_slow_items(items: list[pytest.Item]) -> None:
    for item in items:
        if is_slow(item) and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)


def refuse_subprocesses(item: pytest.Item, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a quick test, starting a subprocess fails the test."""
    if item.get_closest_marker("slow"):
        return

    def refuse(self, *args, **kwargs):
        pytest.fail(f"{item.nodeid} starts a subprocess: mark it @pytest.mark.slow")

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
