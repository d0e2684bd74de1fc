"""Running the probes' programs: each in a process group of its own, read until it ends or its deadline,
whichever is first; then whatever is left of its group is killed and its pipes are closed, so nothing it
started (a detached child holding its output included) can make a run last past its deadline."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable

from ..records import record

TYPE_CHECKING = False
if TYPE_CHECKING:  # subprocess and selectors load when a program runs: most runs on a machine without a GPU start none
    import subprocess
    from typing import Generic, TypeVar

    T = TypeVar("T")
else:  # typing's, without importing typing at start-up: Job[...] is written in annotations only

    class Generic:
        def __class_getitem__(cls, _item: object) -> type:
            return cls

    T = None

TICK_S = 0.05  # how often a wait looks up from its pipes or threads: how soon it sees a stop or a deadline
# Once a program has exited, its output is all in its pipes; a child it left may hold them open this long at
# most before the pipes are closed on it (a child still finishing up; a detached one never lets go).
HELD_OPEN_S = 0.5
REAP_S = 1.0  # how long a killed program may take to die before its run ends without its exit status


class Job(Generic[T]):
    """Work on its own daemon thread (a program run, an NVML probe that may hang inside the driver); ``result()``
    waits for it. Lighter to import than concurrent.futures, which a start-up cannot afford: a detect starts a
    handful of jobs at most."""

    def __init__(self, work: Callable[[], T], name: str) -> None:
        self._box: list[T] = []
        self._thread = threading.Thread(target=lambda: self._box.append(work()), name=name, daemon=True)
        self._thread.start()

    def result(self, fallback: Callable[[], T] | None = None) -> T:
        """The work's result; if it raised, ``fallback()``, else RuntimeError (the work catches what it expects)."""
        self.wait()
        if self._box:
            return self._box[0]
        if fallback is not None:
            return fallback()
        raise RuntimeError(f"{self._thread.name} ended without a result")

    def wait(self, within: float | None = None) -> bool:
        """Wait for the work (at most ``within`` seconds); whether it ended."""
        # joined a tick at a time: a signal that lands on another thread still reaches the waiting main thread
        # within a tick, where an endless join would wait on
        end = None if within is None else time.monotonic() + within
        while self._thread.is_alive():
            if end is not None and time.monotonic() >= end:
                return False
            self._thread.join(TICK_S)
        return True


@record(frozen=True)
class ProgramResult:
    """One program run: its output, or why there is none."""

    argv: tuple[str, ...]
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""
    error: str = ""  # "timed out after 5s", "cannot run: ...": the program gave no answer
    warning: str = ""  # something to note about a run that did answer

    @property
    def ok(self) -> bool:
        return not self.error and self.returncode == 0

    @property
    def name(self) -> str:
        return os.path.basename(self.argv[0]) if self.argv else "?"

    def why_not(self) -> str:
        """A one-line reason for a failed run, for a note."""
        if self.error:
            return self.error
        text = (self.stderr.strip() or self.stdout.strip()).splitlines()
        first = text[0].strip() if text else ""
        if self.returncode is not None and self.returncode < 0:
            try:
                status = f"killed by {signal.Signals(-self.returncode).name}"
            except ValueError:
                status = f"killed by signal {-self.returncode}"
        else:
            status = f"exit status {self.returncode}"
        return status + (f": {first}" if first else "")


class Programs:
    """The programs started and not yet finished with, so that ``stop()`` can kill them all (Ctrl-C, SIGTERM)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: dict[int, subprocess.Popen[bytes]] = {}
        self.stopping = threading.Event()

    def launch(self, host_argv: list[str], env: dict[str, str]) -> subprocess.Popen[bytes] | None:
        """The program started, or None once stopping (OSError when it cannot start)."""
        with self._lock:  # so that a stop() cannot fall between a start and its record
            if self.stopping.is_set():
                return None
            import subprocess

            proc = subprocess.Popen(
                host_argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                start_new_session=True,  # a process group of its own, which a kill reaches whole
            )
            self._live[proc.pid] = proc
            return proc

    def end(self, proc: subprocess.Popen[bytes]) -> None:
        """Kill what is left of the program's process group, close its pipes (a detached child that holds them
        is no longer read) and collect its exit status."""
        with self._lock:
            _kill_group(proc.pid)  # before the wait below: until then the group's number cannot be reused
            del self._live[proc.pid]
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        # a program in the kernel's uninterruptible sleep (a wedged driver) dies of the kill only when it wakes
        import subprocess

        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(REAP_S)

    def stop(self) -> None:
        with self._lock:
            self.stopping.set()
            for pid in self._live:
                _kill_group(pid)


def execute(
    argv: tuple[str, ...], host_argv: list[str], env: dict[str, str], timeout: float, programs: Programs
) -> ProgramResult:
    name = os.path.basename(argv[0])
    deadline = time.monotonic() + timeout
    try:
        proc = programs.launch(host_argv, env)
    except OSError as exc:
        return ProgramResult(argv, error=f"cannot run {argv[0]}: {exc.strerror or exc}")
    if proc is None:
        return ProgramResult(argv, error=f"{name} not run: detection is stopping")
    try:
        out, err, how = _collect(proc, deadline, programs.stopping)
    finally:
        programs.end(proc)
    if how == "timeout":
        return ProgramResult(argv, error=f"{name} timed out after {timeout:g}s")
    if how == "stopped":
        return ProgramResult(argv, error=f"{name} was stopped")
    warning = "exited, but a process it left running held its output open" if how == "held" else ""
    return ProgramResult(
        argv, proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), warning=warning
    )


def _collect(proc: subprocess.Popen[bytes], deadline: float, stopping: threading.Event) -> tuple[bytes, bytes, str]:
    """A program's output and how its run ended: "done" (it exited and its pipes reached their end), "held"
    (it exited, but something it left holds its pipes open), "timeout" or "stopped".

    The program is not reaped here, so that its process group can still be killed by its number afterwards.
    communicate() would wait for the end of the output, which a detached child can put off for ever."""
    assert proc.stdout is not None and proc.stderr is not None
    chunks: dict[int, list[bytes]] = {proc.stdout.fileno(): [], proc.stderr.fileno(): []}
    exited_at: float | None = None
    pause = 0.001  # once the pipes have ended, the exit follows at once: look again soon, then less often
    import selectors

    with selectors.DefaultSelector() as sel:
        for fd in chunks:
            sel.register(fd, selectors.EVENT_READ)
        while True:
            now = time.monotonic()
            if exited_at is None and _exited(proc.pid):
                exited_at = now
            if stopping.is_set():
                how = "stopped"
            elif exited_at is not None and not sel.get_map():
                how = "done"
            elif exited_at is not None and (now >= exited_at + HELD_OPEN_S or now >= deadline):
                how = "held"  # it answered in time; what it left running is not waited for
            elif now >= deadline:
                how = "timeout"
            elif not sel.get_map():
                stopping.wait(min(pause, deadline - now))
                pause = min(pause * 2, TICK_S)
                continue
            else:
                for key, _ in sel.select(min(TICK_S, deadline - now)):
                    data = os.read(key.fd, 1 << 16)
                    if data:
                        chunks[key.fd].append(data)
                    else:
                        sel.unregister(key.fd)
                continue
            break
    out, err = (b"".join(chunks[pipe.fileno()]) for pipe in (proc.stdout, proc.stderr))
    return out, err, how


def _exited(pid: int) -> bool:
    """Whether the program has ended, leaving it to be reaped (WNOWAIT)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(OSError):  # ESRCH: the group has ended
        os.killpg(pgid, signal.SIGKILL)
