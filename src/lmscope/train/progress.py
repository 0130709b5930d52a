"""What a person sees while a model trains: a rich progress bar, or plain log lines.

The bar shows iteration, loss, tokens per second and the time left; evaluations and samples
are printed above it. Without a terminal (CI, pipes, tests) there is no bar and a line is
logged every ``log_every`` iterations instead (``log_every`` 0: none; evaluations still are).
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from lmscope.i18n import text


class Reporter:
    def __init__(
        self,
        total: int,
        start: int,
        *,
        bar: bool | None = None,
        log: Callable[[str], None] | None = None,
        log_every: int = 50,
    ):
        self.total, self.log_every = total, log_every
        self.console = Console(stderr=True)
        show_bar = self.console.is_terminal if bar is None else bar
        self._log = log or self._print
        self.progress = None
        if show_bar:
            self.progress = Progress(
                TextColumn("[bold]" + text("report.training.bar-train")),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn(text("report.training.bar-loss", loss="{task.fields[loss]}")),
                TextColumn(text("report.training.bar-speed", speed="{task.fields[speed]}")),
                TimeElapsedColumn(),
                TextColumn(text("report.training.bar-eta")),
                TimeRemainingColumn(),
                console=self.console,
            )
            self.task = self.progress.add_task(
                "train", total=total, completed=start, loss="-", speed="-"
            )
            self.progress.start()

    def _print(self, line: str) -> None:
        if self.progress is not None:
            self.progress.console.print(line, markup=False, highlight=False)
        else:
            print(line, file=sys.stderr, flush=True)

    def message(self, line: str) -> None:
        self._log(line)

    def step(self, iteration: int, loss: float, lr: float, tokens_per_s: float) -> None:
        if self.progress is not None:
            self.progress.update(
                self.task, completed=iteration, loss=f"{loss:.4f}", speed=f"{tokens_per_s:,.0f}"
            )
        elif self.log_every and (iteration % self.log_every == 0 or iteration == self.total):
            self._log(
                text(
                    "report.training.step",
                    i=str(iteration),
                    total=str(self.total),
                    loss=f"{loss:.4f}",
                    lr=f"{lr:.2e}",
                    speed=f"{tokens_per_s:,.0f}",
                )
            )

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
