"""What ``check FILE --fleet DIR`` plans on each group of nodes: the framework lines of the files that name a
framework the matrix knows, each distinct one once, in file order. No I/O (the files are read already).

A pip line is planned as ``plan`` plans it. A conda line of an environment file is judged by ``check``'s model
(``check_conda.pin_result``: the channel's own builds, the build its environment's CUDA pin selects, the one conda
picks for the node's driver), on the new environment the file describes on that node (``check.file_environment``),
and its options say conda's command for the build (``plan_conda.as_conda_line``)."""

from __future__ import annotations

from collections.abc import Sequence

from ..check_pairs import Pin
from ..errors import UserError
from ..machine import Runtime
from ..matrix import Matrix
from ..pkgname import canonicalize_name
from ..plan import Plan, RequirementPlan
from ..records import field, record, replace
from ..sources.interface import LocatedRequirement, SourceFile
from ..specs import Requirement


@record
class FleetLines:
    pip: list[Requirement] = field(default_factory=list)
    conda: list[tuple[SourceFile, Pin]] = field(default_factory=list)

    @property
    def label(self) -> str:
        """The lines as the files write them: ``torch==2.1.0, tensorflow-gpu=2.4.1``."""
        return ", ".join([*(str(r) for r in self.pip), *(pin.located.raw for _, pin in self.conda)])


def framework_requirements(sources: Sequence[SourceFile], matrix: Matrix) -> FleetLines:
    known = set(matrix.packages())
    lines = FleetLines()
    seen: set[str] = set()
    for source in sources:
        for located in source.requirements:
            req = located.requirement
            if located.constraint:
                continue
            if req is not None and located.conda is None:
                if canonicalize_name(req.name) in known and str(req) not in seen:
                    seen.add(str(req))
                    lines.pip.append(req)
                continue
            pin = _conda_pin(located, source, matrix, known)
            if pin is not None and located.raw not in seen:
                seen.add(located.raw)
                lines.conda.append((source, pin))
    if not lines.pip and not lines.conda:
        files = ", ".join(s.path for s in sources) or "the files given"
        raise UserError(
            "no pip or conda requirement of a framework the compatibility matrix knows: nothing to plan per node", files
        )
    return lines


def _conda_pin(located: LocatedRequirement, source: SourceFile, matrix: Matrix, known: set[str]) -> Pin | None:
    """A conda framework line as ``check`` reads it (its package, release and selected build)."""
    from packaging.specifiers import SpecifierSet

    from ..check_conda import conda_release, select_build
    from ..specs import parse_requirement

    spec = located.conda
    if spec is None:
        return None
    name = canonicalize_name(spec.name)
    package = name if name in known else matrix.conda_names().get(name)
    if package is None:
        return None
    req = parse_requirement(f"{package}{conda_release(spec.specifier or SpecifierSet())}")
    pin = Pin(located, req, package, channels=tuple(source.channels))
    select_build(pin, source.requirements, matrix)
    return pin


def plan_lines(lines: FleetLines, runtime: Runtime, matrix: Matrix) -> Plan:
    """The lines planned on one node: the pip lines together (their conflicts too), each conda line on its file's
    environment there."""
    from ..check import file_environment
    from ..check_conda import pin_result
    from ..plan import make_plan
    from ..plan_conda import as_conda_line
    from ..solve import solve
    from ..solve.results import SolveResult

    plan = make_plan(solve(lines.pip, runtime, matrix), runtime, matrix)
    conda: list[RequirementPlan] = []
    for source, pin in lines.conda:
        env, _ = file_environment(source, runtime, runtime)
        result = pin_result(pin, env, matrix)
        [rp] = make_plan(SolveResult([result]), env, matrix).requirements
        conda.append(replace(rp, options=[as_conda_line(o) for o in rp.options]))
    satisfied = plan.satisfied and all(rp.result.satisfied for rp in conda)
    return Plan([*plan.requirements, *conda], plan.conflicts, satisfied, plan.notes)
