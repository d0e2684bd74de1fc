"""`check` findings between requirements: nvidia-* wheel clashes, CUDA majors mixed in one process,
and CUDA builds that disagree across the files of a project. Pure: no I/O."""

from __future__ import annotations

import re
from collections.abc import Sequence

from packaging.specifiers import SpecifierSet

from .cuda_builds import is_cuda_plugin
from .findings import CheckReport, Finding, Severity
from .matrix import Matrix
from .model import Runtime, WheelPins
from .records import record
from .solve import (
    Candidate,
    RequirementResult,
    bundled_forms,
    find_conflicts,
    pinned_specifiers,
    pins_met,
    pins_of_form,
    specifiers_intersect,
)
from .sources.interface import LocatedRequirement
from .specs import Requirement
from .versions import CudaVersion

_CU_WHEEL = re.compile(r"(nvidia-[a-z-]+?)-cu(\d+)")


@record
class Pin:
    """A requirement as the solver sees it, with where it came from and the CUDA build it selects."""

    located: LocatedRequirement
    requirement: Requirement
    package: str  # the matrix's name
    variant: CudaVersion | None = None
    cpu: bool = False
    variant_from: str = ""  # "local tag +cu118", "index https://download.pytorch.org/whl/cu118", "pytorch-cuda=12.1"


# ------------------------------------------------------------------ between requirements


@record
class _MajorMix:
    lib: str  # "nvidia-cudnn"
    wheel_a: str  # "nvidia-cudnn-cu11"
    wheel_b: str
    spec_a: str
    spec_b: str
    cuda_a: str  # the wheel's CUDA major, "11"
    cuda_b: str
    same_soname: str  # the cuDNN major both ship, when they do


@record
class _PairVerdict:
    source: str
    clashes: list[str]
    mix: _MajorMix | None


class PairMemo:
    """Verdicts of pairs of solver results, by the results' identity (``check`` shares one result among all
    the lines that name the same requirement), and each result's requested candidate."""

    def __init__(self) -> None:
        self.verdicts: dict[tuple[int, int], _PairVerdict] = {}
        self.best: dict[int, Candidate | None] = {}

    def best_of(self, result: RequirementResult) -> Candidate | None:
        key = id(result)
        if key not in self.best:
            self.best[key] = result.best
        return self.best[key]


def _pins_of(result: RequirementResult, matrix: Matrix) -> dict[str, SpecifierSet]:
    rows = _rows(result, matrix)
    return pinned_specifiers(rows[0].requires) if rows else {}


@record(frozen=True)
class Wheel:
    """A package an environment installs for a framework's CUDA form (an nvidia-* wheel, jax-cuda12-plugin), and
    what asks for it: a framework's pin, or a line of its own (a lock file of ``tensorflow[and-cuda]``)."""

    spec: SpecifierSet
    by: str  # "torch==2.5.1", or the line itself
    where: str  # file:line
    package: str = ""  # the framework that brings it; "" for a line of its own


Brought = dict[str, Wheel]  # by package name


def environment_wheels(
    pins: list[Pin],
    results: list[RequirementResult],
    requirements: Sequence[LocatedRequirement],
    matrix: Matrix,
    memo: PairMemo,
) -> Brought:
    """What one environment installs for its frameworks' CUDA forms: nvidia-* wheels and CUDA plugins named on
    lines of their own, then the nvidia-* wheels its pip-installed framework pins bring (the first that brings
    each)."""
    out: Brought = {}
    for r in requirements:
        wanted = r.name.startswith("nvidia-") or any(is_cuda_plugin(p.package, r.name) for p in pins)
        if r.requirement is not None and r.origin == "pip" and wanted:
            out.setdefault(r.name, Wheel(r.requirement.specifier, str(r.requirement), r.where))
    for pin, result in zip(pins, results):
        if _pip_wheels(pin, memo.best_of(result)):
            for name, spec in _pins_of(result, matrix).items():
                out.setdefault(name, Wheel(spec, str(pin.requirement), pin.located.where, pin.package))
    return out


def wheel_line_findings(
    report: CheckReport,
    located: LocatedRequirement,
    pins: list[Pin],
    results: list[RequirementResult],
    matrix: Matrix,
    memo: PairMemo,
) -> bool:
    """A line of its own for a wheel that the environment's frameworks pin (a lock file's nvidia-cudnn-cu12
    beside torch): an error for each framework whose pin it does not satisfy. False when no framework here pins
    it (the line is then not checked)."""
    if located.requirement is None or located.origin != "pip":
        return False
    mine = located.requirement.specifier
    pinned = False
    for pin, result in zip(pins, results):
        if not _pip_wheels(pin, memo.best_of(result)) or not _together(pin.located, located):
            continue
        theirs = _pins_of(result, matrix).get(located.name)
        form = ""
        if theirs is None:
            theirs, form = _form_pin(result, located.name, matrix)
        if theirs is None:
            continue
        pinned = True
        if specifiers_intersect(mine, theirs):
            continue
        source = next((p.source for p in _rows(result, matrix)), "")
        if form:  # the plain pin asks pip for nothing: the line is not what the framework's CUDA form would load
            severity = Severity.WARNING
            message = (
                f"{located.requirement} is not the {located.name} that "
                f"{pin.package}[{form}]{pin.requirement.specifier} installs ({located.name}{theirs}; "
                f"{pin.requirement}, {pin.located.where}, loads it from the environment): the build may not load it"
            )
        else:
            severity = Severity.ERROR
            message = (
                f"{located.requirement} does not satisfy {pin.requirement} ({pin.located.where}), which needs "
                f"{located.name}{theirs}: pip cannot install both"
            )
        fix = f"pin {located.name}{theirs}, the version {pin.requirement} {'is built with' if form else 'installs'}"
        report.findings.append(
            Finding(located.file, located.line, located.name, severity, "wheel-conflict", message, fix, source)
        )
    return pinned


def _form_pin(result: RequirementResult, name: str, matrix: Matrix) -> tuple[SpecifierSet | None, str]:
    """What a plain pin's CUDA form pins ``name`` to, and that form's extras ("and-cuda"): a lock file writes
    ``tensorflow[and-cuda]`` out as ``tensorflow`` and its nvidia-* wheels."""
    best = result.best
    if best is None or result.requirement.extras:
        return None, ""
    for form in sorted((f for f in bundled_forms(best.release, matrix) if f), key=sorted):
        rows = pins_of_form(best.release, form, result.requirement.specifier, matrix)
        spec = pinned_specifiers(rows[0].requires).get(name) if rows else None
        if spec is not None:
            return spec, ",".join(sorted(form))
    return None, ""


def _together(a: LocatedRequirement, b: LocatedRequirement) -> bool:
    """Two requirements of one file are installed together unless they sit in different optional groups."""
    main = ("", "dependencies", "packages", "pip")
    ga, gb = a.group, b.group
    return ga == gb or ga in main or gb in main or ga.startswith("-") or gb.startswith("-")


def _pip_wheels(pin: Pin, best: Candidate | None) -> bool:
    """Whether the PyPI metadata describes this build: pip-installed, and the default CUDA variant if chosen."""
    if pin.located.origin != "pip" or pin.cpu:
        return False
    if pin.variant is None or best is None:
        return True
    default = best.release.cuda_default
    return default is not None and default.series == pin.variant.series


def pair_findings(
    report: CheckReport, pins: list[Pin], results: list[RequirementResult], matrix: Matrix, memo: PairMemo
) -> None:
    wheels = [_pip_wheels(pin, memo.best_of(result)) for pin, result in zip(pins, results)]
    for i in range(len(pins)):
        if not wheels[i]:
            continue
        for j in range(i + 1, len(pins)):
            a, b = pins[i], pins[j]
            if not wheels[j] or not _together(a.located, b.located):
                continue
            ra, rb = results[i], results[j]
            key = (id(ra), id(rb))
            verdict = memo.verdicts.get(key)
            if verdict is None:
                verdict = memo.verdicts[key] = _pair_verdict(ra, rb, matrix)
            if verdict.clashes:
                clashes = verdict.clashes
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
                        verdict.source,
                    )
                )
            if verdict.mix is not None:
                _major_mix(report, a, b, verdict.mix, verdict.source)


def _pair_verdict(ra: RequirementResult, rb: RequirementResult, matrix: Matrix) -> _PairVerdict:
    source = next((p.source for r in (ra, rb) for p in _rows(r, matrix)), "")
    return _PairVerdict(source, find_conflicts([ra, rb], matrix), _mix(_pins_of(ra, matrix), _pins_of(rb, matrix)))


def _rows(result: RequirementResult, matrix: Matrix) -> list[WheelPins]:
    best = result.best
    return pins_met(result, best.release, matrix) if best is not None else []


def _mix(pa: dict[str, SpecifierSet], pb: dict[str, SpecifierSet]) -> _MajorMix | None:
    """The nvidia-* library two releases both pin, built for different CUDA majors (cuDNN first)."""

    def libs(pins: dict[str, SpecifierSet]) -> dict[str, tuple[str, str]]:
        out = {}
        for name in pins:
            m = _CU_WHEEL.fullmatch(name)
            if m:
                out[m.group(1)] = (m.group(2), name)
        return out

    la, lb = libs(pa), libs(pb)
    mixed = sorted(lib for lib in set(la) & set(lb) if la[lib][0] != lb[lib][0])
    if not mixed:
        return None
    lib = "nvidia-cudnn" if "nvidia-cudnn" in mixed else mixed[0]
    na, nb = la[lib][1], lb[lib][1]
    major_a, major_b = _first_major(pa[na]), _first_major(pb[nb])
    same = major_a if lib == "nvidia-cudnn" and major_a and major_a == major_b else ""
    return _MajorMix(lib, na, nb, str(pa[na]), str(pb[nb]), la[lib][0], lb[lib][0], same)


def _major_mix(report: CheckReport, a: Pin, b: Pin, mix: _MajorMix, source: str) -> None:
    message = (
        f"{a.requirement} brings {mix.wheel_a}{mix.spec_a} (CUDA {mix.cuda_a}) and {b.requirement} brings "
        f"{mix.wheel_b}{mix.spec_b} (CUDA {mix.cuda_b}): pip installs both, but one process then loads two builds "
        "of the same libraries"
    )
    if mix.same_soname:
        message += f" (both ship libcudnn.so.{mix.same_soname}; whichever loads first serves both frameworks)"
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
    system_cuda: set[int],
) -> None:
    """A CUDA build pinned in the project (local tag, CUDA index, pytorch-cuda) against the project's conda
    CUDA, and against the target's CUDA toolkit for the pins in ``system_cuda`` (ids of pins whose release
    loads CUDA from the system: a wheel that brings its own CUDA runtime does not care which toolkit is
    installed; the driver check covers it)."""
    others: list[tuple[str, CudaVersion, str, bool]] = [
        (f"{r.conda.raw if r.conda else name}", v, r.where, False) for name, v, r in conda
    ]
    if target is not None and target.cuda:
        others.append(("the target's CUDA", target.cuda[0].version, target.cuda[0].found_in or "target", True))
    for pin in variants:
        assert pin.variant is not None
        for what, version, where, is_target in others:
            if is_target and id(pin) not in system_cuda:
                continue
            if where == pin.located.where or pin.variant_from.endswith(f"({where})"):
                continue
            if version.names_build(pin.variant) or pin.variant.names_build(version):
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
