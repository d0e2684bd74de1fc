"""``dnnresolve detect`` (what this machine has) and ``dnnresolve doctor`` (its frameworks checked against it)."""

from __future__ import annotations

import argparse
import sys

from ..errors import UserError
from .common import EXIT_OK, EXIT_PROBLEMS, matrix_for

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..matrix import Matrix


def cmd_detect(args: argparse.Namespace) -> int:
    from ..runtime_flags import start_detection, started

    start_detection(args)
    from ..detect.machine import detect_runtime
    from ..render import detect as render

    try:
        matrix: Matrix | None = matrix_for(args)
    except UserError as exc:
        if args.matrix:
            raise
        sys.stderr.write(f"dnnresolve detect: warning: matrix not loaded ({exc})\n")
        matrix = None
    runtime = detect_runtime(root=args.root, timeout=args.timeout, matrix=matrix, started=started())
    render.emit(runtime, as_json=args.json)
    return EXIT_OK


def cmd_doctor(args: argparse.Namespace) -> int:
    from ..runtime_flags import start_detection, started

    start_detection(args)
    from ..cuda_builds import NO_RUNTIME, build_gaps
    from ..detect.machine import detect_runtime, installed_gpu_code
    from ..doctor import code_findings, code_packages, installed_requirements
    from ..plan import make_plan
    from ..render import plan as render
    from ..solve import solve
    from ..solve.results import Status

    matrix = matrix_for(args)
    runtime = detect_runtime(root=args.root, matrix=matrix, started=started())
    requirements = installed_requirements(runtime, matrix)
    plan = make_plan(solve(requirements, runtime, matrix), runtime, matrix)
    codes, notes = installed_gpu_code(runtime, code_packages(matrix), root=args.root)
    findings = code_findings(codes, runtime)
    # a CPU build matters where there is a GPU to leave unused; a framework that cannot run matters anywhere
    gaps = [g for g in build_gaps(runtime, matrix) if g.kind == NO_RUNTIME or runtime.gpus]
    render.emit_doctor(plan, runtime, as_json=args.json, code=findings, notes=notes, builds=gaps)
    healthy = all(not (r.result.best and r.result.best.failures) for r in plan.requirements) and not plan.conflicts
    healthy = healthy and not any(f.status is Status.FAIL for f in findings) and not gaps
    return EXIT_OK if healthy else EXIT_PROBLEMS
