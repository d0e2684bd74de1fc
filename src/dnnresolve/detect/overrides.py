"""Describing a machine you are not on: flags (``--driver 375.26 --gpu "Tesla K20m"``) and the
environment variables DNNRESOLVE_DRIVER, DNNRESOLVE_GPU, DNNRESOLVE_CUDA, DNNRESOLVE_CUDNN and
DNNRESOLVE_PYTHON override what detection found. A bad value is a UserError naming the flag or variable.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import UserError
from ..machine import MATRIX_GPU_TABLE, CudaInstall, CudnnInstall, Gpu, Runtime
from ..records import replace
from ..versions import ComputeCapability, CudaVersion, CudnnVersion, DriverVersion, PythonVersion, VersionError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..matrix import Matrix
    from ..suggest import GpuGuess

ENV_OVERRIDES = {
    "driver": "DNNRESOLVE_DRIVER",
    "gpu": "DNNRESOLVE_GPU",
    "cuda": "DNNRESOLVE_CUDA",
    "cudnn": "DNNRESOLVE_CUDNN",
    "python": "DNNRESOLVE_PYTHON",
}
OS_NAMES = ("linux", "windows")


def runtime_from_flags(
    base: Runtime,
    driver: str | None = None,
    cuda: str | None = None,
    cudnn: str | None = None,
    gpu: str | None = None,
    python: str | None = None,
    os: str | None = None,
    matrix: Matrix | None = None,
) -> Runtime:
    """A copy of ``base`` with what the flags say put in place of what was detected."""
    given = {"driver": driver, "cuda": cuda, "cudnn": cudnn, "gpu": gpu, "python": python, "os": os}
    labels = {key: f"--{key}" for key in given}
    return _apply(base, {k: v for k, v in given.items() if v not in (None, "")}, labels, matrix)


def apply_env_overrides(base: Runtime, env: Mapping[str, str], matrix: Matrix | None = None) -> Runtime:
    given = {key: env[var] for key, var in ENV_OVERRIDES.items() if env.get(var, "").strip()}
    return _apply(base, given, dict(ENV_OVERRIDES), matrix)


def _apply(base: Runtime, given: Mapping[str, str | None], labels: Mapping[str, str], matrix: Matrix | None) -> Runtime:
    rt = copy_runtime(base)
    for key in ("os", "driver", "cuda", "cudnn", "gpu", "python"):  # os first: the driver table depends on it
        raw = given.get(key)
        if raw is None:
            continue
        value, label = raw.strip(), labels[key]
        try:
            _SETTERS[key](rt, value, label, matrix)
        except VersionError as exc:
            raise UserError(f"{label} {value!r}: {exc}") from None
    return rt


def copy_runtime(base: Runtime) -> Runtime:
    """A copy of ``base`` that shares no list or dict with it. What they hold (GPUs, installs, versions, strings) is
    immutable, so this is ``copy.deepcopy``'s answer without its cost (a millisecond and the import of ``copy``
    and ``weakref`` at every start-up)."""
    return replace(base, **{k: type(v)(v) for k, v in vars(base).items() if isinstance(v, (list, dict, set))})


def _set_driver(rt: Runtime, value: str, label: str, matrix: Matrix | None) -> None:
    """A branch alone (``535``, as people say it) is some 535.x: the verdicts say where its patch level decides."""
    rt.driver = DriverVersion.parse(value)
    branch = rt.driver.is_branch
    rt.sources["driver"] = f"given ({label}; a branch: some {rt.driver.shown})" if branch else f"given ({label})"
    # The CUDA a detected driver supports no longer applies; the matrix knows what this one supports.
    rt.driver_cuda = None
    rt.sources.pop("driver_cuda", None)
    if matrix is not None:
        newest = matrix.driver_table(rt.os).newest_cuda_for(rt.driver)
        if newest is not None:
            rt.driver_cuda = newest
            which = f"every {rt.driver.shown} driver runs" if branch else f"for driver {rt.driver}"
            rt.sources["driver_cuda"] = f"the matrix: newest CUDA {which}"


def _set_cuda(rt: Runtime, value: str, label: str, matrix: Matrix | None) -> None:
    version = CudaVersion.parse(value)
    rest = [c for c in rt.cuda if c.version.series != version.series or c.version.is_major_only]
    rt.cuda = [CudaInstall(version, "", f"given ({label})"), *rest]
    rt.sources["cuda"] = f"given ({label})"


def _set_cudnn(rt: Runtime, value: str, label: str, matrix: Matrix | None) -> None:
    version = CudnnVersion.parse(value)
    rest = [CudnnInstall(c.version, c.path, c.found_in, False) for c in rt.cudnn if c.version != version]
    rt.cudnn = [CudnnInstall(version, "", f"given ({label})", loads_first=True), *rest]
    rt.sources["cudnn"] = f"given ({label})"


def _set_gpu(rt: Runtime, value: str, label: str, matrix: Matrix | None) -> None:
    try:
        cc = ComputeCapability.parse(value)
        rt.gpus = [Gpu(f"compute capability {cc}", cc, None, f"given ({label})")]
    except VersionError:
        model, guess = matrix.gpu_typed(value) if matrix is not None else (None, None)
        if model is None:
            raise UserError(_unknown_gpu(value, label, guess)) from None
        cc_from = MATRIX_GPU_TABLE
        if guess is not None:  # not the table's own spelling: say what it was read as
            cc_from += f" ({', '.join(repr(n) for n in guess.meant or (model.name,))})"
        rt.gpus = [Gpu(value, model.compute_capability, None, f"given ({label})", cc_from)]
    rt.sources["gpus"] = f"given ({label})"


def _unknown_gpu(value: str, label: str, guess: GpuGuess | None) -> str:
    """Why a GPU name is refused, with the names nearest to it (see ``suggest.guess_gpu``)."""
    from ..suggest import did_you_mean

    capability = f"give its compute capability, e.g. {label} 8.6"
    if guess is not None and guess.ambiguous:
        return (
            f"{label} {value!r}: {guess.ambiguous} GPUs of different compute capabilities go by that name: "
            f"{did_you_mean(guess.nearest)} (or {capability})"
        )
    if guess is not None and guess.nearest:
        return f"{label} {value!r}: not a GPU the matrix knows; {did_you_mean(guess.nearest)} (or {capability})"
    return (
        f"{label} {value!r}: not a GPU the matrix knows; {capability} "
        "('nvidia-smi --query-gpu=compute_cap --format=csv' prints it)"
    )


def _set_python(rt: Runtime, value: str, label: str, matrix: Matrix | None) -> None:
    rt.python = PythonVersion.parse(value)
    rt.sources["python"] = f"given ({label})"


def _set_os(rt: Runtime, value: str, label: str, matrix: Matrix | None) -> None:
    if value not in OS_NAMES:
        raise UserError(f"{label} {value!r}: expected one of {', '.join(OS_NAMES)}")
    rt.os = value
    rt.sources["os"] = f"given ({label})"


_SETTERS = {
    "driver": _set_driver,
    "cuda": _set_cuda,
    "cudnn": _set_cudnn,
    "gpu": _set_gpu,
    "python": _set_python,
    "os": _set_os,
}
