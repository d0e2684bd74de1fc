"""`dnnresolve install`: carry out a plan's steps, after asking.

Only pip steps run here, each as ``<this python> -m pip ARGS`` from an argument list (never through a
shell), so packages land in the environment dnnresolve runs in. conda, module and manual steps change the
user's own shell or need privileges: they are shown, for the user to run. The first failing step stops
the run. Every pip run has a timeout.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import IO

from .errors import UserError
from .records import field, record
from .steps import Step

PIP_TIMEOUT_S = 3600  # a CUDA framework and its nvidia-* wheels are gigabytes on a slow link
PIP_GRACE_S = 2.0  # how long pip, interrupted by Ctrl-C too, may take to tidy up before it is killed


@record
class InstallOutcome:
    steps: list[Step]
    ran: list[int] = field(default_factory=list)  # indexes of pip steps that succeeded
    for_user: list[int] = field(default_factory=list)  # indexes left for the user's shell
    failed: int | None = None  # index of the step that failed
    failure: str = ""

    @property
    def ok(self) -> bool:
        return self.failed is None


def steps_from_specs(specs: Sequence[str]) -> list[Step]:
    """``pip install SPEC`` for requirements the matrix does not know (nothing to plan for them)."""
    from .specs import InvalidRequirement, parse_requirement

    steps = []
    for spec in specs:
        try:
            parse_requirement(spec)
        except InvalidRequirement as exc:
            raise UserError(f"{spec!r} is not a requirement: {exc}") from None
        steps.append(Step.pip_install(spec, description=f"install {spec} with pip"))
    return steps


def unchecked_steps(lines: Sequence[tuple[str, str]]) -> list[Step]:
    """``pip install`` of each line that names no release (``-e .``, a path, a VCS link), as written: pip builds it."""
    import shlex

    return [
        Step.pip_install(*shlex.split(line), description=f"install {line} with pip ({note})") for line, note in lines
    ]


def run_steps(
    steps: Sequence[Step],
    python: str = sys.executable,
    child_stdout: IO[str] | int | None = None,
    on_start: Callable[[int, Step], None] | None = None,
    timeout_s: float = PIP_TIMEOUT_S,
) -> InstallOutcome:
    """Run the pip steps in order with ``python -m pip``; stop at the first failure."""
    outcome = InstallOutcome(list(steps))
    for i, step in enumerate(steps):
        if step.kind != "pip":
            outcome.for_user.append(i)
            continue
        if on_start:
            on_start(i, step)
        argv = [python, "-m", "pip", *step.pip_args()]
        try:
            returncode = _run_pip(argv, child_stdout, timeout_s)
        except subprocess.TimeoutExpired:
            outcome.failed, outcome.failure = i, f"pip did not finish within {timeout_s:g} s"
            return outcome
        except OSError as exc:
            outcome.failed, outcome.failure = i, f"could not start pip: {exc}"
            return outcome
        if returncode != 0:
            outcome.failed, outcome.failure = i, f"pip exited with status {returncode}"
            return outcome
        outcome.ran.append(i)
    return outcome


def _run_pip(argv: list[str], child_stdout: IO[str] | int | None, timeout_s: float) -> int:
    """pip's exit status. pip stays in dnnresolve's process group, so that it keeps the terminal (Ctrl-C reaches
    it and what it started; it can ask for an index's password). On a timeout, an interrupt or SIGTERM (the
    cli's Terminated) pip is killed with every process it started: a build step left behind would go on."""
    proc = subprocess.Popen(argv, stdout=child_stdout)
    try:
        return proc.wait(timeout_s)
    except BaseException as exc:
        started = _descendants(proc.pid)  # before pip ends: then its children belong to init and are lost
        if type(exc) is KeyboardInterrupt:
            # Ctrl-C at a terminal reached pip too: a moment to remove its temporary files, as it does
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(PIP_GRACE_S)
        for pid in [proc.pid, *started]:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        proc.wait()
        raise


def _descendants(pid: int) -> list[int]:
    """The processes ``pid`` started, and theirs, from /proc (none where there is no /proc)."""
    children: dict[int, list[int]] = {}
    with contextlib.suppress(OSError):
        for entry in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    ppid = int(fh.read().rpartition(b")")[2].split()[1])
            except (OSError, ValueError, IndexError):
                continue  # a process that has just ended
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found
