"""`dnnresolve install`: carry out a plan's steps, after asking.

Only pip steps run here, each as ``<this python> -m pip ARGS`` from an argument list (never through a
shell), so packages land in the environment dnnresolve runs in. conda, module and manual steps change the
user's own shell or need privileges: they are shown, for the user to run. The first failing step stops
the run. Every pip run has a timeout.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import IO

from .errors import UserError
from .records import field, record
from .steps import Step

PIP_TIMEOUT_S = 3600  # a CUDA framework and its nvidia-* wheels are gigabytes on a slow link


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
            done = subprocess.run(argv, stdout=child_stdout, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            outcome.failed, outcome.failure = i, f"pip did not finish within {timeout_s:g} s"
            return outcome
        except OSError as exc:
            outcome.failed, outcome.failure = i, f"could not start pip: {exc}"
            return outcome
        if done.returncode != 0:
            outcome.failed, outcome.failure = i, f"pip exited with status {done.returncode}"
            return outcome
        outcome.ran.append(i)
    return outcome
