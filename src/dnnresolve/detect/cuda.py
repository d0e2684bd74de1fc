"""CUDA toolkits and runtimes, all of them, the one in use first.

Where to look, in this order (the first is the one a build or ``nvcc`` would use): ``nvcc`` on PATH,
``CUDA_HOME`` / ``CUDA_PATH`` / ``CUDA_ROOT``, ``libcudart.so.*`` on ``LD_LIBRARY_PATH``, ``/usr/local/cuda``,
the ldconfig cache, ``/usr/local/cuda-*`` and other conventional prefixes, the directories that the
cuda modulefiles name, then pip ``nvidia-cuda-runtime-cuXX`` wheels and conda packages.
The version of a toolkit directory comes from its files: ``version.json`` (11.1+), ``version.txt``
("CUDA Version 8.0.61"), the ``nvidia_cuda_runtime-*.dist-info`` of 13.0+ installs, ``CUDART_VERSION``
in ``cuda_runtime_api.h``, or the ``libcudart.so.X.Y.Z`` name; ``nvcc --version`` only when they are silent.
"""

from __future__ import annotations

import json
import os
import re

from ..machine import CudaInstall
from ..records import field, record
from ..versions import CudaVersion, VersionError
from .conda import CondaReport
from .context import ProbeContext
from .linker import LdCache
from .modules import ModulesReport
from .python_env import PythonReport

HOME_VARS = ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR")
# Conventional places for more than one toolkit: the NVIDIA installer's, and HPC software trees.
TOOLKIT_GLOBS = (
    "/usr/local/cuda-*",
    "/opt/cuda",
    "/opt/cuda-*",
    "/opt/nvidia/cuda*",
    "/opt/apps/cuda/*",
    "/apps/cuda/*",
    "/sw/cuda/*",
    "/software/cuda/*",
)
CONDA_CUDA_PACKAGES = ("cuda-cudart", "cudatoolkit", "cuda-runtime", "cuda-toolkit")


@record
class _Found:
    path: str  # real path of the toolkit directory
    how: list[str] = field(default_factory=list)


def probe(
    ctx: ProbeContext, python: PythonReport, conda: CondaReport, modules: ModulesReport, cache: LdCache
) -> list[CudaInstall]:
    roots: dict[str, _Found] = {}

    def add(path: str, how: str) -> None:
        if not ctx.is_dir(path):
            return
        real = ctx.realpath(path)
        found = roots.setdefault(real, _Found(real))
        if how not in found.how:
            found.how.append(how)

    nvcc = ctx.which("nvcc")
    if nvcc:
        add(_toolkit_of_nvcc(ctx, nvcc), f"nvcc on PATH ({nvcc})")
    for var in HOME_VARS:
        value = ctx.env.get(var, "")
        if value.startswith("/"):
            add(value, f"${var}")
    for d in ctx.env_paths("LD_LIBRARY_PATH"):
        if ctx.glob(f"{d}/libcudart.so.*"):
            add(_prefix_of_lib_dir(d), f"LD_LIBRARY_PATH ({d})")
    add("/usr/local/cuda", "/usr/local/cuda")
    for path in cache.files_named("libcudart.so."):
        add(_prefix_of_lib_dir(os.path.dirname(path)), f"ldconfig cache ({path})")
    for pattern in TOOLKIT_GLOBS:
        for path in ctx.glob(pattern):
            if _looks_like_toolkit(ctx, path):
                add(path, path)
    for module, d in modules.prefixes("cuda"):
        if _looks_like_toolkit(ctx, d):
            add(d, f"module {module}")

    installs: list[CudaInstall] = []
    for found in roots.values():
        if os.path.basename(found.path) in ("lib", "lib64") or found.path in ("/usr", "/"):
            where, version = _version_from_libs(ctx, found.path)
        else:
            where, version = _toolkit_version(ctx, found.path)
        if version is None:
            ctx.note(f"CUDA at {found.path}: version unknown ({', '.join(found.how)})")
            continue
        installs.append(CudaInstall(version, found.path, f"{where}; found via {', '.join(found.how)}"))
    installs.extend(_pip_runtimes(ctx, python))
    installs.extend(_conda_runtimes(conda))
    return installs


def _toolkit_of_nvcc(ctx: ProbeContext, nvcc: str) -> str:
    """The toolkit an nvcc belongs to; through a wrapper script (``exec /usr/local/cuda-13.0/bin/nvcc "$@"``,
    as some container images install in /usr/local/bin) to the nvcc it runs."""
    real = ctx.realpath(nvcc)
    root = os.path.dirname(os.path.dirname(real))
    if _looks_like_toolkit(ctx, root) and ctx.exists(f"{root}/include/cuda_runtime_api.h"):
        return root
    head = ctx.read_text(real) or ""
    if head.startswith("#!") and len(head) < 4096:
        m = re.search(r"(/[\w.+\-/]+)/bin/nvcc\b", head)
        if m and _looks_like_toolkit(ctx, m.group(1)):
            return m.group(1)
    return root


def _looks_like_toolkit(ctx: ProbeContext, path: str) -> bool:
    return any(ctx.exists(f"{path}/{p}") for p in ("bin/nvcc", "version.txt", "version.json", "include/cuda.h"))


def _prefix_of_lib_dir(d: str) -> str:
    d = d.rstrip("/")
    for tail in ("/lib64", "/lib"):
        if d.endswith(tail):
            return d[: -len(tail)] or "/"
    return d


def _toolkit_version(ctx: ProbeContext, root: str) -> tuple[str, CudaVersion | None]:
    text = ctx.read_text(f"{root}/version.json")
    if text is not None:
        version = _from_version_json(text)
        if version is not None:
            return f"{root}/version.json", version
    text = ctx.read_text(f"{root}/version.txt")
    if text is not None:
        m = re.search(r"CUDA Version\s+(\d+\.\d+(?:\.\d+)?)", text)
        version = _parse(m.group(1)) if m else None
        if version is not None:
            return f"{root}/version.txt", version
        ctx.note(f"{root}/version.txt: no CUDA version in it")
    for info in ctx.glob(f"{root}/dist-info/nvidia_cuda_runtime-*.dist-info"):
        m = re.search(r"nvidia_cuda_runtime-(\d+\.\d+(?:\.\d+)?)", info)
        version = _parse(m.group(1)) if m else None
        if version is not None:
            return info, version
    for header in (f"{root}/include/cuda_runtime_api.h", f"{root}/include/cuda.h"):
        m = re.search(r"#define\s+CUDA(?:RT)?_VERSION\s+(\d+)", ctx.read_text(header) or "")
        if m:
            try:
                return f"{header} ({m.group(1)})", CudaVersion.from_encoded(m.group(1))
            except VersionError:
                pass
    where, version = _version_from_libs(ctx, root)
    if version is not None:
        return where, version
    nvcc = f"{root}/bin/nvcc"
    if ctx.is_file(nvcc) and ctx.run_programs:
        result = ctx.run([nvcc, "--version"])
        m = re.search(r"release \d+\.\d+, V(\d[\d.]*)", result.stdout)
        version = _parse(m.group(1).rstrip(".")) if m else None
        if result.ok and version is not None:
            return f"{nvcc} --version", version
        ctx.note(f"{nvcc} --version: {result.why_not() if not result.ok else 'no release in its output'}")
    return "", None


def _parse(text: str) -> CudaVersion | None:
    try:
        return CudaVersion.parse(text)
    except VersionError:
        return None


def _from_version_json(text: str) -> CudaVersion | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    for key in ("cuda_cudart", "cuda"):
        entry = data.get(key)
        if isinstance(entry, dict) and isinstance(entry.get("version"), str):
            parts = entry["version"].split(".")
            try:
                # "cuda": "11.8.20220929" carries a date, not a patch level
                return CudaVersion.parse(".".join(parts[:3] if key == "cuda_cudart" else parts[:2]))
            except VersionError:
                continue
    return None


def _version_from_libs(ctx: ProbeContext, root: str) -> tuple[str, CudaVersion | None]:
    best: tuple[tuple[int, ...], str] | None = None
    for d in (root, f"{root}/lib64", f"{root}/lib", f"{root}/targets/x86_64-linux/lib"):
        for path in ctx.glob(f"{d}/libcudart.so.*"):
            m = re.search(r"libcudart\.so\.(\d{1,6}\.\d{1,6}(?:\.\d{1,6})?)$", path)
            if m:
                key = tuple(int(p) for p in m.group(1).split("."))
                if best is None or key > best[0]:
                    best = (key, path)
    if best is None:
        return "", None
    return best[1], CudaVersion(best[0])


def _pip_runtimes(ctx: ProbeContext, python: PythonReport) -> list[CudaInstall]:
    out = []
    for dist in python.distributions:
        m = re.fullmatch(r"nvidia-cuda-runtime(?:-cu(\d+))?", dist.name)
        if not m:
            continue
        try:
            version = CudaVersion.parse(".".join(dist.version.split(".")[:3]))
        except VersionError:
            ctx.note(f"pip {dist.name} {dist.version}: not a CUDA version")
            continue
        path = f"{dist.location}/nvidia/cuda_runtime"
        out.append(CudaInstall(version, path, f"pip {dist.name} {dist.version} ({dist.location})"))
    return out


def _conda_runtimes(conda: CondaReport) -> list[CudaInstall]:
    out: list[CudaInstall] = []
    for pkg in conda.find(*CONDA_CUDA_PACKAGES):
        try:
            version = CudaVersion.parse(".".join(pkg.version.split(".")[:3]))
        except VersionError:
            continue
        if any(i.version.series == version.series for i in out):
            continue  # cuda-runtime and cuda-cudart of one release: one CUDA
        out.append(CudaInstall(version, conda.prefix, f"conda {pkg.name} {pkg.version} ({pkg.record})"))
    return out
