"""`check` of a line that pins a [[cuda_name]] (nvidia-cudnn-cu12, jax-cuda12-plugin, cuda-toolkit) with no
framework of the same file pinning it: what it is, and whether the target's driver runs the CUDA it is for."""

from __future__ import annotations

from .findings import CheckReport, Finding, Severity
from .machine import Runtime
from .matrix import Matrix
from .sources.interface import LocatedRequirement

RULE = "cuda-name"


def cuda_name_finding(report: CheckReport, located: LocatedRequirement, runtime: Runtime, matrix: Matrix) -> bool:
    """A finding for a line naming a [[cuda_name]]; False when the line names none (then it is not checked)."""
    req = located.requirement
    if req is None:
        return False
    entry = matrix.cuda_name(req.name)
    if entry is None:
        return False
    from .cuda_names import asked_version, what_it_is
    from .solve import solve_requirement
    from .solve.results import Status

    name = req.name
    version = asked_version(req.specifier)
    said = f"{name} {version}" if version is not None else name
    what = f"{said} is {what_it_is(entry, name, version)}"
    result = solve_requirement(req, runtime, matrix)
    best = result.best
    if best is None:
        message = f"{what}; pin an exact version to have the driver it needs checked"
        finding = Finding(located.file, located.line, name, Severity.INFO, RULE, message, "", entry.source)
        report.findings.append(finding)
        return True
    failed = [c for c in best.checks if c.status is Status.FAIL and c.component in ("os", "driver")]
    if failed:
        reasons = "; ".join(f"{c.component}: {c.reason}" for c in failed)
        message = f"{what}; the target cannot run it: {reasons}"
        finding = Finding(located.file, located.line, name, Severity.ERROR, RULE, message, "", best.release.source)
        report.findings.append(finding)
        return True
    driver = next((c for c in best.checks if c.component == "driver"), None)
    needs = f"; it needs a driver {driver.needed} ({driver.reason})" if driver is not None and driver.needed else ""
    finding = Finding(located.file, located.line, name, Severity.INFO, RULE, what + needs, "", entry.source)
    report.findings.append(finding)
    return True
