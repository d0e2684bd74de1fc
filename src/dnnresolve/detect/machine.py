"""Reading a machine: driver, GPUs, CUDA toolkits, cuDNN installs, Python, frameworks, conda, modules.

``detect_runtime()`` starts the programs it will need at once (nvidia-smi twice, ldconfig, the target
Python, the module tool), each with a timeout, reads files while they run, then collects their
answers; NVML is asked in a thread of its own. A probe that fails leaves a note, never an exception.

Under ``root`` (``--root DIR``) every path is read under DIR and no program of this machine describes
the target, so none runs: only this machine's ``ldconfig`` reads ``DIR/etc/ld.so.cache``. To emulate a
machine whose programs are copied or scripted under DIR, ``DNNRESOLVE_ROOT_PROGRAMS=1`` runs the
programs found under DIR's PATH directories.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from ..errors import UserError
from ..indexes import PipContext
from ..machine import CudaInstall, CudnnInstall, Gpu, InstalledCode, InstalledPackage, Module, Runtime
from ..pkgname import canonicalize_name
from ..versions import ComputeCapability, CudaVersion, VersionError, parse_build_tag
from . import conda, cuda, cudnn, driver, gpu, linker, modules, nvml, pipconf, python_env, smi
from .context import Job, ProbeContext
from .overrides import apply_env_overrides, runtime_from_flags

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    from ..matrix import Matrix

    T = TypeVar("T")


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


__all__ = ["detect_runtime", "installed_gpu_code", "runtime_from_flags", "start_detection"]

ROOT_PROGRAMS_ENV = "DNNRESOLVE_ROOT_PROGRAMS"
ROOT_ENV = "DNNRESOLVE_ROOT"  # the same as --root, for a container or chroot whose files are the machine's


def root_in(root: str | None, env: Mapping[str, str]) -> tuple[str | None, str]:
    """The root to read under, and what named it: ``--root``, else DNNRESOLVE_ROOT in ``env``."""
    if root is None and env.get(ROOT_ENV):
        return env[ROOT_ENV], ROOT_ENV
    return root, "--root"


def start_detection(
    root: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 5.0,
    *,
    run_programs: bool | None = None,
    given: frozenset[str] = frozenset(),
) -> ProbeContext:
    """A probe context whose programs (nvidia-smi, the target Python, ldconfig, the module tool) already run, for
    ``detect_runtime(started=...)``: a command starts them before it loads its data, so that the seconds they take
    pass while it does. ``close()`` it if detection never comes."""
    env = dict(os.environ if env is None else env)
    root, named_by = root_in(root, env)
    if root is not None and not os.path.isdir(root):
        raise UserError(f"{named_by} {root}: not a directory")
    if run_programs is None:
        run_programs = root is None or env.get(ROOT_PROGRAMS_ENV) == "1"
    ctx = ProbeContext(root, env, timeout, run_programs)
    try:
        _start(ctx, given)
    except BaseException:
        ctx.close()
        raise
    return ctx


def detect_runtime(
    root: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 5.0,
    *,
    matrix: Matrix | None = None,
    run_programs: bool | None = None,
    given: frozenset[str] = frozenset(),
    started: ProbeContext | None = None,
    pip: bool = True,
) -> Runtime:
    """What the machine (or the copy of one under ``root``) provides, with where each fact came from.

    ``env`` is the target's environment (default: this process's). ``matrix`` names GPUs and frameworks;
    the packaged one is loaded when it is not given. The DNNRESOLVE_* overrides in ``env`` apply last.
    ``given``: components the caller's flags replace anyway ("cuda" and "cudnn" together, "driver" and "gpu"
    together); their probes do not run. ``started``: what ``start_detection`` returned for the same arguments
    (which it then replaces). ``pip``: read pip's configuration (``Runtime.pip``); a caller whose answer does not
    depend on the indexes (explain) leaves it None.
    """
    ctx = started or start_detection(root, env, timeout, run_programs=run_programs, given=given)
    env = ctx.env
    try:
        matrix = matrix if matrix is not None else _packaged_matrix(ctx)
        rt = _detect(ctx, matrix, given, pip)
    finally:
        ctx.close()
    return apply_env_overrides(rt, env, matrix)


def installed_gpu_code(
    runtime: Runtime, names: set[str], root: str | None = None, env: Mapping[str, str] | None = None
) -> tuple[list[InstalledCode], list[str]]:
    """The GPU code the libraries of the installed packages ``runtime`` lists, of those named in ``names``,
    carry (``doctor``), with notes on what could not be read. Files only: no program runs."""
    from . import gpucode  # its reader's dataclasses are for doctor only, not every command's start-up

    env = dict(os.environ if env is None else env)
    ctx = ProbeContext(root_in(root, env)[0], env, 5.0, False)
    try:
        return gpucode.probe(ctx, runtime.packages, names), ctx.notes
    finally:
        ctx.close()


def _start(ctx: ProbeContext, given: frozenset[str]) -> None:
    """Start the probes' programs in the background (each runs once per context, however often asked)."""
    libraries = not {"cuda", "cudnn"} <= given  # flags name both: no toolkit or library probe runs
    devices = not {"driver", "gpu"} <= given  # flags name both: no nvidia-smi, no NVML
    for starter, wanted in ((smi.start, devices), (python_env.start, True), (linker.start, libraries)):
        if wanted:
            starter(ctx)
    modules.start(ctx)


def _detect(ctx: ProbeContext, matrix: Matrix | None, given: frozenset[str] = frozenset(), pip: bool = True) -> Runtime:
    libraries = not {"cuda", "cudnn"} <= given  # flags name both: no toolkit or library probe runs
    devices = not {"driver", "gpu"} <= given  # flags name both: no nvidia-smi, no NVML
    # a daemon thread: NVML can hang inside the driver, and that must not keep the process alive (where no driver is
    # visible the answer is known at once: no thread)
    nvml_known = nvml.not_asked(ctx) if devices else nvml.NvmlReport()
    nvml_job = Job(lambda: nvml.probe(ctx), "dnnresolve-nvml-probe") if nvml_known is None else None

    drv = _guarded(ctx, "driver", lambda: driver.probe_system(ctx), driver.DriverReport)
    py = _guarded(ctx, "python", lambda: python_env.probe(ctx), python_env.PythonReport)
    env_conda = _guarded(ctx, "conda", lambda: conda.probe(ctx), conda.CondaReport)
    mods = _guarded(ctx, "modules", lambda: modules.probe(ctx), modules.ModulesReport)
    toolkits: list[CudaInstall] = []
    cudnns: list[CudnnInstall] = []
    if libraries:
        cache = _guarded(ctx, "ldconfig", lambda: linker.read_ld_cache(ctx), linker.LdCache)
        toolkits = _guarded(ctx, "cuda", lambda: cuda.probe(ctx, py, env_conda, mods, cache), list)
        cudnns = _guarded(ctx, "cudnn", lambda: cudnn.probe(ctx, toolkits, py, env_conda, mods, cache), list)
    smi_report = _guarded(ctx, "nvidia-smi", lambda: smi.probe(ctx), smi.SmiReport) if devices else smi.SmiReport()
    nvml_report = (
        nvml_known
        if nvml_known is not None
        else nvml_job.result(lambda: nvml.NvmlReport(failure="NVML: probe failed"))
        if nvml_job
        else nvml.NvmlReport()
    )
    _guarded(ctx, "driver", lambda: driver.merge_programs(ctx, drv, nvml_report, smi_report), lambda: None)
    gpus: list[Gpu] = _guarded(
        ctx, "gpu", lambda: gpu.probe(ctx, nvml_report, smi_report, _capability_lookup(matrix)), list
    )

    rt = Runtime(os="linux")
    rt.system = drv.system
    if drv.system:
        rt.sources["system"] = drv.system_from
    rt.driver, rt.driver_cuda = drv.driver, drv.cuda
    if drv.driver is not None:
        rt.sources["driver"] = drv.driver_from
    if drv.cuda is not None:
        rt.sources["driver_cuda"] = drv.cuda_from
    for failure in (smi_report.failure, nvml_report.failure):
        if failure and not _expected_absence(failure, drv, rt):
            ctx.note(failure)
    if drv.driver is None and drv.system != "jetson":
        ctx.note("no NVIDIA driver found (no kernel module files, NVML or nvidia-smi answer)")
    rt.gpus = gpus
    if gpus:
        rt.sources["gpus"] = gpus[0].found_in
    rt.cuda = toolkits
    rt.cudnn = cudnns
    rt.python = py.version
    if py.version is not None:
        rt.sources["python"] = py.version_from
    rt.python_executable, rt.python_implementation = py.executable, py.implementation
    rt.machine, rt.glibc = py.machine, py.glibc
    rt.packages = _frameworks(py, env_conda, matrix)
    rt.conda_prefix, rt.conda_env = env_conda.prefix, env_conda.env_name
    if env_conda.prefix:
        rt.sources["conda"] = "$CONDA_PREFIX"
    pinned = conda.env_cuda(env_conda)
    if pinned is not None:
        rt.conda_cuda, rt.sources["conda_cuda"] = pinned
    rt.modules = [Module(m.name, m.version, m.loaded, mods.files.get(m.full, "")) for m in mods.modules]
    if pip:
        rt.pip = _guarded(ctx, "pip", lambda: pipconf.pip_context(ctx.env, ctx.root), PipContext)
    if any(not m.loaded for m in mods.modules):
        rt.sources["modules"] = "$MODULEPATH" + (f", {mods.tool} avail" if mods.tool and ctx.run_programs else "")
    rt.notes = ctx.notes
    if ctx.root is not None:
        rt.sources["root"] = ctx.root
    return rt


def _expected_absence(failure: str, drv: driver.DriverReport, rt: Runtime) -> bool:
    """ "Not found" is news only when something says there should be a driver."""
    quiet = ("not found", "not used under --root", "turned off")
    return drv.driver is None and any(q in failure for q in quiet)


def _guarded(ctx: ProbeContext, name: str, probe: Callable[[], T], empty: Callable[[], T]) -> T:
    """Run one probe; an error nobody foresaw (a machine stranger than our fixtures) becomes a note and the
    probe's empty answer, so the other probes still report."""
    try:
        return probe()
    except Exception as exc:  # the promise: a failed probe is a note, never a crash
        ctx.note(f"{name} probe failed: {type(exc).__name__}: {first_line(str(exc))}")
        return empty()


def _packaged_matrix(ctx: ProbeContext) -> Matrix | None:
    from ..matrix import load_matrix

    try:
        return load_matrix()
    except UserError as exc:
        ctx.note(f"matrix not loaded ({exc}); GPU names and frameworks are read without it")
        return None


def _capability_lookup(matrix: Matrix | None) -> Callable[[str], ComputeCapability | None]:
    def lookup(name: str) -> ComputeCapability | None:
        if matrix is None:
            return None
        model = matrix.gpu(name)
        return model.compute_capability if model is not None else None

    return lookup


def _frameworks(
    py: python_env.PythonReport, env_conda: conda.CondaReport, matrix: Matrix | None
) -> list[InstalledPackage]:
    """From pip then conda metadata: the frameworks the matrix knows, any package that depends on nvidia-*
    wheels or carries a CUDA build tag (+cu118), and the nvidia-* wheels themselves."""
    known = {canonicalize_name(n) for n in matrix.packages()} if matrix is not None else set()

    def wanted(d: python_env.Distribution) -> bool:
        return (
            d.name in known
            or d.name.startswith("nvidia-")
            or d.requires_nvidia
            or _build_kind(d.version) in ("cuda", "rocm")
        )

    out = {d.name: InstalledPackage(d.name, d.version, d.location) for d in py.distributions if wanted(d)}
    # conda's names map to the matrix's through its conda recipes (pytorch -> torch); read only where conda is
    conda_names = matrix.conda_names() if matrix is not None and env_conda.packages else {}
    held = conda.env_cuda(env_conda)
    for pkg in env_conda.packages:
        name = canonicalize_name(pkg.name)
        if name not in known:
            name = _conda_package(name, pkg.version, held[0] if held else None, matrix) or conda_names.get(name, name)
        if name not in known:
            continue
        pip = out.get(name)
        # a conda package installs its own dist-info: the same version there is conda's, another one pip's over it
        if pip is None or pip.version.split("+")[0] == pkg.version:
            out[name] = InstalledPackage(name, pkg.version, pkg.record, "conda", pkg.build, pkg.channel)
    return list(out.values())


def _conda_package(name: str, version: str, held: CudaVersion | None, matrix: Matrix | None) -> str | None:
    """conda-forge's ``cupy`` is the build of the environment's CUDA: the pip package of that CUDA (cupy-cuda11x)."""
    if held is None or matrix is None:
        return None
    from ..conda_cuda import per_cuda_package

    return per_cuda_package(name, held, matrix.packages(), lambda p: bool(matrix.find(p, f"=={version}")))


def _build_kind(version: str) -> str:
    try:
        return parse_build_tag(version).kind
    except VersionError:  # a local label like "+cust" that only looks like a CUDA tag
        return "other"
