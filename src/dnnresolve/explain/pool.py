"""Work shared with a pool of worker processes (``concurrent.futures``), the results in order: how a big log's byte
ranges are searched in parallel (``segments``). A worker is forked with Ctrl-C held back, prints nothing and ends
with its parent; where no pool can start or it breaks, the work left is done in this process."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext
    from multiprocessing.process import BaseProcess

__all__ = ["MAX_WORKERS", "in_pool", "workers"]

MAX_WORKERS = 8
R = TypeVar("R")


def workers() -> int:
    """Worker processes worth starting: one per usable CPU, up to ``MAX_WORKERS``."""
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, usable))


def in_pool(work: Callable[..., R], tasks: list[tuple[Any, ...]], jobs: int) -> Generator[R, None, None]:
    """``work(*task)`` of each task, in order, run by ``jobs`` worker processes at most ``2 * jobs`` tasks ahead of
    the caller (their results wait in memory). Where no pool can start (no fork, no semaphores) or it breaks (a
    worker killed), the tasks left run in this process. Leaving early (an exception, ``close``) cancels what has
    not started and waits for the tasks running: a fraction of a second for a log's byte ranges."""
    from collections import deque
    from concurrent.futures import Future, ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    done = 0
    try:
        pool = ProcessPoolExecutor(jobs, mp_context=_context(), initializer=_start_worker)
    except (OSError, ImportError, NotImplementedError):
        pool = None
    if pool is not None:
        ahead: deque[Future[R]] = deque()
        try:
            while done < len(tasks):
                while len(ahead) < 2 * jobs and done + len(ahead) < len(tasks):
                    with _signals_held():  # a worker forked here starts with them held (_start_worker)
                        ahead.append(pool.submit(work, *tasks[done + len(ahead)]))
                result = ahead.popleft().result()
                done += 1
                yield result
        except (BrokenProcessPool, OSError):  # OSError: no fork; a read error comes again below, as itself
            pass
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    for task in tasks[done:]:
        yield work(*task)


_STOPS = (signal.SIGINT, signal.SIGTERM)


def _context() -> BaseContext | None:
    """Fork on Linux: a worker is a copy of this process, with nothing to import, and no helper process (a
    fork server, a resource tracker that warns of leaked semaphores when this process is killed) to outlive
    it; elsewhere the platform's default (spawn)."""
    import multiprocessing

    return multiprocessing.get_context("fork") if sys.platform == "linux" else None


@contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM held back from this thread, and from the processes and threads it starts, for the
    duration; one that comes meanwhile is delivered at the end."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _start_worker() -> None:
    """A worker prints nothing and ends with its parent: Ctrl-C (which a terminal sends to the whole process
    group) is the parent's to handle, SIGTERM ends the worker at once, and a thread ends it when the parent
    is gone (killed with no chance to stop its workers)."""
    import multiprocessing
    import threading

    # Its own streams: a fork copies the parent's, whose lock the parent's progress bar thread may have held
    # at that moment (a flush at the worker's exit would wait for ever); what fails is sent to the parent.
    sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a fork copies the parent's handler
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_end_with, args=(parent,), daemon=True).start()


def _end_with(parent: BaseProcess) -> None:
    parent.join()
    os._exit(1)
