"""``dnnresolve check``: requirement files vetted against a target machine."""

from __future__ import annotations

import argparse

from .common import matrix_for


def cmd_check(args: argparse.Namespace) -> int:
    from ..check import check_sources
    from ..check_target import check_target
    from ..render import check as render
    from ..render.progress import count_progress
    from ..sources import pipconfig as pip_index
    from ..sources import read_paths

    with count_progress("reading requirement files", enabled=not args.json and args.format == "text") as progress:
        sources = read_paths(args.files or ["."], on_progress=progress, stage=args.stage or "")
    pip_index.apply(sources, pip_index.pip_context())  # what `pip install -r` here reads besides the file
    matrix = matrix_for(args)
    if args.fleet:
        from ..fleet.requirements import framework_requirements, plan_lines
        from .fleet import fleet_answer

        lines = framework_requirements(sources, matrix)
        return fleet_answer(args, lines.label, lambda rt: plan_lines(lines, rt, matrix))
    report = check_sources(sources, check_target(args, sources, matrix), matrix)
    render.emit(report, as_json=args.json, fmt=args.format)
    return report.exit_status(args.strict)
