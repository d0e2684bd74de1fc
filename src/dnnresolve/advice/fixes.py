"""Fixes for a diagnosis made concrete for a machine, as ordered steps.

``fixes_for`` takes the catalog's generic steps (``explain.fixes``, filled with the decoded facts) and, given a
runtime (what the machine has) and the matrix, puts concrete steps in their place: the exact ``module load``
line when the machine lists a fitting module, the LD_LIBRARY_PATH line for a fitting install, the releases
built for what the machine already has. Pure: no I/O.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Callable

from ..compat import CudnnRule, cudnn_compatible
from ..explain.catalog import Catalog, load_catalog
from ..explain.diagnosis import Diagnosis
from ..explain.fixes import Step, generic_fixes
from ..machine import CudnnInstall, Module, Runtime
from ..matrix import Matrix
from ..modulenames import read_module
from ..versions import CudaVersion, CudnnVersion

__all__ = ["fixes_for"]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Union

    Fits = Callable[
        [Union[CudnnVersion, CudaVersion]], bool
    ]  # does a listed version (module, install) fit what is wanted


def fixes_for(
    diagnosis: Diagnosis, runtime: Runtime | None, matrix: Matrix | None, catalog: Catalog | None = None
) -> list[str]:
    cat = catalog or load_catalog()
    entry = cat.entry(diagnosis.id)
    concrete: list[Step] = []
    if runtime is not None:
        concrete += _from_runtime(diagnosis, runtime, entry.cudnn_rule)
    if matrix is not None:
        concrete += _from_matrix(diagnosis, matrix, runtime, cat)
    return generic_fixes(diagnosis, cat, concrete)


# ---------------------------------------------------------------- from the machine


def _from_runtime(d: Diagnosis, runtime: Runtime, rule: CudnnRule | None) -> list[Step]:
    steps: list[Step] = []
    if d.kind == "cudnn_version_mismatch" and "built" in d.facts:
        built = CudnnVersion.parse(d.facts["built"])
        fits = _cudnn_fits(built, rule or CudnnRule.TORCH)
        steps += _module_steps(runtime.modules, "cudnn", fits, f"cuDNN {d.facts.get('want', built.series)}")
        for inst in runtime.cudnn:
            if fits(inst.version) and inst.path:
                steps.append(("path", f"put cuDNN {inst.version} first: {_put_first(inst, runtime.os)}"))
            elif fits(inst.version):
                steps.append(("manual", f"the cuDNN {inst.version} you named fits: make sure it is the one loaded"))
    wanted_cuda = d.facts.get("want_cuda") if d.kind == "cuda_version_mismatch" else d.facts.get("cuda")
    if d.kind in ("cuda_version_mismatch", "missing_library") and wanted_cuda:
        want = CudaVersion.parse(wanted_cuda)

        def cuda_fits(v: CudaVersion) -> bool:
            # libcudart.so.11.0 is in every 11.x; a one-part name ("12") takes the whole major
            if want.is_major_only or (d.kind == "missing_library" and want.major >= 11):
                return v.major == want.major
            return v.series == want.series

        steps += _module_steps(runtime.modules, "cuda", lambda v: cuda_fits(CudaVersion(v.parts)), f"CUDA {want}")
        for cuda in runtime.cuda:
            if cuda_fits(cuda.version) and cuda.path:
                lib = posixpath.join(cuda.path, "bin" if runtime.os == "windows" else "lib64")
                steps.append(("path", f"use the CUDA {cuda.version} at {cuda.path}: {_ld_path(lib, runtime.os)}"))
            elif cuda_fits(cuda.version) and d.kind == "missing_library":
                where = "bin directory on PATH" if runtime.os == "windows" else "lib64 directory on LD_LIBRARY_PATH"
                steps.append(("manual", f"the CUDA {cuda.version} you named provides it: put its {where}"))
    if d.kind == "missing_library" and d.facts.get("cudnn", "").isdigit() and len(d.facts["cudnn"]) <= 4:
        major = int(d.facts["cudnn"])
        steps += _module_steps(runtime.modules, "cudnn", lambda v: v.major == major, f"cuDNN {major}")
        for inst in runtime.cudnn:
            if inst.version.major == major and inst.path:
                steps.append(("path", f"put cuDNN {inst.version} first: {_put_first(inst, runtime.os)}"))
    return steps


def _cudnn_fits(built: CudnnVersion, rule: CudnnRule) -> Fits:
    return lambda v: cudnn_compatible(built, CudnnVersion(v.parts[:3]), rule)


def _module_steps(modules: list[Module], family: str, fits: Fits, what: str) -> list[Step]:
    """`module load` (or `module swap`) for the best listed module of ``family`` that ``fits``."""
    candidates = []
    for mod in modules:
        offer = read_module(mod)  # the naming styles sites use: cudnn/5.1-cuda8.0, cuDNN/8.2.1.32-CUDA-11.3.1
        if offer is None or offer.component != family:
            continue
        version = offer.cudnn if family == "cudnn" else offer.cuda
        if version is not None and fits(version):
            candidates.append((version, mod))
    if not candidates:
        return []
    loaded = [m for m in modules if m.loaded and (o := read_module(m)) is not None and o.component == family]
    fitting_loaded = [mod for _, mod in candidates if mod.loaded]
    if fitting_loaded:
        return [("manual", f"{fitting_loaded[0].full} is loaded and fits: check that nothing else comes first")]
    best = min(candidates, key=lambda c: c[0])[1]  # the least change: the oldest that fits
    if loaded:
        return [("module", f"load {what}: {shlex.join(['module', 'swap', loaded[0].full, best.full])}")]
    return [("module", f"load {what}: {shlex.join(['module', 'load', best.full])}")]


def _put_first(inst: CudnnInstall, os_name: str) -> str:
    return _ld_path(inst.lib_dir or _lib_dir(inst.path), os_name)


def _lib_dir(path: str) -> str:
    base = posixpath.basename(path.rstrip("/"))
    return posixpath.dirname(path) if (".so" in base or base.endswith((".dll", ".h"))) else path


def _ld_path(directory: str, os_name: str) -> str:
    if os_name == "windows":
        return f'set "PATH={directory};%PATH%"'
    return f"export LD_LIBRARY_PATH={shlex.quote(directory)}:$LD_LIBRARY_PATH"


# ---------------------------------------------------------------- from the matrix


def _from_matrix(d: Diagnosis, matrix: Matrix, runtime: Runtime | None, cat: Catalog) -> list[Step]:
    steps: list[Step] = []
    package = cat.packages.get(d.framework or "", "")
    if d.kind == "cudnn_version_mismatch" and package and "found_series" in d.facts:
        have = CudnnVersion.parse(d.facts["found_series"])
        rows = [
            f
            for f in matrix.using_cudnn(have)
            if any(n == package or n.startswith(package + "-") for n in f.names)
            and (runtime is None or runtime.os in f.os)
        ]
        if rows:
            names = ", ".join(f"{f.package}=={f.version}" for f in rows[:3])
            steps.append(("pip", f"or install a {d.framework_name} release built for cuDNN {have}: {names}"))
    if "want_cuda_major" in d.facts and package and runtime is not None and runtime.active_cuda is not None:
        build = _build_for_machine(matrix, package, runtime)
        if build is not None:
            steps.append(("manual", build))
    if d.kind == "driver_too_old" and "want_cuda" in d.facts:
        want = CudaVersion.parse(d.facts["want_cuda"])
        required = matrix.driver_table(runtime.os if runtime else "linux").min_driver_for(want)
        if required is not None:
            text = f"upgrade the NVIDIA driver to {required} or newer, the first that runs CUDA {want} (needs root)"
            steps.append(("driver", text))
    if d.kind == "driver_too_old" and runtime is not None and runtime.driver is not None:
        newest = matrix.driver_table(runtime.os).newest_cuda_for(runtime.driver)
        if newest is not None:
            steps.append(
                (
                    "manual",
                    f"driver {runtime.driver} runs CUDA {newest} at most: use a build for CUDA {newest} or "
                    "older, or upgrade the driver (needs root)",
                )
            )
    return steps


def _build_for_machine(matrix: Matrix, package: str, runtime: Runtime) -> str | None:
    """The newest release of ``package`` with a pip build for the CUDA major (and cuDNN) this machine has, for a
    message that names the majors the installed build wanted (onnxruntime's "Require cuDNN 9.* and CUDA 12.*")."""
    from ..solve.checks import cudnn_rule_for  # the framework's own rule, its default included

    cuda = runtime.active_cuda
    cudnn = runtime.active_cudnn
    if cuda is None:
        return None
    for row in reversed(matrix.releases(package, runtime.os)):
        for variant in row.cuda if row.on_pypi else ():
            rec = row.recipe(variant)
            builds = row.cudnn_for(variant)
            rule = cudnn_rule_for(row)
            if variant.major != cuda.version.major or rec is None:
                continue
            if cudnn is not None and builds and not any(cudnn_compatible(b, cudnn.version, rule) for b in builds):
                continue
            argv = ["python", "-m", "pip", "install", rec.requirement]
            argv += ["--index-url", rec.index_url] if rec.index_url else []
            have = f"CUDA {cuda.version}" + (f" and cuDNN {cudnn.version}" if cudnn is not None else "")
            return f"this machine has {have}: {row.package} {row.version} is built for them ({shlex.join(argv)})"
    return None
