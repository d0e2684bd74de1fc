"""Progress for long work, on a terminal only: nothing extra when output is piped or with --json."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Update = Callable[[int], None]


def _noop(done: int) -> None:
    return None


@contextmanager
def byte_progress(label: str, total: int, enabled: bool) -> Iterator[Update]:
    """A rich progress bar on stderr for ``total`` bytes; a no-op unless ``enabled`` and stderr is a terminal."""
    if not enabled or total <= 0 or not sys.stderr.isatty():
        yield _noop
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    from .console import console

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        console=console(stderr=True),
        transient=True,
    ) as progress:
        task = progress.add_task(label, total=total)

        def update(done: int) -> None:
            progress.update(task, completed=min(done, total))

        yield update


@contextmanager
def count_progress(label: str, enabled: bool, min_items: int = 0) -> Iterator[Callable[[int, int], None]]:
    """A bar of ``done`` out of ``total`` items, drawn once there are many; a no-op off a terminal."""
    if not enabled or not sys.stderr.isatty():
        yield lambda done, total: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from .console import console

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=console(stderr=True),
        transient=True,
    ) as progress:
        task = progress.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            if total >= (min_items or PROGRESS_MIN_ITEMS):
                progress.update(task, completed=done, total=total)

        yield update


PROGRESS_MIN_ITEMS = 50  # fewer files are read before a bar would be worth drawing
