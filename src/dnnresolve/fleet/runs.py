"""Running Slurm's client programs (sinfo, srun), each with a deadline, all stoppable at once.

An srun that is killed outright leaves its job running on the node until the job's time limit; one that gets
SIGTERM has Slurm cancel its step and end the job, once it is far enough to have set up its signal handlers. So
a program past its deadline, or every one running when the command is stopped (Ctrl-C, SIGTERM), gets SIGTERM
first, SIGKILL only after a grace, and then its ``cancel`` command (``scancel --name=...``) for a job that is
left anyway."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Sequence

from ..detect.programs import ProgramResult

GRACE_S = 3.0  # how long srun may take to cancel its step after SIGTERM
CANCEL_TIMEOUT_S = 10.0


class SlurmRuns:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: dict[subprocess.Popen[bytes], Sequence[str]] = {}  # each program, and how to cancel its job
        self._stopping = False

    def run(
        self, argv: Sequence[str], env: dict[str, str], timeout: float, cancel: Sequence[str] = ()
    ) -> ProgramResult:
        """``argv``'s output, or why there is none; ``cancel`` runs once it had to be ended."""
        name = os.path.basename(argv[0])
        with self._lock:  # so that a stop() cannot fall between a start and its record
            if self._stopping:
                return ProgramResult(tuple(argv), error=f"{name} not run: stopping")
            try:
                proc = subprocess.Popen(
                    list(argv),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=env,
                    start_new_session=True,  # a process group of its own: a signal reaches it whole, not via the tty
                )
            except OSError as exc:
                return ProgramResult(tuple(argv), error=f"cannot run {argv[0]}: {exc.strerror or exc}")
            self._live[proc] = cancel
        try:
            try:
                out, err = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                _end({proc: cancel}, env)
                return ProgramResult(tuple(argv), error=f"{name} timed out after {timeout:g}s")
        finally:
            with self._lock:
                self._live.pop(proc, None)
            for pipe in (proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()
        if self._stopping:
            return ProgramResult(tuple(argv), error=f"{name} was stopped")
        return ProgramResult(
            tuple(argv), proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
        )

    def stop(self, env: dict[str, str]) -> None:
        """End every program running now (their jobs cancelled); none starts after."""
        with self._lock:
            self._stopping = True
            live = dict(self._live)
        _end(live, env)


def _end(procs: dict[subprocess.Popen[bytes], Sequence[str]], env: dict[str, str]) -> None:
    """SIGTERM to each program's group, SIGKILL to those left after the grace, then each one's cancel command."""
    for proc in procs:
        _signal(proc, signal.SIGTERM)
    end = time.monotonic() + GRACE_S
    for proc in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(max(0.0, end - time.monotonic()))
    for proc in procs:
        if proc.poll() is None:
            _signal(proc, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(GRACE_S)
    for cancel in procs.values():
        if cancel:  # (what it says does not matter: a job that has ended is no error worth a line)
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                subprocess.run(list(cancel), env=env, timeout=CANCEL_TIMEOUT_S, capture_output=True, check=False)


def _signal(proc: subprocess.Popen[bytes], signum: int) -> None:
    if proc.returncode is not None:  # reaped: its number may be another's by now
        return
    with contextlib.suppress(OSError):  # ESRCH: it has ended
        os.killpg(proc.pid, signum)
