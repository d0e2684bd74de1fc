"""`check` findings between requirements: nvidia-* wheel clashes, CUDA majors mixed in one process,
and CUDA builds that disagree across the files of a project. Pure: no I/O."""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from .findings import CheckReport, Finding, Severity
from .matrix import Matrix
from .model import Runtime, WheelPins
from .solve import RequirementResult, find_conflicts, pinned_specifiers
from .sources.interface import LocatedRequirement
from .versions import CudaVersion


@dataclass
class Pin:
    """A requirement as the solver sees it, with where it came from and the CUDA build it selects."""

    located: LocatedRequirement
    requirement: Requirement
    package: str  # the matrix's name
    variant: CudaVersion | None = None
    cpu: bool = False
    variant_from: str = ""  # "local tag +cu118", "index https://download.pytorch.org/whl/cu118", "pytorch-cuda=12.1"


# ------------------------------------------------------------------ between requirements


def _pins_of(result: RequirementResult, matrix: Matrix) -> dict[str, SpecifierSet]:
    best = result.best
    if best is None:
        return {}
    extra = next(iter(result.requirement.extras), "")
    rows = matrix.pins_for(best.release.package, best.release.version, extra) or matrix.pins_for(
        best.release.package, best.release.version
    )
    out: dict[str, SpecifierSet] = {}
    for row in rows[:1]:
        out.update(pinned_specifiers(row.requires))
    return out


def _together(a: Pin, b: Pin) -> bool:
    """Two requirements of one file are installed together unless they sit in different optional groups."""
    main = ("", "dependencies", "packages", "pip")
    ga, gb = a.located.group, b.located.group
    return ga == gb or ga in main or gb in main or ga.startswith("-") or gb.startswith("-")


def _pip_wheels(pin: Pin, result: RequirementResult) -> bool:
    """Whether the PyPI metadata describes this build: pip-installed, and the default CUDA variant if chosen."""
    if pin.located.origin != "pip" or pin.cpu:
        return False
    best = result.best
    if pin.variant is None or best is None:
        return True
    default = best.release.cuda_default
    return default is not None and default.series == pin.variant.series


def pair_findings(report: CheckReport, pins: list[Pin], results: list[RequirementResult], matrix: Matrix) -> None:
    for i in range(len(pins)):
        for j in range(i + 1, len(pins)):
            a, b = pins[i], pins[j]
            ra, rb = results[i], results[j]
            if not _together(a, b) or not _pip_wheels(a, ra) or not _pip_wheels(b, rb):
                continue
            source = next((p.source for r in (ra, rb) for p in _rows(r, matrix)), "")
            clashes = find_conflicts([ra, rb], matrix)
            if clashes:
                shown = "; ".join(c.split(": pip cannot")[0] for c in clashes[:2])
                more = f" (and {len(clashes) - 2} more nvidia-* wheels)" if len(clashes) > 2 else ""
                report.findings.append(
                    Finding(
                        b.located.file,
                        b.located.line,
                        b.package,
                        Severity.ERROR,
                        "wheel-conflict",
                        f"pip cannot install {a.requirement} ({a.located.where}) and {b.requirement} together: "
                        f"{shown}{more}",
                        "keep one framework per environment, or pick releases whose nvidia-* pins overlap",
                        source,
                    )
                )
            _major_mix(report, a, b, _pins_of(ra, matrix), _pins_of(rb, matrix), source)


def _rows(result: RequirementResult, matrix: Matrix) -> list[WheelPins]:
    best = result.best
    if best is None:
        return []
    extra = next(iter(result.requirement.extras), "")
    return list(matrix.pins_for(best.release.package, best.release.version, extra))


def _major_mix(
    report: CheckReport, a: Pin, b: Pin, pa: dict[str, SpecifierSet], pb: dict[str, SpecifierSet], source: str
) -> None:
    def libs(pins: dict[str, SpecifierSet]) -> dict[str, tuple[str, str]]:
        out = {}
        for name in pins:
            m = re.fullmatch(r"(nvidia-[a-z-]+?)-cu(\d+)", name)
            if m:
                out[m.group(1)] = (m.group(2), name)
        return out

    la, lb = libs(pa), libs(pb)
    mixed = sorted(lib for lib in set(la) & set(lb) if la[lib][0] != lb[lib][0])
    if not mixed:
        return
    lib = "nvidia-cudnn" if "nvidia-cudnn" in mixed else mixed[0]
    na, nb = la[lib][1], lb[lib][1]
    message = (
        f"{a.requirement} brings {na}{pa[na]} (CUDA {la[lib][0]}) and {b.requirement} brings {nb}{pb[nb]} "
        f"(CUDA {lb[lib][0]}): pip installs both, but one process then loads two builds of the same libraries"
    )
    major_a, major_b = _first_major(pa[na]), _first_major(pb[nb])
    if lib == "nvidia-cudnn" and major_a and major_a == major_b:
        message += f" (both ship libcudnn.so.{major_a}; whichever loads first serves both frameworks)"
    message += f" (the other is at {a.located.where})"
    report.findings.append(
        Finding(
            b.located.file,
            b.located.line,
            b.package,
            Severity.WARNING,
            "cuda-major-mix",
            message,
            "use releases built for the same CUDA major, or separate environments",
            source,
        )
    )


def _first_major(spec: SpecifierSet) -> str:
    for s in spec:
        if s.operator in ("==", "===", ">=", "~="):
            return s.version.split(".")[0]
    return ""


# ------------------------------------------------------------------ CUDA agreement in a project


def cuda_agreement(
    report: CheckReport,
    conda: list[tuple[str, CudaVersion, LocatedRequirement]],
    variants: list[Pin],
    target: Runtime | None,
) -> None:
    others: list[tuple[str, CudaVersion, str]] = [
        (f"{r.conda.raw if r.conda else name}", v, r.where) for name, v, r in conda
    ]
    if target is not None and target.cuda:
        others.append(("the target's CUDA", target.cuda[0].version, target.cuda[0].found_in or "target"))
    for pin in variants:
        assert pin.variant is not None
        for what, version, where in others:
            if where == pin.located.where or pin.variant_from.endswith(f"({where})"):
                continue
            if version.major == pin.variant.major and (version.is_major_only or version.series == pin.variant.series):
                continue
            severity = Severity.ERROR if version.major != pin.variant.major else Severity.WARNING
            report.findings.append(
                Finding(
                    pin.located.file,
                    pin.located.line,
                    pin.package,
                    severity,
                    "cuda-disagreement",
                    f"{pin.requirement} is built for CUDA {pin.variant} ({pin.variant_from}), but {what} at {where} "
                    f"sets CUDA {version}",
                    f"use one CUDA series across the project: the CUDA {version} build of {pin.package}, "
                    f"or {what.split('=')[0]} for CUDA {pin.variant}",
                )
            )
