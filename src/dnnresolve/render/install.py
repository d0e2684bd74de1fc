"""The `install` command's words: the steps, the question, progress, and how it ended."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .console import emit_json

if TYPE_CHECKING:
    from ..install import InstallOutcome
    from ..steps import Step

_WHERE = {"pip": "runs here", "manual": "by hand"}  # conda, module and shell steps: "run it in your shell"


def step_record(step: Step) -> dict[str, Any]:
    return {
        "kind": step.kind,
        "argv": list(step.argv),
        "shell": step.shell,
        "needs_root": step.needs_root,
        "description": step.description,
    }


def show_steps(steps: Sequence[Step], dry_run: bool, as_json: bool) -> None:
    if as_json:
        if dry_run:
            emit_json({"dry_run": True, "steps": [step_record(s) for s in steps]})
        return
    out = sys.stdout
    out.write("Steps (dry run: nothing is run):\n" if dry_run else "Steps:\n")
    for n, step in enumerate(steps, 1):
        where = _WHERE.get(step.kind, "run it in your shell") + (", needs root" if step.needs_root else "")
        out.write(f"  {n}. [{step.kind}: {where}] {step.shell or step.description}\n")
        if step.description and step.shell:
            out.write(f"     {step.description}\n")
    out.flush()


def ask(question: str) -> bool:
    """Ask on the terminal; only an explicit yes counts."""
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")


def starting(index: int, total: int, step: Step) -> None:
    sys.stderr.write(f"dnnresolve: step {index + 1} of {total}: {step.shell}\n")
    sys.stderr.flush()


def finished(outcome: InstallOutcome, as_json: bool) -> None:
    total = len(outcome.steps)
    if as_json:
        failed = None
        if outcome.failed is not None:
            failed = {"step": outcome.failed + 1, "shell": outcome.steps[outcome.failed].shell, "why": outcome.failure}
        emit_json(
            {
                "dry_run": False,
                "steps": [step_record(s) for s in outcome.steps],
                "ran": [i + 1 for i in outcome.ran],
                "for_your_shell": [i + 1 for i in outcome.for_user],
                "failed": failed,
            }
        )
        return
    if outcome.failed is not None:
        step = outcome.steps[outcome.failed]
        sys.stdout.write(f"step {outcome.failed + 1} of {total} failed ({outcome.failure}): {step.shell}\n")
        rest = total - outcome.failed - 1
        if rest:
            sys.stdout.write(f"stopped; the {rest} step(s) after it were not run\n")
        return
    sys.stdout.write(f"done: {len(outcome.ran)} pip step(s) ran\n")
    if outcome.for_user:
        sys.stdout.write("run these yourself, in your own shell:\n")
        for i in outcome.for_user:
            sys.stdout.write(f"  {outcome.steps[i].shell or outcome.steps[i].description}\n")
