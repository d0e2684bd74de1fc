"""The cuDNN a build uses against the GPU: NVIDIA's support matrix lists, per cuDNN release and CUDA major, the
oldest compute capability it supports, and that floor moved (cuDNN 8.5 for CUDA 11.x lists Kepler, 8.9 for 11.x
starts at Maxwell, 9.17 for CUDA 12.x at Turing). A GPU below it runs the framework's own kernels but no cuDNN
operation (convolutions, RNNs, normalization)."""

from __future__ import annotations

from ..machine import Runtime
from ..matrix import Matrix
from ..model import CudnnRelease, FrameworkRelease
from ..records import record
from ..versions import ComputeCapability, CudaVersion, CudnnVersion
from .results import Check, Status

COMPONENT = "cudnn_gpu"

# Frameworks whose GPU code runs without cuDNN, and how to turn it off. PyTorch's own source:
# "torch.backends.cudnn.enabled = False ... to globally disable CuDNN/MIOpen" (torch/backends/cudnn/__init__.py,
# https://pytorch.org/docs/stable/_modules/torch/backends/cudnn.html); convolutions then use its own CUDA kernels.
# MXNet's Convolution operator takes cudnn_off ("does not use cudnn for this layer", apache/incubator-mxnet PR 12691,
# which brings it to Gluon's conv layers). CuPy loads cuDNN only for cupy.cudnn (the rows say so: cudnn_optional).
# The others need cuDNN on the GPU: TensorFlow skips registering GPU devices without it ("Cannot dlopen some GPU
# libraries"), JAX's CUDA backend fails to initialize ("Unable to load cuDNN", jax-ml/jax issue 20519).
WORKAROUNDS = {
    "torch": "`torch.backends.cudnn.enabled = False` runs them on PyTorch's own CUDA kernels instead",
    "mxnet": "`cudnn_off=True` on a Convolution runs it without cuDNN",
}


@record(frozen=True)
class Floor:
    """The oldest compute capability a cuDNN supports for one CUDA major, and the release whose support matrix
    (or library) says so; ``between``: for a release with no floor of its own, the two around it that agree."""

    capability: ComputeCapability
    stated_by: CudnnRelease
    between: tuple[CudnnRelease, CudnnRelease] | None = None


def cudnn_floor(matrix: Matrix, cudnn: CudnnVersion, cuda_major: int) -> Floor | None:
    """The floor of ``cudnn`` (a release, or a series "9.5": the most permissive of its releases) for CUDA
    ``cuda_major``; None where the matrix cannot tell."""
    return matrix.remember(("cudnn_floor", cudnn, cuda_major), lambda: _cudnn_floor(matrix, cudnn, cuda_major))


def _cudnn_floor(matrix: Matrix, cudnn: CudnnVersion, cuda_major: int) -> Floor | None:
    rows = [r for r in matrix.cudnn_releases() if any(c.major == cuda_major for c in r.cuda)]
    if len(cudnn.parts) <= 2:
        floors = [f for r in rows if r.version.series == cudnn.series and (f := _floor_of(rows, r.version, cuda_major))]
        # the most permissive; of equal floors one a page states rather than one read from a library or inferred
        # from its neighbours
        return min(floors, key=lambda f: (f.capability, f.between is not None, _from_library(f))) if floors else None
    return _floor_of(rows, cudnn.truncate(3), cuda_major)


def _floor_of(rows: list[CudnnRelease], version: CudnnVersion, major: int) -> Floor | None:
    for r in rows:
        if r.version == version and (cc := _stated(r, major)) is not None:
            return Floor(cc, r)
    # NVIDIA moves a floor up, never back down: a release between two that list the same floor has it too
    below = [r for r in rows if r.version < version and _stated(r, major) is not None]
    above = [r for r in rows if r.version > version and _stated(r, major) is not None]
    if below and above:
        low, high = below[-1], above[0]
        if _stated(low, major) == _stated(high, major):
            return Floor(_stated(low, major) or ComputeCapability.parse("0.0"), low, (low, high))
    return None


def _stated(row: CudnnRelease, major: int) -> ComputeCapability | None:
    return row.floor(major)


def _from_library(floor: Floor) -> bool:
    return floor.stated_by.compute_capability_basis == "library"


def _whose(floor: Floor, major: int) -> str:
    """What the floor is and where it comes from: NVIDIA's support matrix, or the code its library carries."""
    supports = f"supports compute capability {floor.capability} and newer"
    if floor.between is not None:
        low, high = floor.between
        pages = all(
            r.compute_capability_basis == "support_matrix" and "developer-guide" not in r.compute_capability_source
            for r in (low, high)
        )
        whose = "NVIDIA's support matrices" if pages else "the floors"
        return f"{supports} ({whose} of cuDNN {low.version} and {high.version}, the releases around it)"
    row = floor.stated_by
    if _from_library(floor):
        return (
            f"carries GPU code for compute capability {floor.capability} and newer only (read from NVIDIA's "
            f"nvidia-cudnn-cu{major} {row.version} wheel; no support matrix of it was found)"
        )
    # (cuDNN 7.0's floor is its Developer Guide's "GPU and driver requirements": no support matrix of it was found)
    page = "Developer Guide" if "developer-guide" in row.compute_capability_source else "support matrix"
    return f"{supports} (NVIDIA's {page} of cuDNN {row.version})"


@record(frozen=True)
class WheelRange:
    """A release whose wheels require a range of NVIDIA's cuDNN wheel (jax 0.7.0: nvidia-cudnn-cu12>=9.8,<10):
    pip installs the newest release in it, whatever GPU the machine has."""

    wheel: str  # nvidia-cudnn-cu12
    requirement: str  # as the metadata states it
    newest: CudnnVersion  # the newest release of the range the matrix knows a wheel of for this CUDA major
    releases: tuple[CudnnVersion, ...]  # every such release, oldest first


def wheel_range(row: FrameworkRelease, cuda: CudaVersion, matrix: Matrix) -> WheelRange | None:
    """The cuDNN wheel range the release's own metadata requires for the ``cuda`` build (its [[wheel_pins]]
    rows), where it is a range rather than one release; None where the matrix records none."""
    key = ("wheel_range", row.names, str(row.covers), row.version, cuda.major)
    return matrix.remember(key, lambda: _wheel_range(row, cuda, matrix))


def _wheel_range(row: FrameworkRelease, cuda: CudaVersion, matrix: Matrix) -> WheelRange | None:
    wheel = f"nvidia-cudnn-cu{cuda.major}"
    pins = matrix.wheel_pins_covered(row.names, row.covers)
    own = [p for p in pins if p.version == row.version] or pins
    texts = [t for p in own for t in p.requires if t.startswith(wheel) and "==" not in t]
    if not texts:
        return None
    # (imported here: packaging.requirements brings its parser, which most plans never need)
    from packaging.requirements import InvalidRequirement, Requirement

    for text in texts:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        if req.name != wheel or not req.specifier or all(s.operator in ("==", "===") for s in req.specifier):
            continue
        releases = tuple(
            r.version
            for r in matrix.cudnn_releases()
            if any(c.major == cuda.major for c in r.cuda) and req.specifier.contains(str(r.version))
        )
        if releases:
            return WheelRange(wheel, text, releases[-1], releases)
    return None


def _floors(
    row: FrameworkRelease, cuda: CudaVersion, runtime: Runtime, matrix: Matrix, from_system: bool
) -> tuple[ComputeCapability | None, list[tuple[CudnnVersion, Floor]], bool]:
    """The GPU, the floors of the cuDNN the build uses that the matrix knows, and whether that cuDNN is the
    system's. A build whose wheels take a range of cuDNN wheels uses the newest of the range: pip picks it."""
    active = runtime.active_cudnn if from_system else None
    ranged = wheel_range(row, cuda, matrix) if active is None and not from_system else None
    used = (active.version,) if active is not None else (ranged.newest.series,) if ranged else row.cudnn_for(cuda)
    if not runtime.compute_capabilities or not used:
        return None, [], False
    floors = [(v, f) for v in used if (f := cudnn_floor(matrix, v, cuda.major)) is not None]
    return min(runtime.compute_capabilities), floors, active is not None


def cudnn_supports(
    row: FrameworkRelease, cuda: CudaVersion, runtime: Runtime, matrix: Matrix, from_system: bool
) -> bool | None:
    """Whether the cuDNN the build uses supports the GPU by NVIDIA's support matrix; None where it cannot tell."""
    cc, floors, _ = _floors(row, cuda, runtime, matrix, from_system)
    if cc is None or not floors:
        return None
    if any(cc >= f.capability for _, f in floors):
        return True
    return _pin_below(row, cuda, cc, matrix, from_system) is not None


def _pin_below(
    row: FrameworkRelease, cuda: CudaVersion, cc: ComputeCapability, matrix: Matrix, from_system: bool
) -> tuple[WheelRange, CudnnVersion, str] | None:
    """For a build that takes a range of cuDNN wheels whose newest does not support the GPU: the range, the
    newest release in it that does, and the requirement that holds pip to it (``nvidia-cudnn-cu12<9.11``)."""
    ranged = None if from_system else wheel_range(row, cuda, matrix)
    if ranged is None:
        return None
    fits = [v for v in ranged.releases if (f := cudnn_floor(matrix, v, cuda.major)) and cc >= f.capability]
    if not fits:
        return None
    above = [v for v in ranged.releases if v > fits[-1]]
    if not above:
        return None
    return ranged, fits[-1], f"{ranged.wheel}<{above[0].series}"


def cudnn_gpu_check(
    row: FrameworkRelease, cuda: CudaVersion, runtime: Runtime, matrix: Matrix, from_system: bool
) -> Check | None:
    """A check only where the GPU is below the floor of the cuDNN the build uses (the one it brings, or, when it
    loads cuDNN from the system, the one in use there): a failure where the framework needs cuDNN, a warning
    naming the workaround where it runs without it."""
    cc, floors, system = _floors(row, cuda, runtime, matrix, from_system)
    if cc is None or not floors or any(cc >= f.capability for _, f in floors):
        return None
    version, floor = min(floors, key=lambda pair: pair[1].capability)
    said = f"cuDNN {version} for CUDA {cuda.major}.x " + _whose(floor, cuda.major)
    needed = f"cuDNN {version}: >= {floor.capability}"
    source = floor.stated_by.compute_capability_source or floor.stated_by.source
    pinned = _pin_below(row, cuda, cc, matrix, from_system)
    if pinned is not None:
        ranged, fits, pin = pinned
        reason = (
            f"pip installs the newest {ranged.wheel} that {row.package} {row.version} allows "
            f"({ranged.requirement.removeprefix(ranged.wheel)}), cuDNN {ranged.newest.series} today; {said}, "
            f"so on {cc.sm} its cuDNN operations fail; add '{pin}' to the pip command: cuDNN {fits}, which it "
            f"also allows, supports {cc}"
        )
        return Check(COMPONENT, Status.WARN, reason, f"{pin} (cuDNN {fits})", str(cc), source, requires=pin)
    workaround = WORKAROUNDS.get(row.package.split("-cu")[0])
    if workaround is not None:
        reason = (
            f"{said}; on {cc.sm} the cuDNN operations of {row.package} (convolutions, RNNs, batch norm) fail; "
            f"{workaround}"
        )
        return Check(COMPONENT, Status.WARN, reason, needed, str(cc), source)
    if row.cudnn_optional:
        module = row.package.split("-")[0]
        reason = f"{said}; on {cc.sm} {row.package} runs, but its cuDNN features ({module}.cudnn) fail"
        return Check(COMPONENT, Status.WARN, reason, needed, str(cc), source)
    which = "the cuDNN it loads from the system" if system else "cuDNN"
    reason = f"{said}; {row.package} needs {which} for its GPU operations, which fail on {cc.sm}"
    return Check(COMPONENT, Status.FAIL, reason, needed, str(cc), source)
