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
