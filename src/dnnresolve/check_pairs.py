"""`check` findings between requirements: nvidia-* wheel clashes, CUDA majors mixed in one process,
and CUDA builds that disagree across the files of a project. Pure: no I/O."""

from __future__ import annotations

import re
from collections.abc import Sequence

from packaging.specifiers import SpecifierSet

from .cuda_builds import is_cuda_plugin
from .findings import CheckReport, Finding, Severity
from .machine import Runtime
from .matrix import Matrix
from .pkgname import canonicalize_name
from .records import record
from .solve.checks import bundled_forms
from .solve.conflicts import find_conflicts, pinned_specifiers, pins_met, pins_of_form, specifiers_intersect
from .solve.results import Candidate, RequirementResult
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
    channels: tuple[str, ...] = ()  # a conda line's: its file's channels, in priority order


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
    clashes: str  # the nvidia-* wheels no version of which satisfies both ("" for none), as a message says them
    mix: _MajorMix | None


# What decides a solver verdict, as text: the requirement, the CUDA build it selects, whether it is the CPU
# build, and the environment (the runtime's repr: every field, sources included).
SolveKey = tuple[str, str, bool, str]


@record
class Solved:
    """The solver's verdict on one distinct requirement in one environment, and what ``check`` reads from it,
    worked out once: every line of every file that names the same requirement there shares it."""

    key: SolveKey
    number: int  # its place among the run's distinct verdicts: a short stand-in for ``key``
    result: RequirementResult
    best: Candidate | None
    pins: dict[str, SpecifierSet]  # the nvidia-* wheels its own form pins (pins_met's first row)
    wheels: dict[str, tuple[SpecifierSet, str]]  # those, then what its CUDA forms pin: (spec, the form's extras)
    source: str | None  # the page of its pins; None where the matrix has none

    @property
    def text(self) -> str:
        """The requirement as text (``str(pin.requirement)`` of every pin it answers for)."""
        return self.key[0]


def solved(key: SolveKey, number: int, result: RequirementResult, matrix: Matrix) -> Solved:
    """``result`` (already narrowed to the pin's CUDA build) with what the checks read from it."""
    best = result.best
    rows = pins_met(result, best.release, matrix) if best is not None else []
    pins = pinned_specifiers(rows[0].requires) if rows else {}
    wheels = {name: (spec, "") for name, spec in pins.items()}
    if best is not None and not result.requirement.extras:
        # a lock file writes tensorflow[and-cuda] out as tensorflow and its nvidia-* wheels: what the plain pin's
        # CUDA forms pin (the first form, in order, that pins a wheel) is what such a line is held to
        for form in sorted((f for f in bundled_forms(best.release, matrix) if f), key=sorted):
            form_rows = pins_of_form(best.release, form, result.requirement.specifier, matrix)
            for name, spec in (pinned_specifiers(form_rows[0].requires) if form_rows else {}).items():
                wheels.setdefault(name, (spec, ",".join(sorted(form))))
    return Solved(key, number, result, best, pins, wheels, rows[0].source if rows else None)


class RunMemo:
    """What ``check`` works out once per distinct input, however many files repeat it: solver verdicts by
    their key, the verdict of each pair of them (by their numbers), whether two specifier sets meet, every
    wheel name any verdict pins (so that a line naming none of them is passed over at once), the canonical
    form of each name as written, and which names an environment's frameworks want as lines of their own."""

    def __init__(self) -> None:
        self.solved: dict[SolveKey, Solved] = {}
        self.verdicts: dict[tuple[int, int], _PairVerdict] = {}
        self.meets: dict[tuple[str, str], bool] = {}
        self.wheel_names: set[str] = set()
        self.names: dict[str, str] = {}
        self.wants: dict[tuple[str, frozenset[str]], bool] = {}

    def add(self, key: SolveKey, result: RequirementResult, matrix: Matrix) -> Solved:
        found = self.solved[key] = solved(key, len(self.solved), result, matrix)
        self.wheel_names.update(found.wheels)
        return found

    def name(self, located: LocatedRequirement) -> str:
        """``located.name``, each distinct spelling canonicalized once."""
        req = located.requirement
        if req is None:
            return located.name
        found = self.names.get(req.name)
        if found is None:
            found = self.names[req.name] = canonicalize_name(req.name)
        return found

    def wanted(self, name: str, packages: frozenset[str]) -> bool:
        """Whether an environment of the frameworks ``packages`` installs ``name`` for their CUDA forms (an
        nvidia-* wheel, a framework's CUDA plugin)."""
        key = (name, packages)
        found = self.wants.get(key)
        if found is None:
            found = name.startswith("nvidia-") or any(is_cuda_plugin(p, name) for p in packages)
            self.wants[key] = found
        return found

    def intersect(self, a: SpecifierSet, b: SpecifierSet) -> bool:
        key = (str(a), str(b))
        meets = self.meets.get(key)
        if meets is None:
            meets = self.meets[key] = specifiers_intersect(a, b)
        return meets


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
    pins: list[Pin], solved: list[Solved], requirements: Sequence[LocatedRequirement], memo: RunMemo
) -> Brought:
    """What one environment installs for its frameworks' CUDA forms: nvidia-* wheels and CUDA plugins named on
    lines of their own, then the nvidia-* wheels its pip-installed framework pins bring (the first that brings
    each)."""
    out: Brought = {}
    packages = frozenset(p.package for p in pins)
    for r in requirements:
        if r.requirement is None or r.origin != "pip":
            continue
        name = memo.name(r)
        if name not in out and memo.wanted(name, packages):
            out[name] = Wheel(r.requirement.specifier, str(r.requirement), r.where)
    for pin, s in zip(pins, solved):
        if s.pins and _pip_wheels(pin, s.best):
            for name, spec in s.pins.items():
                if name not in out:
                    out[name] = Wheel(spec, s.text, pin.located.where, pin.package)
    return out


def wheel_line_findings(
    report: CheckReport, located: LocatedRequirement, pins: list[Pin], solved: list[Solved], memo: RunMemo
) -> bool:
    """A line of its own for a wheel that the environment's frameworks pin (a lock file's nvidia-cudnn-cu12
    beside torch): an error for each framework whose pin it does not satisfy. False when no framework here pins
    it (the line is then not checked)."""
    if located.requirement is None or located.origin != "pip":
        return False
    name = memo.name(located)
    if name not in memo.wheel_names:
        return False
    mine = located.requirement.specifier
    pinned = False
    for pin, s in zip(pins, solved):
        found = s.wheels.get(name)
        if found is None or not _pip_wheels(pin, s.best) or not _together(pin.located, located):
            continue
        theirs, form = found
        pinned = True
        if memo.intersect(mine, theirs):
            continue
        if form:  # the plain pin asks pip for nothing: the line is not what the framework's CUDA form would load
            severity = Severity.WARNING
            message = (
                f"{located.requirement} is not the {name} that "
                f"{pin.package}[{form}]{pin.requirement.specifier} installs ({name}{theirs}; "
                f"{pin.requirement}, {pin.located.where}, loads it from the environment): the build may not load it"
            )
        else:
            severity = Severity.ERROR
            message = (
                f"{located.requirement} does not satisfy {pin.requirement} ({pin.located.where}), which needs "
                f"{name}{theirs}: pip cannot install both"
            )
        fix = f"pin {name}{theirs}, the version {pin.requirement} {'is built with' if form else 'installs'}"
        report.findings.append(
            Finding(located.file, located.line, name, severity, "wheel-conflict", message, fix, s.source or "")
        )
    return pinned


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


def pair_findings(report: CheckReport, pins: list[Pin], solved: list[Solved], matrix: Matrix, memo: RunMemo) -> None:
    wheels = [i for i, (pin, s) in enumerate(zip(pins, solved)) if _pip_wheels(pin, s.best)]
    for n, i in enumerate(wheels):
        a, sa = pins[i], solved[i]
        for j in wheels[n + 1 :]:
            b, sb = pins[j], solved[j]
            if not _together(a.located, b.located):
                continue
            key = (sa.number, sb.number)
            verdict = memo.verdicts.get(key)
            if verdict is None:
                verdict = memo.verdicts[key] = _pair_verdict(sa, sb, matrix)
            if verdict.clashes:
                report.findings.append(
                    Finding(
                        b.located.file,
                        b.located.line,
                        b.package,
                        Severity.ERROR,
                        "wheel-conflict",
                        f"pip cannot install {sa.text} ({a.located.where}) and {sb.text} together: {verdict.clashes}",
                        "keep one framework per environment, or pick releases whose nvidia-* pins overlap",
                        verdict.source,
                    )
                )
            if verdict.mix is not None:
                _major_mix(report, a, b, verdict.mix, verdict.source)


def _pair_verdict(sa: Solved, sb: Solved, matrix: Matrix) -> _PairVerdict:
    source = next((s.source for s in (sa, sb) if s.source is not None), "")
    clashes = find_conflicts([sa.result, sb.result], matrix)
    said = "; ".join(c.split(": pip cannot")[0] for c in clashes[:2])
    if len(clashes) > 2:
        said += f" (and {len(clashes) - 2} more nvidia-* wheels)"
    return _PairVerdict(source, said, _mix(sa.pins, sb.pins))


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
    variants: list[tuple[Pin, bool]],
    target: Runtime | None,
) -> None:
    """A CUDA build pinned in the project (local tag, CUDA index, pytorch-cuda) against the project's conda
    CUDA, and against the target's CUDA toolkit for the pins whose release loads CUDA from the system (True
    beside the pin): a wheel that brings its own CUDA runtime does not care which toolkit is installed; the
    driver check covers it."""
    others: list[tuple[str, CudaVersion, str, bool]] = [
        (f"{r.conda.raw if r.conda else name}", v, r.where, False) for name, v, r in conda
    ]
    if target is not None and target.cuda:
        others.append(("the target's CUDA", target.cuda[0].version, target.cuda[0].found_in or "target", True))
    for pin, system_cuda in variants:
        assert pin.variant is not None
        for what, version, where, is_target in others:
            if is_target and not system_cuda:
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
