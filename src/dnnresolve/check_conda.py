"""One conda environment holds one CUDA: the lines of an environment file that set it, the build a framework line
selects by them, and frameworks whose conda builds cannot share one. Pure: no I/O.

What sets the CUDA of an environment: ``cudatoolkit`` / ``cuda-version`` (and NVIDIA's ``cuda-*`` packages),
``pytorch-cuda``, ``cpuonly``, and the feature packages of PyTorch's own channel (``cuda80``, ``cuda90``,
``cuda92``, ``cuda100``: metapackages whose ``track_features`` pick the framework builds of that CUDA; PyTorch
built them for 0.4.1 and 1.0.0 and dropped them at 1.0.1 for a ``cudatoolkit`` constraint, pytorch/builder
802ebf7c and 91a58bf3). A framework line's own build string (``py3.9_cuda11.3_cudnn8.3.2_0``,
``cuda112py39h...``, ``cpu_py39h...``) picks its build first.

Which builds a conda line stands for: PyTorch's and conda-forge's channels build what the matrix's rows state (the
row's CUDA builds, ``conda_cuda.takes`` saying which environment takes which). A channel that builds a framework
itself from its own recipes (``OWN_BUILDS``: Anaconda's defaults, whose tensorflow-gpu 2.4.1 is a CUDA 10.1 build
while the wheel is CUDA 11.0) publishes other artifacts: a conda line of it stands for the row's conda recipes of
that channel (``own_builds``), each bringing its CUDA and cuDNN as conda packages and held to its CUDA series.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .check_pairs import Pin, Solved
from .conda_builds import by_channel, candidates, channel_name
from .conda_cuda import held_cuda, holders, per_cuda_package, pins_series, share, takes
from .findings import CheckReport, Finding, Severity
from .machine import Runtime
from .matrix import Matrix
from .model import FrameworkRelease, InstallRecipe
from .pkgname import canonicalize_name
from .records import replace
from .solve import solve_requirement
from .solve.results import Candidate, RequirementResult
from .sources.interface import LocatedRequirement
from .versions import CudaVersion, VersionError, parse_conda_build

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet

# conda packages that set the CUDA (or cuDNN) of an environment rather than install a framework
CONDA_CUDA = ("cudatoolkit", "cuda-version", "cuda-toolkit", "cuda-runtime", "cuda-cudart", "cuda")
CONDA_CUDA_VARIANT = ("pytorch-cuda",)
FEATURE_SOURCE = (
    "https://github.com/pytorch/builder/blob/802ebf7c272a96c1954fcdea30e0168aa19942f4/conda/cuda92/meta.yaml"
)
_FEATURE = re.compile(r"cuda(\d)(\d)|cuda(1\d)(\d)")


def feature_cuda(name: str) -> CudaVersion | None:
    """The CUDA a feature package of PyTorch's channel stands for: ``cuda92`` -> 9.2, ``cuda100`` -> 10.0."""
    m = _FEATURE.fullmatch(name)
    if m is None:
        return None
    major, minor = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    return CudaVersion((int(major), int(minor)))


def is_environment(name: str) -> bool:
    """Whether a conda package sets up the environment's CUDA rather than installs something."""
    return name in CONDA_CUDA or name in CONDA_CUDA_VARIANT or name == "cpuonly" or feature_cuda(name) is not None


def build_selects(build: str) -> tuple[CudaVersion | None, bool] | None:
    """(CUDA, CPU build) a conda build string names: ``py3.9_cuda11.3_cudnn8.3.2_0`` -> 11.3, ``cuda112py39h...``
    -> 11.2, ``cpu_py39h...`` -> the CPU build; None when it names neither."""
    tag = parse_conda_build(build)
    if tag.is_cuda:
        return tag.cuda, False
    return (None, True) if tag.kind == "cpu" else None


def environment_selects(requirements: Sequence[LocatedRequirement]) -> tuple[CudaVersion | None, bool, str] | None:
    """(CUDA, CPU build, why) the environment's own lines select for its conda framework lines: ``pytorch-cuda``
    first, then a ``cudatoolkit`` / ``cuda-version`` pin, then a feature package, then ``cpuonly``."""
    ranked: list[tuple[int, CudaVersion | None, bool, str]] = []
    cuda: CudaVersion | None
    for r in requirements:
        spec = r.conda
        if spec is None:
            continue
        why = f"{spec.raw} ({r.where})"
        if r.name in CONDA_CUDA_VARIANT or r.name in CONDA_CUDA:
            if not spec.exact_version:
                continue
            try:
                cuda = CudaVersion.parse(spec.exact_version)
            except VersionError:
                continue
            ranked.append((0 if r.name in CONDA_CUDA_VARIANT else 1, cuda, False, why))
        elif (feature := feature_cuda(r.name)) is not None:
            ranked.append((2, feature, False, f"{why}: the feature package of PyTorch's CUDA {feature} builds"))
        elif r.name == "cpuonly":
            ranked.append((3, None, True, why))
    if not ranked:
        return None
    _, cuda, cpu, why = min(ranked, key=lambda x: x[0])
    return cuda, cpu, why


def select_build(pin: Pin, requirements: Sequence[LocatedRequirement], matrix: Matrix) -> None:
    """Narrow a conda framework line to the build its build string, else its environment, selects (and a conda
    name of one build per CUDA, ``cupy``, to the matrix package of that CUDA)."""
    spec = pin.located.conda
    if spec is None or pin.variant is not None or pin.cpu:
        return
    if own_builds(pin, matrix):
        _select_own(pin, requirements, matrix)
        return
    own = build_selects(spec.build)
    env = environment_selects(requirements) if own is None else None
    if own is not None:
        pin.variant, pin.cpu = own
        pin.variant_from = f"build string {spec.build}"
    elif env is not None:
        cuda, pin.cpu, pin.variant_from = env
        pin.variant = cuda
    if pin.variant is not None:
        _per_cuda(pin, pin.variant, matrix)
        if own is None:
            pin.variant = _build_for(pin, pin.variant, matrix)


def own_builds(pin: Pin, matrix: Matrix) -> list[tuple[FrameworkRelease, InstallRecipe]]:
    """The builds a conda line of a channel that builds the framework itself installs (``OWN_BUILDS``): the row's
    conda recipes of that channel naming the line's package at a release its specifier allows; [] for other lines
    (their builds are the rows')."""
    spec = pin.located.conda
    if spec is None:
        return []
    # asked for each line several times (its build, its candidates, its fix): worked out once
    key = ("own_builds", pin.package, str(pin.requirement.specifier), spec.name.lower(), spec.channel, pin.channels)
    return matrix.remember(key, lambda: _own_builds(pin, matrix))


def _own_builds(pin: Pin, matrix: Matrix) -> list[tuple[FrameworkRelease, InstallRecipe]]:
    spec = pin.located.conda
    assert spec is not None
    found = by_channel(matrix, pin.package, pin.requirement.specifier, spec.name)
    # the channel conda takes it from: the line's own (conda-forge::), else the first of the file's that builds it
    # (conda's channel priority; no channels: Anaconda's defaults)
    wanted = spec.channel or next((c for c in pin.channels or ("defaults",) if channel_name(c) in found), "")
    return found.get(channel_name(wanted), [])


def _select_own(pin: Pin, requirements: Sequence[LocatedRequirement], matrix: Matrix) -> None:
    """A line of a channel's own builds narrowed by its build string (``cuda120py311h...``), else by the
    environment's CUDA pin: the build that pin takes (``conda_cuda.takes``, by the build's own run requirement), else
    the pinned CUDA itself, of which the line then has no build."""
    spec = pin.located.conda
    assert spec is not None
    named = build_selects(spec.build)
    if named is not None and named[0] is not None:
        pin.variant, pin.variant_from = named[0], f"build string {spec.build}"
        return
    # a feature package (cuda92) selects the builds of PyTorch's channel that carry its feature, not these
    env = environment_selects([r for r in requirements if feature_cuda(r.name) is None])
    cuda = env[0] if env is not None else None
    if env is None or cuda is None:
        return
    pin.variant_from = env[2]
    served = [(CudaVersion.parse(rec.cuda), pins_series(rec)) for _, rec in own_builds(pin, matrix)]
    taken = [b for b, pinned in served if takes(b, cuda, pinned)]
    # the build of that series, else the newest not above it (nvcc's run_exports ask for >=X.Y of the build's own)
    pin.variant = max(taken, key=lambda b: (b.series == cuda.series, b <= cuda, b)).series if taken else cuda.series


def own_candidates(pin: Pin, runtime: Runtime, matrix: Matrix) -> list[Candidate] | None:
    """The candidates of a line of a channel's own builds (``own_builds``), each judged as that build: its CUDA, the
    cuDNN its recipe names, both brought by conda (no system toolkit needed), the one conda picks for the target's
    driver first (``conda_builds.candidates``). None for other lines."""
    found = own_builds(pin, matrix)
    return candidates(found, runtime, matrix) if found else None


def pin_result(pin: Pin, runtime: Runtime, matrix: Matrix) -> RequirementResult:
    """The solver's verdict on one line, narrowed to what it installs: a channel's own builds (``own_candidates``),
    the CUDA build its tag, index, build string or environment selects (``pin.variant``), or the CPU build."""
    result = solve_requirement(pin.requirement, runtime, matrix)
    own = own_candidates(pin, runtime, matrix)  # a channel's own builds, not the wheels (Anaconda's TensorFlow)
    if own is not None:
        result.candidates, result.build_named = own, True
    if pin.variant is not None:
        variant = pin.variant  # a whole major (jaxlib's +cuda12.cudnn89) takes any build of it
        result.candidates = [c for c in result.candidates if c.cuda is not None and variant.names_build(c.cuda)]
    elif pin.cpu:
        result.candidates = [c for c in result.candidates if c.cuda is None]
    result.build_named = result.build_named or pin.variant is not None or pin.cpu
    return result


def build_cudas(pin: Pin, matrix: Matrix) -> list[CudaVersion]:
    """The CUDA builds a conda line can install: its channel's own (``own_builds``), else the rows'."""
    own = own_builds(pin, matrix)
    if own:
        return sorted({CudaVersion.parse(rec.cuda).series for _, rec in own})
    return sorted({c for row in matrix.find(pin.package, _plain(pin)) for c in row.cuda})


def _per_cuda(pin: Pin, cuda: CudaVersion, matrix: Matrix) -> None:
    """conda-forge's ``cupy`` is the build the environment's CUDA takes: the line stands for the pip package of that
    CUDA (cupy-cuda11x), not for the first one a conda recipe of the matrix names."""
    spec = pin.located.conda
    assert spec is not None
    plain = conda_release(pin.requirement.specifier)
    package = per_cuda_package(spec.name, cuda, matrix.packages(), lambda p: bool(matrix.find(p, plain)))
    if package is not None:
        pin.package = package
        pin.requirement = replace(pin.requirement, name=package, specifier=plain)


def conda_release(spec: SpecifierSet) -> SpecifierSet:
    """conda's ``cupy=13.3.0`` (``==13.3.0.*``) as the release it names, so that rows covering it (``covers``) answer;
    a shorter prefix (``cupy=13``) stays a range."""
    from packaging.specifiers import SpecifierSet

    items = list(spec)
    if len(items) == 1 and items[0].operator == "==" and items[0].version.endswith(".*"):
        version = items[0].version[:-2]
        if version.count(".") >= 2:
            return SpecifierSet(f"=={version}")
    return spec


def _build_for(pin: Pin, cuda: CudaVersion, matrix: Matrix) -> CudaVersion:
    """The framework build a CUDA pin selects: the build of that series, else the newest the environment's CUDA
    serves (``conda_cuda.takes``: from CUDA 11.2 the same major, where the release's recipes do not pin the
    series)."""
    rows = matrix.find(pin.package, _plain(pin))
    builds = {c for row in rows for c in row.cuda}
    if any(b.series == cuda.series for b in builds):
        return cuda.series
    pinned = any(rec.kind == "conda" and pins_series(rec) for row in rows for rec in row.install)
    served = [b for b in builds if takes(b, cuda, pinned)]
    return max(served).series if served else cuda.series


def conda_build_fix(pin: Pin, runtime: Runtime, matrix: Matrix) -> str:
    """For a conda line the environment narrowed to a build that cannot run here: the CUDA pin that selects a build of
    the same release that runs ("" when none does, or the line chose its build itself)."""
    if pin.located.conda is None or pin.variant is None or not pin.variant_from or "(" not in pin.variant_from:
        return ""
    result = solve_requirement(pin.requirement, runtime, matrix)
    runs = [c for c in result.requested if c.cuda is not None and c.ok and not pin.variant.names_build(c.cuda)]
    if not runs:
        return ""
    best = max(runs, key=lambda c: (not any(k.status.value == "warn" for k in c.checks), c.cuda))
    assert best.cuda is not None
    what = pin.variant_from.split(" (", 1)[0]
    name = re.split(r"[=<>! ]", what, maxsplit=1)[0]
    # the way the release's own conda recipe names that build (cudatoolkit=10.2, pytorch-cuda=11.8, cuda90)
    rec = best.release.recipe(best.cuda, kind="conda")
    named = [p for p in (rec.packages if rec else ()) if p.startswith((*CONDA_CUDA_VARIANT, "cudatoolkit"))]
    named += [p for p in (rec.packages if rec else ()) if feature_cuda(p) is not None]
    setting = named[0] if named else f"{name}={best.cuda.series}"
    return (
        f"{setting} instead of {what}: the CUDA {best.cuda.series} build of {pin.located.conda.name} "
        f"{best.release.version} runs here"
    )


def _plain(pin: Pin) -> str:
    return str(pin.requirement.specifier)


def cuda_mix(report: CheckReport, pins: Sequence[Pin], solved: Sequence[Solved], target: Runtime | None = None) -> None:
    """Frameworks of one conda environment whose conda builds need CUDA versions no single cudatoolkit gives: an
    error on the second line. Each framework's builds are those of the release the line asks for (narrowed by its
    own build string); which CUDA takes which build is ``conda_cuda.takes``. Where conda installed frameworks in the
    target's active environment for the CUDA it holds (``conda_cuda.holders``), the framework lines of a file that
    installs into it (pip lines) are held to that CUDA too."""
    seen: list[tuple[Pin, set[CudaVersion], bool]] = []
    for pin, verdict in zip(pins, solved):
        if pin.cpu:
            continue
        builds = {c.cuda.series for c in verdict.result.requested if c.cuda is not None}
        if pin.variant is not None and pin.variant_from.startswith("build string"):
            builds = {b for b in builds if pin.variant.names_build(b)}
        if not builds:
            continue
        recipes = (rec for c in verdict.result.requested for rec in c.release.install)
        pinned = any(rec.kind == "conda" and pins_series(rec) for rec in recipes)
        if pin.located.conda is None:
            _held_by_target(report, pin, verdict, builds, pinned, target)
            continue
        for other, theirs, their_pin in seen:
            if any(share(a, b, pinned, their_pin) for a in builds for b in theirs):
                continue
            _mix(
                report,
                pin,
                verdict,
                f"one conda environment holds one CUDA: {_builds(pin, builds)}, but {_builds(other, theirs)} "
                f"({other.located.where}); no cudatoolkit serves both",
                "pick releases with a CUDA in common, or put each framework in an environment of its own",
            )
            break
        seen.append((pin, builds, pinned))


def _held_by_target(
    report: CheckReport, pin: Pin, verdict: Solved, builds: set[CudaVersion], pinned: bool, target: Runtime | None
) -> None:
    """A pip line installing into the target's active conda environment, whose CUDA takes none of its builds."""
    if target is None or target.conda_cuda is None or not holders(target):
        return
    env = target.conda_cuda
    if any(takes(b, env, pinned) for b in builds):
        return
    if any(p.by_conda and canonicalize_name(p.name) == pin.package for p in target.packages):
        return  # pip over conda's own package of it: the plan's matter (plan_conda), not two CUDAs
    _mix(
        report,
        pin,
        verdict,
        f"one conda environment holds one CUDA: {_builds(pin, builds, 'builds')}, but the target's conda "
        f"environment {held_cuda(target)}; no cudatoolkit serves both",
        f"install {pin.package} in a conda environment of its own (conda create -n NAME python=...), or pick a "
        f"release with a build for CUDA {env}",
    )


def _mix(report: CheckReport, pin: Pin, verdict: Solved, message: str, fix: str) -> None:
    """A ``conda-cuda-mix`` error at the pin's line, citing the row of the build it installs."""
    source = verdict.best.release.source if verdict.best is not None else ""
    report.findings.append(
        Finding(pin.located.file, pin.located.line, pin.package, Severity.ERROR, "conda-cuda-mix", message, fix, source)
    )


def _builds(pin: Pin, builds: set[CudaVersion], what: str = "conda builds") -> str:
    listed = " or ".join(str(b) for b in sorted(builds))
    return f"the {what} of {pin.requirement} need CUDA {listed}"
