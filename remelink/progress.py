"""Progress reporters for the CLI (SPEC §9.4): rich bars on a terminal, plain milestone lines
when stderr is not a terminal (cron). Both write to stderr: stdout carries only the result.

Under cron rich would print nothing until the end (no intermediate progress, dependencies.md
§4), so the plain reporter is ours: one line when a phase starts, one every `every` items, one
when it ends. Rich is imported only when a terminal is attached.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO


class PlainReporter:
    """One line per phase start, every `every` items and at the end: cron mail stays short."""

    def __init__(self, stream: TextIO | None = None, every: int = 25) -> None:
        self.stream = stream or sys.stderr
        self.every = every
        self.totals: dict[str, int] = {}
        self.done: dict[str, int] = {}
        self.started = time.monotonic()

    def _line(self, text: str) -> None:
        elapsed = time.monotonic() - self.started
        self.stream.write(f"[{elapsed:6.1f}s] {text}\n")
        self.stream.flush()

    def start(self, phase: str, total: int) -> None:
        self.totals[phase] = total
        self.done[phase] = 0
        if total:
            self._line(f"{phase}: {total} to do")

    def advance(self, phase: str, label: str = "") -> None:
        self.done[phase] = self.done.get(phase, 0) + 1
        n, total = self.done[phase], self.totals.get(phase, 0)
        if n == total or n % self.every == 0:
            self._line(f"{phase}: {n}/{total}" + (f" ({label})" if label and n == total else ""))

    def note(self, message: str) -> None:
        self._line(message)


class RichReporter:
    """Transient progress bars on a terminal (one per phase), notes printed above them."""

    def __init__(self, console: Any = None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.console = console or Console(stderr=True)
        self.progress = Progress(TextColumn("{task.description:<10}"), BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(),
                                 TextColumn("{task.fields[label]}", style="dim"),
                                 console=self.console, transient=True)
        self.tasks: dict[str, Any] = {}
        self.progress.start()

    def start(self, phase: str, total: int) -> None:
        if total:
            self.tasks[phase] = self.progress.add_task(phase, total=total, label="")

    def advance(self, phase: str, label: str = "") -> None:
        task = self.tasks.get(phase)
        if task is not None:
            self.progress.update(task, advance=1, label=label[:60])

    def note(self, message: str) -> None:
        self.progress.console.print(message, markup=False, highlight=False)

    def close(self) -> None:
        self.progress.stop()


def make_reporter(quiet: bool = False, stream: TextIO | None = None) -> Any:
    """Silent with --quiet; bars when `stream` (stderr) is a terminal; plain lines otherwise."""
    stream = stream or sys.stderr
    if quiet:
        from remelink.dream.context import SilentReporter

        return SilentReporter()
    if stream.isatty():
        return RichReporter()
    return PlainReporter(stream)
