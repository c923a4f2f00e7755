"""What a command shows of a job as it runs: one line per stage as it ends (StageLines), and how far
long work has come, for a user to follow: a stage reports (task, done, total, unit) as it
goes; the command shows it. On a terminal, a Rich progress bar per task with done/total and the time
left; without one (cron, CI logs), a plain line every LINE_EVERY_S at most; nothing when quiet.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable

log = logging.getLogger("talker")
LINE_EVERY_S = 5.0

Meter = Callable[[str, float, float, str], None]  # (task, done, total, unit)


def no_meter(task: str, done: float, total: float, unit: str) -> None:
    """What a stage reports to when no one is watching (tests, the library)."""


def time_left(done: float, total: float, elapsed_s: float) -> float | None:
    """Seconds left at the pace so far (None before there is a pace)."""
    if done <= 0 or elapsed_s <= 0:
        return None
    return max(total - done, 0.0) * elapsed_s / done


class ProgressLines:
    """Plain lines: the first report of a task, then one every LINE_EVERY_S, and its end."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.started: dict[str, float] = {}
        self.last_line: dict[str, float] = {}

    def __call__(self, task: str, done: float, total: float, unit: str) -> None:
        now = self.clock()
        started = self.started.setdefault(task, now)
        finished = done >= total
        if not finished and now - self.last_line.get(task, -1e9) < LINE_EVERY_S:
            return
        self.last_line[task] = now
        left = time_left(done, total, now - started)
        tail = "" if finished or left is None else f", about {left:.0f} s left"
        log.info("%s: %s/%s %s (%d%%)%s", task, f"{done:,.0f}", f"{total:,.0f}", unit,
                 100 * min(done / total, 1.0) if total else 100, tail)
        if finished:
            self.started.pop(task, None)
            self.last_line.pop(task, None)


class ProgressBars:
    """Rich bars on stderr, one per task while it runs."""

    def __init__(self, console):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.bars = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                             TextColumn("{task.fields[unit]}"), TimeRemainingColumn(), console=console, transient=True)
        self.tasks: dict[str, int] = {}

    def __call__(self, task: str, done: float, total: float, unit: str) -> None:
        if task not in self.tasks:
            if not self.tasks:
                self.bars.start()
            self.tasks[task] = self.bars.add_task(task, total=total, unit=unit)
        self.bars.update(self.tasks[task], completed=done, total=total)
        if done >= total:
            self.bars.remove_task(self.tasks.pop(task))
            if not self.tasks:
                self.bars.stop()

    def close(self) -> None:
        if self.tasks:
            self.bars.stop()
            self.tasks.clear()


def meter_for(quiet: bool, console=None) -> Meter:
    """The meter a command shows: bars on a terminal (console given), lines otherwise, none when quiet."""
    if quiet:
        return no_meter
    if console is not None and sys.stderr.isatty():
        return ProgressBars(console)
    return ProgressLines()


def _mib(value: int | None) -> str:
    return "-" if value is None else f"{value / 2**20:.0f} MiB"


class StageLines:
    """One line per stage on stderr: Rich when stderr is a terminal, plain log lines otherwise."""

    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.console = None
        self.status = None
        self._meter = None
        if not quiet and sys.stderr.isatty():
            from rich.console import Console

            self.console = Console(stderr=True)

    def __call__(self, name: str, report) -> None:
        if self.quiet:
            return
        if report is None:
            if self.console is not None:
                self.status = self.console.status(f"{name}…")
                self.status.start()
            return
        if self.status is not None:
            self.status.stop()
            self.status = None
        vram = f", peak VRAM {_mib(report.peak_vram_allocated_bytes)}" if report.peak_vram_allocated_bytes is not None else ""
        cost = "reused from the work cache" if report.details.get("cached") else f"peak RSS {_mib(report.peak_rss_bytes)}{vram}"
        line = f"{name:<10} {report.seconds:7.2f} s  {cost}  [{report.backend}]"
        if self.console is not None:
            self.console.print(f"[green]✓[/green] {line}", highlight=False)
        else:
            log.info("stage %s", line)

    def meter(self, task: str, done: float, total: float, unit: str) -> None:
        """How far a long stage has come: a bar under the stage's spinner on a
        terminal, a plain line every few seconds otherwise, nothing when quiet."""
        if self._meter is None:
            if self.status is not None:  # the bar takes the spinner's place
                self.status.stop()
                self.status = None
            self._meter = meter_for(self.quiet, self.console)
        self._meter(task, done, total, unit)

    def close(self) -> None:
        if self.status is not None:
            self.status.stop()
        if hasattr(self._meter, "close"):
            self._meter.close()
