"""``dnnresolve plan`` (what requirements need and the steps to get there) and ``dnnresolve install`` (those
steps carried out)."""

from __future__ import annotations

import argparse
import sys

from ..errors import UserError
from .common import EXIT_OK, EXIT_PROBLEMS, matrix_for, write_output

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..matrix import Matrix
    from ..plan import Plan
    from ..specs import Requirement


def _specs_from_args(args: argparse.Namespace) -> tuple[list[Requirement], Matrix]:
    """The SPECs parsed, and the matrix (loaded once they parse); for ``plan``, each one's package must be in it
    (``plan --fleet``: each node's machine is its profile, so no line is judged against this one)."""
    from ..specs import InvalidRequirement, parse_requirement

    requirements = []
    for spec in args.specs:
        try:
            requirements.append(parse_requirement(spec))
        except InvalidRequirement as exc:
            raise UserError(f"not a requirement: {spec!r} ({exc})") from exc
    matrix = matrix_for(args)
    _refuse_unknown(args, requirements, matrix)
    return requirements, matrix


def _refuse_unknown(args: argparse.Namespace, requirements: list[Requirement], matrix: Matrix) -> None:
    if args.command == "plan":  # (install runs plain pip for what the matrix does not know)
        from ..suggest import unknown_packages

        asked = [r.name for r in requirements if matrix.cuda_name(r.name) is None]  # (those answer too)
        refused = unknown_packages(asked, matrix.packages())
        if refused:
            raise UserError(refused)


def _plan_from_args(args: argparse.Namespace) -> Plan:
    from ..artifact import parse_line
    from ..detect.pipconf import pip_context
    from ..plan import make_plan
    from ..runtime_flags import runtime_for
    from ..solve import artifact_of, solve
    from ..specs import InvalidRequirement

    lines: list[tuple[str, Requirement | str]] = []
    for spec in args.specs:
        try:
            lines.append((spec, parse_line(spec)))
        except InvalidRequirement as exc:
            raise UserError(f"not a requirement: {spec!r} ({exc})") from exc
    matrix = matrix_for(args)
    runtime = runtime_for(args, matrix)
    args.runtime = runtime
    # what pip skips on this target (a marker) or builds from source (a path, VCS, a URL) is a note, not a plan
    requirements: list[Requirement] = []
    notes: list[tuple[str, str]] = []
    # the indexes the target's pip is configured with choose the build it installs (this machine's where unknown)
    index_urls = (runtime.pip if runtime.pip is not None else pip_context()).index.urls
    for spec, line in lines:
        if isinstance(line, str):
            notes.append((spec, line))
            continue
        art = artifact_of(line, runtime, matrix, index_urls)
        if not art.checkable:
            notes.append((spec, art.skipped or art.unchecked))
        else:
            requirements.append(line)
    _refuse_unknown(args, requirements, matrix)
    plan = make_plan(solve(requirements, runtime, matrix, index_urls), runtime, matrix)
    plan.notes = notes
    return plan


def cmd_plan(args: argparse.Namespace) -> int:
    from ..render import plan as render
    from ..runtime_flags import start_detection

    start_detection(args)

    if args.fleet:
        from .fleet import fleet_answer

        return fleet_answer(args, " ".join(args.specs), *_specs_from_args(args))
    plan = _plan_from_args(args)
    if args.verify:
        from ..verify import verify_plan

        verify_plan(plan, args.runtime)
    if args.format == "dockerfile" and not args.json:
        from ..render.plan_dockerfile import to_dockerfile

        text, runs = to_dockerfile(plan, args.runtime, matrix_for(args))
        write_output(text, args.output)
        return EXIT_OK if runs else EXIT_PROBLEMS
    if args.format in ("requirements", "conda", "sh") and not args.json:
        from ..render import plan_files

        writers = {"requirements": plan_files.to_requirements, "conda": plan_files.to_environment_yml}
        write_output(writers.get(args.format, render.to_sh)(plan), args.output)
        return EXIT_OK if plan.satisfied else EXIT_PROBLEMS
    render.emit(plan, args.runtime, as_json=args.json, fmt=args.format)
    return EXIT_OK if plan.satisfied else EXIT_PROBLEMS


def cmd_install(args: argparse.Namespace) -> int:
    from ..install import run_steps, steps_from_specs, unchecked_steps
    from ..render import install as render

    plan = _plan_from_args(args)
    steps = [s for rp in plan.requirements if rp.options for s in rp.options[0].steps]
    unplanned = [str(rp.result.requirement) for rp in plan.requirements if not rp.result.known]
    steps += steps_from_specs(unplanned)  # packages the matrix does not know: plain pip, unchecked
    steps += unchecked_steps([(line, note) for line, note in plan.notes if not note.startswith("skipped")])
    render.show_steps(steps, dry_run=args.dry_run, as_json=args.json)
    if args.dry_run:
        return EXIT_OK
    runnable = sum(1 for s in steps if s.kind == "pip")
    if runnable and not args.yes:
        if not sys.stdin.isatty():
            raise UserError("refusing to install without confirmation: no terminal to ask on (pass --yes)")
        if not render.ask(f"Run {runnable} pip step(s) with {sys.executable}?"):
            raise UserError("cancelled; nothing was installed")
    outcome = run_steps(
        steps,
        child_stdout=sys.stderr if args.json else None,
        on_start=lambda i, step: render.starting(i, len(steps), step),
    )
    render.finished(outcome, as_json=args.json)
    return EXIT_OK if outcome.ok else EXIT_PROBLEMS
