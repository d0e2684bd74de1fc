"""``dnnresolve fleet collect`` (a Slurm cluster's node profiles) and the ``--fleet DIR`` answers of plan and check."""

from __future__ import annotations

import argparse

from ..errors import UserError
from .common import EXIT_OK, EXIT_PROBLEMS, matrix_for

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..machine import Runtime
    from ..matrix import Matrix
    from ..plan import Plan
    from ..specs import Requirement


def fleet_answer(
    args: argparse.Namespace,
    label: str,
    requirements: list[Requirement] | Callable[[Runtime], Plan],
    matrix: Matrix | None = None,
) -> int:
    """``plan`` / ``check`` with ``--fleet DIR``: the requirements (or a planner of the lines, ``check``'s) planned
    once per group of alike nodes."""
    from ..fleet.groups import answer
    from ..fleet.store import load_fleet
    from ..plan import make_plan
    from ..render import fleet as render
    from ..solve import solve

    machine = [f"--{k.replace('_', '-')}" for k in _MACHINE_FLAGS if getattr(args, k, None)]
    if machine or getattr(args, "verify", False) or args.format != "text":
        given = (machine or ["--verify" if getattr(args, "verify", False) else f"--format {args.format}"])[0]
        raise UserError(f"--fleet answers for the fleet's own nodes: {given} cannot be given with it")
    fleet = load_fleet(args.fleet)
    if callable(requirements):
        plan_for = requirements
    else:
        assert matrix is not None
        reqs, table = requirements, matrix

        def plan_for(rt: Runtime) -> Plan:
            return make_plan(solve(reqs, rt, table), rt, table)

    result = answer(label, fleet.nodes, plan_for)
    render.emit_answer(result, fleet, as_json=args.json)
    return EXIT_OK if result.all_ready else EXIT_PROBLEMS


_MACHINE_FLAGS = ("target", "driver", "cuda", "cudnn", "gpu", "python", "os", "root", "no_detect")


def cmd_fleet(args: argparse.Namespace) -> int:
    import shlex

    from ..fleet.collect import collect
    from ..render import fleet as render
    from ..render.progress import count_progress

    try:
        command = shlex.split(args.node_command) if args.node_command is not None else None
    except ValueError as exc:
        raise UserError(f"--command {args.node_command!r}: {exc}") from None
    if command == []:
        raise UserError("--command: empty")
    if args.timeout <= 0 or args.parallel < 1:
        raise UserError("--timeout must be above 0 and --parallel at least 1")
    matrix = matrix_for(args) if args.no_jobs else None
    with count_progress("collecting node profiles", enabled=not args.json, min_items=1) as progress:
        collected = collect(
            args.out,
            partitions=args.partition,
            nodes=args.nodes,
            timeout=args.timeout,
            command=command,
            no_jobs=args.no_jobs,
            parallel=args.parallel,
            matrix=matrix,
            on_progress=progress,
        )
    render.emit_collected(collected, as_json=args.json)
    return EXIT_OK if collected.complete else EXIT_PROBLEMS
