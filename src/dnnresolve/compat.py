"""Compatibility rules between a build version and what a machine provides at run time.

Each rule is a pure function of versions and matrix data; the matrix rows say which rule applies.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from functools import cached_property

from .records import record
from .versions import ComputeCapability, CudaVersion, CudnnVersion, DriverVersion

__all__ = [
    "DEPENDS",
    "FULL",
    "MINOR_VERSION_COMPAT",
    "TOO_OLD",
    "UNKNOWN",
    "CudnnRule",
    "DriverTable",
    "DriverVerdict",
    "binary_runs_on",
    "cudnn_compatible",
    "cudnn_rule_text",
]


class CudnnRule(str, enum.Enum):
    """How a framework release checks the cuDNN it finds at run time against the one it was built with.

    The rule belongs to the framework release, not to cuDNN. Patch levels never matter.
    """

    # Early TensorFlow compared the "compatibility version" (major.minor) exactly, even for cuDNN 7:
    # "Loaded runtime CuDNN library: 5005 (compatibility version 5000) but source was compiled with
    # 5103 (compatibility version 5100)" (stream_executor/cuda/cuda_dnn.cc).
    EXACT_SERIES = "exact_series"
    # Later TensorFlow: "CuDNN library needs to have matching major version and equal or higher minor
    # version" (stream_executor/cuda/cuda_dnn.cc).
    SAME_MAJOR_NEWER_MINOR = "same_major_newer_minor"
    # PyTorch (torch/backends/cudnn/__init__.py): majors must match; below cuDNN 7 the minor must match
    # too; "Starting with cuDNN 7, minor versions are backwards-compatible" (runtime minor >= compile minor).
    TORCH = "torch"
    # JAX: the runtime must be at least as new as the build ("Found cuDNN version 8600, but JAX was
    # built against version 8800"); the check scales away the patch level.
    AT_LEAST = "at_least"
    # The wheels carry their own cuDNN (nvidia-cudnn-* wheels or static linking): a system cuDNN is
    # not needed, though one found first on LD_LIBRARY_PATH may still be loaded and then checked.
    BUNDLED = "bundled"


def cudnn_compatible(build: CudnnVersion, runtime: CudnnVersion, rule: CudnnRule) -> bool:
    """Whether a release built against ``build`` accepts ``runtime`` under ``rule``.

    A build stated by its major alone ("cuDNN 9.x", ONNX Runtime's table) accepts any release of that major:
    the source names no minor to hold the runtime to."""
    if len(build.parts) == 1 and rule is not CudnnRule.AT_LEAST:
        return runtime.major == build.major
    b, r = build.series.key(2), runtime.series.key(2)
    if rule is CudnnRule.EXACT_SERIES:
        return b == r
    if rule in (CudnnRule.SAME_MAJOR_NEWER_MINOR, CudnnRule.BUNDLED):
        return b[0] == r[0] and r[1] >= b[1]
    if rule is CudnnRule.TORCH:
        if b[0] != r[0]:
            return False
        return r[1] == b[1] if r[0] < 7 else r[1] >= b[1]
    if rule is CudnnRule.AT_LEAST:
        return r >= b
    raise ValueError(f"unknown cuDNN rule {rule!r}")


def cudnn_rule_text(build: CudnnVersion, rule: CudnnRule) -> str:
    """The rule in words, for this build: what a user must load at run time."""
    if len(build.parts) == 1 and rule is not CudnnRule.AT_LEAST:
        return f"cuDNN {build.major}.x (any {build.major}.x release)"
    s = build.series
    if rule is CudnnRule.EXACT_SERIES:
        return f"the same major.minor series at run time: {s}.x"
    if rule in (CudnnRule.SAME_MAJOR_NEWER_MINOR, CudnnRule.BUNDLED):
        return f"the same major version with an equal or newer minor: {s.major}.x, at least {s}"
    if rule is CudnnRule.TORCH:
        if s.major < 7:
            return f"the same major.minor series at run time: {s}.x"
        return f"the same major version with an equal or newer minor: {s.major}.x, at least {s}"
    return f"a runtime at least as new as the build: {s} or newer"


FULL, MINOR_VERSION_COMPAT, TOO_OLD, UNKNOWN, DEPENDS = "full", "minor_version_compat", "too_old", "unknown", "depends"


@record(frozen=True)
class DriverVerdict:
    """Whether a driver can run code built with a CUDA toolkit, and on what terms.

    ``how`` is "full", "minor_version_compat", "too_old" or "unknown"; for a driver branch (``535``) whose patch
    level decides, "depends", with ``by_patch`` saying from which driver of the branch on each verdict holds
    (lowest first). ``ok``: every driver the verdict covers runs the code, fully or through minor-version
    compatibility.
    """

    ok: bool
    how: str
    required: DriverVersion | None
    note: str = ""
    by_patch: tuple[tuple[DriverVersion, str], ...] = ()

    @property
    def hows(self) -> frozenset[str]:
        """Every verdict a driver it covers may get."""
        return frozenset(how for _, how in self.by_patch) if self.by_patch else frozenset((self.how,))


@record(frozen=True)
class DriverTable:
    """The toolkit -> minimum driver facts from the matrix, for one operating system.

    ``toolkits`` pairs each CUDA toolkit release with its minimum driver (NVIDIA's "CUDA Toolkit and
    Corresponding Driver Versions" table). ``families`` pairs a CUDA major with the minimum driver for
    minor-version compatibility: from CUDA 11 on, an application built with any 11.x toolkit runs on a
    driver >= 450.80.02 (Linux), with limits (no PTX JIT of newer PTX, some features need the newer
    driver); before CUDA 11 there was none.
    Source: https://docs.nvidia.com/deploy/cuda-compatibility/
    """

    toolkits: tuple[tuple[CudaVersion, DriverVersion], ...]
    families: tuple[tuple[int, DriverVersion], ...] = ()

    @cached_property
    def _by_release(self) -> dict[tuple[int, ...], DriverVersion]:
        out: dict[tuple[int, ...], DriverVersion] = {}
        for toolkit, driver in self.toolkits:
            out.setdefault(toolkit.key(3), driver)
        return out

    @cached_property
    def _by_series(self) -> dict[tuple[int, ...], DriverVersion]:
        """Each series' first (GA) release's driver: the solver asks once per candidate, so built once."""
        first: dict[tuple[int, ...], tuple[CudaVersion, DriverVersion]] = {}
        for toolkit, driver in self.toolkits:
            key = toolkit.series.key(2)
            if key not in first or toolkit < first[key][0]:
                first[key] = (toolkit, driver)
        return {k: d for k, (_, d) in first.items()}

    def min_driver_for(self, cuda: CudaVersion) -> DriverVersion | None:
        """The driver the toolkit release needs; for a series (``11.8``) its first (GA) release's."""
        if len(cuda.parts) >= 3:
            exact = self._by_release.get(cuda.key(3))
            if exact is not None:
                return exact
        return self._by_series.get(cuda.series.key(2))

    def family_min_driver(self, major: int) -> DriverVersion | None:
        for fam, driver in self.families:
            if fam == major:
                return driver
        return None

    @cached_property
    def drivers(self) -> tuple[DriverVersion, ...]:
        """Every minimum the table names (toolkits' and families'), lowest first, each once."""
        seen: dict[tuple[int, ...], DriverVersion] = {}
        for driver in (*(d for _, d in self.toolkits), *(d for _, d in self.families)):
            seen.setdefault(driver.key(3), driver)
        return tuple(seen[k] for k in sorted(seen))

    def check(self, driver: DriverVersion, cuda: CudaVersion) -> DriverVerdict:
        """Can ``driver`` run code built with ``cuda``? Exact table first, then minor-version compat.

        A branch (``535``) is any of its drivers: where a minimum falls inside it (535.54.03 for CUDA 12.2) the
        verdict is "depends" and says from which patch level on it runs; one that holds for the whole branch is
        given plainly."""
        required = self.min_driver_for(cuda)
        if required is None:
            return DriverVerdict(False, UNKNOWN, None, f"CUDA {cuda} is not in the driver table")
        family = self.family_min_driver(cuda.major)
        how = _how(driver, required, family)
        if driver.is_branch:
            steps = [(driver, how)]
            inside = {d.key(3): d for d in (required, family) if d is not None and d.major == driver.major}
            for key in sorted(k for k in inside if k > driver.key(3)):
                step = _how(inside[key], required, family)
                if step != steps[-1][1]:
                    steps.append((inside[key], step))
            if len(steps) > 1:
                note = _branch_note(driver, cuda, required, family, steps)
                return DriverVerdict(how != TOO_OLD, DEPENDS, required, note, tuple(steps))
        if how == FULL:
            return DriverVerdict(True, FULL, required)
        if how == MINOR_VERSION_COMPAT:
            return DriverVerdict(True, MINOR_VERSION_COMPAT, required, _compat_note(cuda, required, family))
        return DriverVerdict(False, TOO_OLD, required)

    def newest_cuda_for(self, driver: DriverVersion) -> CudaVersion | None:
        """The newest CUDA series whose first release this driver fully supports (what nvidia-smi shows); for a
        branch (``535``), the newest every driver of the branch supports."""
        best: CudaVersion | None = None
        for toolkit, need in self.toolkits:
            if driver.key(3) >= need.key(3) and (best is None or toolkit.series > best):
                best = toolkit.series
        return best


def _how(driver: DriverVersion, required: DriverVersion, family: DriverVersion | None) -> str:
    if driver.key(3) >= required.key(3):
        return FULL
    if family is not None and driver.key(3) >= family.key(3):
        return MINOR_VERSION_COMPAT
    return TOO_OLD


def _compat_note(cuda: CudaVersion, required: DriverVersion, family: DriverVersion | None) -> str:
    return (
        f"runs through CUDA {cuda.major}.x minor-version compatibility (driver >= {family}); "
        f"features that need driver {required} and PTX JIT of newer code are unavailable"
    )


def _branch_note(
    branch: DriverVersion,
    cuda: CudaVersion,
    required: DriverVersion,
    family: DriverVersion | None,
    steps: list[tuple[DriverVersion, str]],
) -> str:
    """``driver 535.x: runs CUDA 12.2 if it is 535.54.03 or newer; if older, only through ...``."""
    limits = f"(features that need driver {required} and PTX JIT of newer code are unavailable)"
    compat = f"through CUDA {cuda.major}.x minor-version compatibility"
    top, top_how = steps[-1]
    said = [f"runs CUDA {cuda} if it is {top} or newer"]
    if top_how == MINOR_VERSION_COMPAT:
        said = [f"runs CUDA {cuda} {compat} if it is {top} or newer {limits}"]
    for i in range(len(steps) - 2, -1, -1):
        start, how = steps[i]
        when = "if older" if i == 0 else f"from {start} up to {steps[i + 1][0]}"
        said.append(f"{when}, only {compat} {limits}" if how == MINOR_VERSION_COMPAT else f"{when}, not at all")
    return f"driver {branch.shown}: " + "; ".join(said) + "; give the full version (nvidia-smi) to know"


def binary_runs_on(
    gpu: ComputeCapability,
    sass: Iterable[ComputeCapability],
    ptx: Iterable[ComputeCapability] = (),
    exact: Iterable[ComputeCapability] = (),
) -> bool:
    """Whether a binary with SASS for ``sass`` archs (PTX for ``ptx``, arch-specific SASS for ``exact``) runs on
    a GPU of ``gpu``.

    SASS runs on the same major architecture with an equal or higher minor; PTX is JIT-compiled for
    any GPU of equal or higher compute capability; arch-specific code (sm_90a, sm_100a) runs on that very
    compute capability only.
    Sources: https://docs.nvidia.com/cuda/cuda-c-programming-guide/#binary-compatibility,
    https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/#gpu-feature-list
    """
    g = gpu.key(2)
    if any(s.key(2)[0] == g[0] and s.key(2)[1] <= g[1] for s in sass) or any(e.key(2) == g for e in exact):
        return True
    return any(p.key(2) <= g for p in ptx)
