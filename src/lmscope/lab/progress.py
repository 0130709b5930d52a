"""Progress reporting that the library can call whether or not anyone is watching.

Experiments take a ``Progress``-like object (rich's, from the CLI) or None (tests, the web).
"""

from __future__ import annotations

from collections.abc import Callable

from lmscope import i18n


def stage(progress, label: str, total: int) -> Callable[..., None]:
    """Start one progress bar; return ``advance(detail=None, step=1)`` that moves it by
    ``step`` (0: only say what runs now)."""
    if progress is None:
        return lambda detail=None, step=1: None
    task = progress.add_task(label, total=max(1, total))

    def advance(detail: str | None = None, step: int = 1) -> None:
        desc = f"{label} [dim]{detail}[/]" if detail else label
        progress.update(task, advance=step, description=desc)

    return advance


def loss_bar(progress, label: str, total: float) -> Callable[[float, float], None] | None:
    """One model's training bar (None without progress): ``show(done, loss)`` moves it to
    ``done`` (seconds or steps) and shows the last loss beside the label."""
    if progress is None:
        return None
    task = progress.add_task(label, total=total)

    def show(done: float, loss: float) -> None:
        progress.update(
            task,
            completed=done,
            description=f"{label} [dim]{i18n.text('lab.progress.loss', loss=f'{loss:.3f}')}[/]",
        )

    return show


def make_progress(
    console=None,
    *,
    label: str = "{task.description}",
    note: bool = False,
    transient: bool = False,
    enabled: bool = True,
):
    """The bar the CLI shows: what runs now, how far, a task's ``note`` field when asked, and
    for how long."""
    from rich.progress import (  # here: rich.progress adds 11 ms to lmscope --help
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    columns = [TextColumn(label), BarColumn(), MofNCompleteColumn()]
    if note:
        columns.append(TextColumn("{task.fields[note]}"))
    return Progress(
        *columns,
        TimeElapsedColumn(),
        console=console,
        transient=transient,
        disable=not enabled,
    )
