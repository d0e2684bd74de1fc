"""The `check` command's decisions: requirement files (already read) against a target and the matrix.

Pure: no I/O. Each file is one environment (a conda file's pip: list joins its conda packages). The
solver (``solve``) judges each pin against the runtime; a conda file's python, cudatoolkit / cuda-version
and cudnn stand in for the target's inside that environment. Packages the matrix does not know are
never passed silently: GPU-related ones get an info finding each, the rest are listed as not checked.

This module reads each file's environment and pins and gathers the report; what is said of one pin is
``check_pins``', of lines beside each other ``check_pairs``', of a conda file's builds ``check_conda``'.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from typing import Any

from packaging.specifiers import SpecifierSet

from .artifact import Artifact, wheel_requirement
from .check_conda import (
    CONDA_CUDA,
    CONDA_CUDA_VARIANT,
    conda_release,
    cuda_mix,
    feature_cuda,
    is_environment,
    pin_result,
    select_build,
)
from .check_image import image_findings
from .check_names import cuda_name_finding
from .check_pairs import (
    Pin,
    RunMemo,
    Solved,
    cuda_agreement,
    environment_wheels,
    pair_findings,
    wheel_line_findings,
)
from .check_pins import Fact, brought_wheels_key, pin_findings
from .conda_cuda import new_environment
from .findings import CheckedPin, CheckReport, Finding, Severity
from .machine import CudaInstall, CudnnInstall, Runtime
from .matrix import Matrix
from .model import COMPANIONS
from .solve import artifact_of
from .solve.checks import needs_system_cuda
from .solve.results import CANNOT_RUN, RUNS, RUNS_WARNED
from .sources.interface import IndexContext, LocatedRequirement, SourceFile
from .specs import Requirement, parse_requirement
from .versions import CudaVersion, CudnnVersion, PythonVersion, VersionError

# what an environment file names to set up the environment itself (its Python, CUDA, cuDNN, pip), not to install
_ENVIRONMENT = frozenset((*CONDA_CUDA, *CONDA_CUDA_VARIANT, "cudnn", "python", "pip"))
_GPU_NAME = re.compile(r"cuda|cudnn|gpu|nvidia|tensorrt|cupy|triton|(^|-)cu\d+")


class _Memo:
    """Answers that repeat across the lines and files of one run, worked out once each.

    A monorepo's files name the same few requirements again and again; each distinct requirement is
    solved once per environment, and each distinct pair compared once (``check_pairs``). Keys hold the
    full content of what decides an answer, as text (a requirement's, an environment's repr), never
    an object's identity: equal inputs share an answer, different ones never do.
    """

    def __init__(self, matrix: Matrix) -> None:
        self.matrix = matrix
        self.packages = frozenset(matrix.packages())
        self._conda_names: dict[str, str] | None = None
        self.artifacts: dict[tuple[str, tuple[str, ...], str], Artifact] = {}
        # each distinct pin's findings: what the target says of it (None where that depends on the wheels beside
        # it: then once per distinct set of them, in ``beside``), and the rest
        self.pin_facts: dict[tuple[object, ...], tuple[list[Fact] | None, list[Fact]]] = {}
        self.beside: dict[tuple[object, ...], list[Fact]] = {}
        self.gpu_related: dict[str, bool] = {}
        self.slips: dict[str, str] = {}  # a name the matrix does not know -> "did you mean ...?" or ""
        self.run = RunMemo()

    @property
    def conda_names(self) -> dict[str, str]:
        """The matrix package each conda package name installs (``Matrix.conda_names``: its conda recipes)."""
        if self._conda_names is None:
            self._conda_names = self.matrix.conda_names()
        return self._conda_names


def check_sources(sources: Sequence[SourceFile], target: Runtime | None, matrix: Matrix) -> CheckReport:
    memo = _Memo(matrix)
    report = CheckReport(files=[s.path for s in sources])
    report.target = describe_target(target)
    if target is None:
        report.notes.append(
            "no target machine given (--target, --driver/--gpu/--python/--cuda, or [tool.dnnresolve]): "
            "only internal consistency was checked"
        )
    shared = copy.deepcopy(target) if target is not None else Runtime()  # for files that set nothing of their own
    shared_key = repr(shared)
    project_cuda: list[tuple[str, CudaVersion, LocatedRequirement]] = []
    # pins of a CUDA build, each with whether its release loads CUDA from the system rather than its wheels
    project_variants: list[tuple[Pin, bool]] = []
    unknown: dict[str, None] = {}
    checked: dict[str, None] = {}
    judged: list[tuple[Pin, Solved]] = []  # each framework line with its verdict, in file order
    named = {memo.run.name(r) for s in sources for r in s.requirements}  # what the project installs, in any file
    for source in sources:
        for s in source.skipped:
            report.findings.append(Finding(s.file, s.line, "", Severity.INFO, "skipped", f"{s.raw}: {s.reason}"))
        if source.container is not None:
            source.container.resolve(matrix, source)
        report.findings.extend(source.findings)
        if source.container is not None:  # whether the container toolkit starts the image on this driver at all
            report.findings.extend(image_findings(source.container, target, matrix))
        runtime, env_cuda = file_environment(source, target, shared)
        if source.container is not None:
            report.containers.append(_container_target(source, runtime))
        env = shared_key if runtime is shared else repr(runtime)
        project_cuda.extend(env_cuda)
        pins = []
        others: list[LocatedRequirement] = []
        for located in source.requirements:
            art = _artifact(located, runtime, memo, source.pip_index)
            if art is not None and art.skipped:  # not installed on this target
                report.findings.append(
                    Finding(located.file, located.line, "", Severity.INFO, "skipped", f"{located.raw}: {art.skipped}")
                )
                continue
            pin = _pin(located, source, matrix, memo, art)
            if pin is None:
                name = memo.run.name(located)
                if name not in _ENVIRONMENT and not (located.conda is not None and is_environment(name)):
                    others.append(located)
                continue
            checked.setdefault(pin.package, None)
            pins.append(pin)
        solved = [_solve(pin, env, runtime, matrix, memo) for pin in pins]
        brought = environment_wheels(pins, solved, source.requirements, memo.run)
        # (only what the target says of a pin it runs reads the wheels beside it)
        brought_key = brought_wheels_key(brought) if target is not None else ()
        for located in others:  # an nvidia-* wheel a framework here pins is checked against those pins
            if not wheel_line_findings(report, located, pins, solved, memo.run):
                if cuda_name_finding(report, located, runtime, matrix):  # (nvidia-cudnn-cu12, cudatoolkit...)
                    checked.setdefault(memo.run.name(located), None)
                else:
                    _unknown(report, located, memo, unknown)
            else:
                checked.setdefault(memo.run.name(located), None)
        judged.extend(zip(pins, solved))
        for pin, verdict in zip(pins, solved):
            pin_findings(report, pin, verdict, runtime, matrix, target is not None, memo, brought, brought_key, named)
            if pin.variant is not None and pin.variant_from:
                system_cuda = verdict.best is not None and needs_system_cuda(verdict.best.release, matrix)
                # a container loads its image's CUDA, not the target's (the solver judged it against the image)
                system_cuda = system_cuda and source.container is None
                project_variants.append((pin, system_cuda))
        pair_findings(report, pins, solved, matrix, memo.run)
        cuda_mix(report, pins, solved, runtime)
    cuda_agreement(report, project_cuda, project_variants, target)
    report.not_checked = sorted(unknown)
    report.checked = sorted(checked)
    report.pins = _checked_pins(report.findings, judged, target is not None)
    return report


_WORDS = {Severity.ERROR: CANNOT_RUN, Severity.WARNING: RUNS_WARNED}


def _checked_pins(
    findings: Sequence[Finding], judged: Sequence[tuple[Pin, Solved]], on_target: bool
) -> list[CheckedPin]:
    """Each framework line with the release it stands for and its worst finding (every rule counts: a pin the
    solver passes may still be one pip cannot install beside another); on a target, the verdict in plan's
    words. Lines no release of the matrix satisfies are left out: their note says so."""
    worst: dict[tuple[str, int, str], Severity] = {}
    for f in findings:
        key = (f.file, f.line, f.package)
        if f.severity is not Severity.INFO and worst.get(key) is not Severity.ERROR:
            worst[key] = f.severity
    out = []
    for pin, verdict in judged:
        if verdict.best is None:
            continue
        loc = pin.located
        severity = worst.get((loc.file, loc.line, pin.package))
        words = (_WORDS.get(severity, RUNS) if severity else RUNS) if on_target else None
        best = verdict.best
        build = f" for CUDA {best.cuda}" if best.cuda else ", CPU build"
        release = f"{best.release.package} {best.release.version}{build}"
        out.append(CheckedPin(loc.file, loc.line, pin.package, release, severity, words))
    return out


# ------------------------------------------------------------------ environments and pins


def file_environment(
    source: SourceFile, target: Runtime | None, shared: Runtime
) -> tuple[Runtime, list[tuple[str, CudaVersion, LocatedRequirement]]]:
    """The machine a file's lines install onto (a Dockerfile's image, an environment file's new environment with its
    own Python and CUDA pins), and the CUDA pins it makes; ``shared`` where it sets nothing of its own."""
    if source.container is not None:  # a Dockerfile: its image, on the target's driver and GPUs
        return source.container.runtime(target), []
    if source.kind == "conda":  # a new environment: none of the active one's contents (``conda_cuda``)
        runtime = new_environment(target) if target is not None else Runtime()
    elif not any(r.conda is not None and r.conda.exact_version for r in source.requirements):
        return shared, []
    else:
        runtime = copy.deepcopy(target) if target is not None else Runtime()
    env_cuda = []
    for r in source.requirements:
        if r.conda is None:
            continue
        version = r.conda.exact_version
        if not version:
            continue
        try:
            if r.name == "python":
                runtime.python = PythonVersion.parse(version)
                runtime.sources["python"] = r.where
            elif r.name in CONDA_CUDA:
                cuda = CudaVersion.parse(version)
                runtime.cuda = [CudaInstall(cuda, "", r.where)]
                env_cuda.append((r.name, cuda, r))
            elif r.name in CONDA_CUDA_VARIANT:
                env_cuda.append((r.name, CudaVersion.parse(version), r))
            elif (feature := feature_cuda(r.name)) is not None:
                env_cuda.append((r.name, feature, r))
            elif r.name == "cudnn":
                runtime.cudnn = [CudnnInstall(CudnnVersion.parse(version), "", r.where, loads_first=True)]
        except VersionError:
            continue
    return runtime, env_cuda


def _artifact(
    located: LocatedRequirement, runtime: Runtime, memo: _Memo, pip_index: IndexContext | None = None
) -> Artifact | None:
    """What a pip line installs on this environment (``solve.artifact_of``, the file's index lines in force over
    ``pip_index``, pip's own configuration), once per distinct line, index and target; None for a conda line. A
    marker is read only where the Python is known (the target's or the environment's): without one, the file's own
    consistency is all that is checked."""
    req = located.requirement
    if req is None or located.conda is not None:
        return None
    index = pip_index.merged(located.index) if pip_index is not None and pip_index.urls else located.index
    key = (str(req), index.urls, repr((runtime.os, runtime.python, runtime.machine)))
    found = memo.artifacts.get(key)
    if found is None:
        known = runtime if runtime.python is not None or req.marker is None else None
        found = artifact_of(req if known is not None else _without_marker(req), runtime, memo.matrix, key[1])
        memo.artifacts[key] = found
    return found


def _without_marker(req: Requirement) -> Requirement:
    from .records import replace

    return replace(req, marker=None)


def _matrix_name(located: LocatedRequirement, memo: _Memo) -> str | None:
    """The matrix package a requirement names; a conda name maps through the rows' conda recipes."""
    name = memo.run.name(located)
    if name in memo.packages:
        return name
    if located.conda is None:
        return None
    return memo.conda_names.get(name)


def _pin(
    located: LocatedRequirement, source: SourceFile, matrix: Matrix, memo: _Memo, art: Artifact | None
) -> Pin | None:
    if located.constraint:
        return None
    package = _matrix_name(located, memo)
    if package is None:
        return None
    if located.requirement is not None:
        # a wheel URL is the release and build its file name says (torch==2.1.0+cu118), as pip installs it
        req = wheel_requirement(located.requirement) or located.requirement
    else:
        assert located.conda is not None
        # conda's =2.4.1 (==2.4.1.*) is the release 2.4.1, which a row covering 2.4.* answers for
        spec = conda_release(located.conda.specifier or SpecifierSet())
        req = parse_requirement(f"{package}{spec}")
    pin = Pin(located, req, package, channels=tuple(source.channels))
    if art is not None and art.build_named:  # a local tag, a post release or an index line names the build
        pin.variant, pin.cpu, pin.variant_from = art.cuda, art.cpu, art.build_from
    select_build(pin, source.requirements, matrix)
    return pin


def _solve(pin: Pin, env: str, runtime: Runtime, matrix: Matrix, memo: _Memo) -> Solved:
    """The solver's verdict on one pin, narrowed to the CUDA build the pin selects; once per distinct pin and
    environment (``env``: the runtime's repr)."""
    key = (str(pin.requirement), repr(pin.variant) if pin.variant else "", pin.cpu, env)
    found = memo.run.solved.get(key)
    if found is None:
        result = pin_result(pin, runtime, matrix)
        found = memo.run.add(key, result, matrix)
    return found


def _unknown(report: CheckReport, located: LocatedRequirement, memo: _Memo, unknown: dict[str, None]) -> None:
    """A package the matrix does not know: a note where it is GPU-related or a slip for one it knows
    (``tensorfow-gpu``), else a name in the summary's "not checked"."""
    name = memo.run.name(located)
    related = memo.gpu_related.get(name)
    if related is None:
        from .suggest import did_you_mean, package_suggestions

        memo.slips[name] = did_you_mean(package_suggestions(name, memo.packages))
        related = bool(_GPU_NAME.search(name)) or name in COMPANIONS
        memo.gpu_related[name] = related
    slip = memo.slips[name]
    if related or slip:
        what = "GPU-related but not in the compatibility matrix" if related else "not in the compatibility matrix"
        report.findings.append(
            Finding(
                located.file,
                located.line,
                name,
                Severity.INFO,
                "not-checked",
                f"{name} is {what}: not checked" + (f"; {slip}" if slip else ""),
            )
        )
    else:
        unknown.setdefault(name, None)


def _container_target(source: SourceFile, runtime: Runtime) -> dict[str, Any]:
    """What `check` judged a Dockerfile's lines against: its image's OS, CUDA, cuDNN and Python, each with the
    line that set it, on the target's driver and GPUs."""
    assert source.container is not None
    described = describe_target(runtime)
    if source.container.os:
        described["os"] = source.container.os
    return {"file": source.path, "image": source.container.image, **described}


def describe_target(target: Runtime | None) -> dict[str, Any]:
    """Each fact of the target alone, and where it came from under ``sources`` (profile.machine_json)."""
    from .profile import machine_json

    return {} if target is None else machine_json(target)
