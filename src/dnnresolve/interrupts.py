"""Stopping a command by a signal: Ctrl-C (SIGINT), SIGTERM (a job manager, ``kill``), SIGHUP (the terminal
closed). Each becomes an exception in the main thread, so that the cleanup of whatever is running happens on
the way out: ``finally`` blocks and context managers stop probe programs, pip runs and worker processes.
Python raises KeyboardInterrupt for SIGINT itself; SIGTERM and SIGHUP would end the process on the spot,
leaving behind the programs it started (each probe program is in a session of its own)."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP. A KeyboardInterrupt, so that the cleanup written for Ctrl-C runs for these too."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextmanager
def stop_signals_raise() -> Iterator[None]:
    """While the block runs, SIGTERM and SIGHUP raise Terminated in the main thread. A signal the parent set to
    be ignored (nohup) stays ignored; outside the main thread nothing changes; the old handlers come back after."""
    raised: list[int] = []

    def handler(signum: int, frame: FrameType | None) -> None:
        if not raised:  # the first one stops the command; more while it cleans up would cut the cleanup short
            raised.append(signum)
            raise Terminated(signum)

    saved: dict[int, Any] = {}
    for name in ("SIGTERM", "SIGHUP"):
        signum = getattr(signal, name, None)  # Windows has no SIGHUP
        if signum is None or signal.getsignal(signum) is not signal.SIG_DFL:
            continue
        try:
            saved[signum] = signal.signal(signum, handler)
        except ValueError:  # not the main thread (a test calling main() from a thread of its own)
            break
    try:
        yield
    finally:
        for signum, previous in saved.items():
            signal.signal(signum, previous)


def stopped_by(exc: KeyboardInterrupt) -> tuple[int, str]:
    """The exit status a shell gives a command that a signal ended (128 + its number: 130 for Ctrl-C, 143 for
    SIGTERM) and the one line to say so."""
    if isinstance(exc, Terminated):
        return 128 + exc.signum, f"dnnresolve: terminated by {signal.Signals(exc.signum).name}"
    return 128 + signal.SIGINT, "dnnresolve: interrupted"
