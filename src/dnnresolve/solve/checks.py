"""The checks of one build against a machine (``evaluate``): operating system, platform, install step, Python,
driver, and the CUDA and cuDNN a release loads from the system; the GPU's in ``gpu``."""

from __future__ import annotations

from collections.abc import Sequence

from ..artifact import unresolvable
from ..compat import (
    DEPENDS,
    FULL,
    MINOR_VERSION_COMPAT,
    UNKNOWN,
    CudnnRule,
    cudnn_compatible,
    cudnn_rule_text,
)
from ..machine import CudnnInstall, Runtime
from ..matrix import Matrix
from ..model import FrameworkRelease
from ..versions import CudaVersion, CudnnVersion
from .cudnn_gpu import cudnn_gpu_check, cudnn_supports
from .gpu import gpu_check
from .results import Check, Status

# Frameworks whose early releases compare cuDNN like TensorFlow did, when a row names no rule.
_DEFAULT_RULES = {"torch": CudnnRule.TORCH, "jax": CudnnRule.AT_LEAST, "jaxlib": CudnnRule.AT_LEAST}


def needs_system_cuda(release: FrameworkRelease, matrix: Matrix | None = None) -> bool:
    """Whether the release loads CUDA (and cuDNN, unless it bundles that) from the system (modules, toolkits)
    rather than its wheels.

    A release whose pip install pins nvidia-* wheels (tensorflow[and-cuda], jax[cuda12]) brings its own; one that
    bundles cuDNN brings both, unless the matrix says it still loads CUDA from the system (MXNet before 1.8). A
    requirement that chose another form by its extras (``jax[cuda12_local]``) loads the system's.
    """
    if not release.is_gpu:
        return False
    if release.cudnn_rule is CudnnRule.BUNDLED:
        return release.system_cuda
    forms = bundled_forms(release, matrix) if matrix is not None else set()
    if release.form is not None:
        return release.form not in forms
    return not forms


def bundled_forms(release: FrameworkRelease, matrix: Matrix) -> set[frozenset[str]]:
    """The extras (none: the plain requirement) whose install brings the CUDA libraries as nvidia-* wheels, as
    far as the matrix's pins know."""
    return {pins.extras for pins in matrix.wheel_pins_covered(release.names, release.covers) if pins.requires}


def cudnn_rule_for(release: FrameworkRelease) -> CudnnRule:
    if release.cudnn_rule is not None:
        return release.cudnn_rule
    return _DEFAULT_RULES.get(release.package, CudnnRule.EXACT_SERIES)


def evaluate(row: FrameworkRelease, cuda: CudaVersion | None, runtime: Runtime, matrix: Matrix) -> list[Check]:
    """Every check of one release variant against the runtime."""
    checks = [_check_os(row, runtime), _check_python(row, runtime)]
    recipe = _check_recipe(row, cuda, runtime)
    if recipe is not None:
        checks.append(recipe)
    if cuda is None:
        return checks
    platform = _check_platform(row, runtime)
    if platform is not None:
        checks.append(platform)
    checks.append(_check_driver(row, cuda, runtime, matrix))
    if matrix.cuda_name(row.package) is None:  # (an nvidia-* wheel, cudatoolkit: no GPU code requirement of its own)
        checks.append(gpu_check(row, cuda, runtime, matrix))
        floor = cudnn_gpu_check(row, cuda, runtime, matrix, _loads_system_cudnn(row, matrix))
        if floor is not None:
            checks.append(floor)
    if needs_system_cuda(row, matrix):
        checks.append(_check_system_cuda(row, cuda, runtime))
        if row.cudnn_for(cuda) and row.cudnn_rule is not CudnnRule.BUNDLED:
            checks.append(_check_system_cudnn(row, cuda, runtime))
    return checks


def _loads_system_cudnn(row: FrameworkRelease, matrix: Matrix) -> bool:
    return needs_system_cuda(row, matrix) and row.cudnn_rule is not CudnnRule.BUNDLED


def cudnn_supports_gpu(row: FrameworkRelease, cuda: CudaVersion | None, runtime: Runtime, matrix: Matrix) -> bool:
    """Whether NVIDIA's support matrix says the cuDNN this build uses supports the GPU (False where it cannot tell)."""
    return cuda is not None and cudnn_supports(row, cuda, runtime, matrix, _loads_system_cudnn(row, matrix)) is True


def _check_os(row: FrameworkRelease, runtime: Runtime) -> Check:
    if runtime.os in row.os:
        return Check("os", Status.OK, f"built for {runtime.os}", ", ".join(row.os), runtime.os, row.source)
    # the matrix's word: a build it does not list may still exist (torch 2.15.0's Windows variants are unread)
    return Check("os", Status.FAIL, f"no {runtime.os} build in the matrix", ", ".join(row.os), runtime.os, row.source)


JETSON_BUILDS = "https://forums.developer.nvidia.com/t/pytorch-for-jetson/72048"


def _check_platform(row: FrameworkRelease, runtime: Runtime) -> Check | None:
    """A GPU build on a machine that is not an x86_64 desktop or server (said only when it is not).

    The matrix's rows describe the builds each project publishes for x86_64 (and the index URLs of those):
    a Jetson board runs the JetPack builds NVIDIA makes for it (per JetPack release, aarch64), and an
    aarch64 server needs the project's aarch64 CUDA wheels, which the matrix does not list."""
    if runtime.system == "jetson":
        return Check(
            "platform",
            Status.FAIL,
            "a Jetson board: these are the desktop and server builds; JetPack needs the builds NVIDIA publishes "
            f"for its JetPack release (for PyTorch: {JETSON_BUILDS})",
            "x86_64 build",
            "Jetson (aarch64, JetPack)",
            JETSON_BUILDS,
        )
    machine = runtime.machine.lower()
    if machine and machine not in ("x86_64", "amd64"):
        return Check(
            "platform",
            Status.WARN,
            f"the matrix does not say whether this release has CUDA builds for {runtime.machine}",
            "x86_64 build",
            runtime.machine,
            row.source,
        )
    return None


def _check_recipe(row: FrameworkRelease, cuda: CudaVersion | None, runtime: Runtime) -> Check | None:
    """The install step of this build names the Pythons it works on (TF 2.14's and-cuda extra pins a tensorrt with
    no 3.11 wheel) and this one is not among them, though the release itself has wheels for it. Component
    "install": it concerns the command a plan gives, not the release (``check`` keeps it for a pin that asks
    for that extra)."""
    rec = row.recipe(cuda)
    broken = unresolvable(rec.requirement) if rec is not None and rec.kind == "pip" else ""
    if rec is not None and broken:
        return Check("install", Status.FAIL, f"pip cannot install {rec.requirement}: {broken}", "", "", row.source)
    if rec is None or not rec.python or runtime.python is None:
        return None
    have = runtime.python.series
    if str(have) in rec.python or not any(p.series == have for p in row.python):
        return None
    only = ", ".join(rec.python)
    why = f": {rec.note}" if rec.note else ""
    reason = f"{rec.requirement} installs only on Python {only}{why}"
    return Check("install", Status.FAIL, reason, f"Python {only}", str(have), row.source)


def _check_python(row: FrameworkRelease, runtime: Runtime) -> Check:
    needed = ", ".join(str(p) for p in row.python)
    if runtime.python is None:
        return Check("python", Status.UNKNOWN, "Python version not known", needed, "", row.source)
    have = runtime.python.series
    if not row.python:  # (a [[cuda_name]] release: py3-none wheels, or a conda package of any Python)
        return Check("python", Status.OK, f"not tied to a Python version; {have} is fine", "any", str(have), row.source)
    if any(p.series == have for p in row.python):
        return Check("python", Status.OK, f"wheels exist for Python {have}", needed, str(have), row.source)
    if row.wheels_any_python:
        reason = (
            f"Python {have} is not among those this release states it supports ({needed}); its wheels are tagged "
            "for any CPython (py2.py3), so pip installs it there, untested"
        )
        return Check("python", Status.WARN, reason, needed, str(have), row.source)
    return Check("python", Status.FAIL, f"no wheels for Python {have} (only {needed})", needed, str(have), row.source)


def _check_driver(row: FrameworkRelease, cuda: CudaVersion, runtime: Runtime, matrix: Matrix) -> Check:
    table = matrix.driver_table(runtime.os)
    required = table.min_driver_for(cuda)
    cuda_row = matrix.cuda_release(cuda)
    source = cuda_row.source if cuda_row else row.source
    needed = f">= {required}" if required else ""
    if runtime.driver is None:
        return Check("driver", Status.UNKNOWN, "NVIDIA driver not known", needed, "", source)
    verdict = table.check(runtime.driver, cuda)
    found = runtime.driver.shown
    if verdict.how == FULL:
        return Check("driver", Status.OK, f"driver {found} runs CUDA {cuda}", needed, found, source)
    if verdict.how in (MINOR_VERSION_COMPAT, DEPENDS):  # a branch whose patch level decides: never a failure
        return Check("driver", Status.WARN, verdict.note, needed, found, source)
    if verdict.how == UNKNOWN:
        return Check("driver", Status.UNKNOWN, verdict.note, needed, found, source)
    reason = f"CUDA {cuda} needs driver {needed}; found {found}"
    family = table.family_min_driver(cuda.major)
    if family is not None:
        compat = f"CUDA {cuda.major}.x minor-version compatibility"
        reason += f" (a driver >= {family} runs it, with limits, through {compat})"
    return Check("driver", Status.FAIL, reason, needed, found, source)


def system_cuda_ok(build: CudaVersion, have: CudaVersion) -> bool:
    """Does a system toolkit ``have`` serve a release built with ``build``?

    Before CUDA 11 the libraries' sonames carry major.minor (libcudart.so.10.0), so the series must
    match; from CUDA 11 the sonames carry the major only (libcudart.so.11.0 for every 11.x), and a
    newer minor of the same major serves an older build (minor-version compatibility).
    """
    if build.major < 11:
        return have.series == build.series
    return have.major == build.major and have.series >= build.series


def _check_system_cuda(row: FrameworkRelease, cuda: CudaVersion, runtime: Runtime) -> Check:
    needed = f"CUDA {cuda}" + (" (same major.minor)" if cuda.major < 11 else f" (or a newer {cuda.major}.x)")
    if not runtime.cuda:
        if "cuda" in runtime.absent:
            why = f"built for CUDA {cuda}, which it loads from the system; there is none"
            return Check("cuda", Status.FAIL, why, needed, "none", row.source)
        return Check("cuda", Status.UNKNOWN, "no CUDA toolkit known on this machine", needed, "", row.source)
    active = runtime.cuda[0]
    if system_cuda_ok(cuda, active.version):
        return Check(
            "cuda", Status.OK, f"CUDA {active.version} serves a {cuda} build", needed, str(active.version), row.source
        )
    return Check(
        "cuda",
        Status.FAIL,
        f"built for CUDA {cuda}; CUDA {active.version} is in use",
        needed,
        str(active.version),
        row.source,
    )


def _check_system_cudnn(row: FrameworkRelease, cuda: CudaVersion, runtime: Runtime) -> Check:
    """The cuDNN in use against the release's builds. For a release that loads cuDNN only for some features
    (``cudnn_optional``: CuPy), none is fine and another release is a warning, not a failure."""
    rule = cudnn_rule_for(row)
    builds = row.cudnn_for(cuda)
    build = max(builds)
    active: CudnnInstall | None = runtime.active_cudnn
    optional = "(optional) " if row.cudnn_optional else ""
    if active is None:
        needed = optional + cudnn_rule_text(build, rule)
        if row.cudnn_optional:
            why = "no cuDNN known on this machine; the release runs without it, only its cuDNN features need one"
            return Check("cudnn", Status.OK, why, needed, "none", row.source)
        if "cudnn" in runtime.absent:
            why = "it loads cuDNN from the system; there is none"
            return Check("cudnn", Status.FAIL, why, needed, "none", row.source)
        return Check("cudnn", Status.UNKNOWN, "no cuDNN known on this machine", needed, "", row.source)
    has = str(active.version)
    accepting = [b for b in builds if cudnn_compatible(b, active.version, rule)]
    if accepting:  # of several builds (a wheel per cuDNN), the newest one the cuDNN in use serves
        needed = optional + cudnn_rule_text(max(accepting), rule)
        return Check("cudnn", Status.OK, f"cuDNN {active.version} is accepted", needed, has, row.source)
    rule_text = cudnn_rule_text(build, rule)
    if row.cudnn_optional:
        why = (
            f"built against cuDNN {build}; cuDNN {active.version} is loaded: the release runs, but its cuDNN "
            f"features need {rule_text}"
        )
        return Check("cudnn", Status.WARN, why, optional + rule_text, has, row.source)
    why = f"built against cuDNN {build}; cuDNN {active.version} is loaded; this release needs {rule_text}"
    return Check("cudnn", Status.FAIL, why, rule_text, has, row.source)


def installed_cudnn_choices(runtime: Runtime, build: Sequence[CudnnVersion], rule: CudnnRule) -> list[CudnnInstall]:
    """cuDNN installs on the machine (not loaded first) that this release would accept."""
    return [c for c in runtime.cudnn if any(cudnn_compatible(b, c.version, rule) for b in build)]
