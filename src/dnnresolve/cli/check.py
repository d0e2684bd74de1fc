"""``dnnresolve check``: requirement files vetted against a target machine."""

from __future__ import annotations

import argparse

from .common import matrix_for


def cmd_check(args: argparse.Namespace) -> int:
    from ..check import check_sources
    from ..check_target import check_target
    from ..detect.pipconf import pip_context
    from ..render import check as render
    from ..render.progress import count_progress
    from ..sources import pipconfig as pip_index
    from ..sources import read_paths

    with count_progress("reading requirement files", enabled=not args.json and args.format == "text") as progress:
        sources = read_paths(args.files or ["."], on_progress=progress, stage=args.stage or "")
    matrix = matrix_for(args)
    if args.fleet:
        from ..fleet.requirements import framework_requirements, plan_lines
        from .fleet import fleet_answer

        lines = framework_requirements(sources, matrix)
        return fleet_answer(args, lines.label, lambda rt: plan_lines(lines, rt, matrix))
    target = check_target(args, sources, matrix)
    # what `pip install -r` reads besides the file: the target's pip configuration where its profile records it
    recorded = target.pip if target is not None else None
    pip = recorded if recorded is not None else pip_context()
    pip_index.apply(sources, pip)
    report = check_sources(sources, target, matrix)
    if recorded is not None and pip.origins:
        report.notes.append(f"pip's configuration on the target ({args.target}): {pip.said()}")
    elif getattr(args, "target", None) and pip.origins:
        report.notes.append(
            f"{args.target} does not record the target's pip configuration (written by an older dnnresolve); "
            f"this machine's is used: {pip.said()}"
        )
    render.emit(report, as_json=args.json, fmt=args.format)
    return report.exit_status(args.strict)
