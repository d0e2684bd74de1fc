"""cuDNN installs, all of them, and which one the dynamic linker would load first.

An install is a prefix (``/opt/apps/cudnn/5.1``, ``/usr``, a CUDA toolkit, a pip wheel's
``site-packages/nvidia/cudnn``, a conda env) holding ``include/cudnn_version.h`` or ``include/cudnn.h``
(whose CUDNN_MAJOR / CUDNN_MINOR / CUDNN_PATCHLEVEL give the full version) and ``libcudnn.so.X.Y.Z``
files (whose names give it too). Prefixes come from ``LD_LIBRARY_PATH``, ``CPATH``-like variables,
``CUDNN_ROOT``-like variables, the CUDA toolkits, the system library directories, the ldconfig cache,
conventional software trees, the cudnn modulefiles, pip ``nvidia-cudnn-cuXX`` wheels and conda ``cudnn``.
"""

from __future__ import annotations

import contextlib
import os
import re

from ..machine import CudaInstall, CudnnInstall
from ..records import field, record
from ..versions import CudnnVersion, VersionError
from .conda import CondaReport
from .context import ProbeContext
from .linker import LdCache, resolve, soname_of
from .modules import ModulesReport
from .python_env import PythonReport

ROOT_VARS = ("CUDNN_ROOT", "CUDNN_HOME", "CUDNN_PATH", "CUDNN_DIR", "CUDNN_ROOT_DIR")
INCLUDE_VARS = ("CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH")
SYSTEM_LIB_DIRS = (
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/usr/local/lib",
)
# Conventional places for more than one cuDNN: a tarball unpacked next to CUDA, and HPC software trees.
PREFIX_GLOBS = (
    "/usr/local/cudnn*",
    "/opt/cudnn*",
    "/opt/apps/cudnn/*",
    "/apps/cudnn/*",
    "/sw/cudnn/*",
    "/software/cudnn/*",
)
_LIB_TAILS = ("/lib64", "/lib", "/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/targets/x86_64-linux/lib")
_INCLUDE_TAILS = (
    "/include",
    "/include/x86_64-linux-gnu",
    "/include/aarch64-linux-gnu",
    "/targets/x86_64-linux/include",
)


@record
class _Prefix:
    path: str
    how: list[str] = field(default_factory=list)
    lib_dirs: list[str] = field(default_factory=list)
    include_dirs: list[str] = field(default_factory=list)


@record
class _Install:
    version: CudnnVersion
    path: str
    where: str
    how: list[str]
    libs: list[str] = field(default_factory=list)  # target paths of libcudnn.so* files
    loads_first: bool = False
    first_for: str = ""  # "libcudnn.so.5 (LD_LIBRARY_PATH: /opt/apps/cudnn/5.0/lib64/libcudnn.so.5)"


def probe(
    ctx: ProbeContext,
    toolkits: list[CudaInstall],
    python: PythonReport,
    conda: CondaReport,
    modules: ModulesReport,
    cache: LdCache,
) -> list[CudnnInstall]:
    prefixes: dict[str, _Prefix] = {}

    def add_prefix(path: str, how: str) -> _Prefix | None:
        if not path.startswith("/") or not ctx.is_dir(path):
            return None
        real = ctx.realpath(path)
        pre = prefixes.setdefault(real, _Prefix(real))
        if how not in pre.how:
            pre.how.append(how)
        for tail in _LIB_TAILS:
            if ctx.is_dir(real + tail) and real + tail not in pre.lib_dirs:
                pre.lib_dirs.append(real + tail)
        for tail in _INCLUDE_TAILS:
            if ctx.is_dir(real + tail) and real + tail not in pre.include_dirs:
                pre.include_dirs.append(real + tail)
        return pre

    for d in ctx.env_paths("LD_LIBRARY_PATH"):
        add_prefix(_strip(d, _LIB_TAILS), f"LD_LIBRARY_PATH ({d})")
    for var in INCLUDE_VARS:
        for d in ctx.env_paths(var):
            add_prefix(_strip(d, _INCLUDE_TAILS), f"${var} ({d})")
    for var in ROOT_VARS:
        add_prefix(ctx.env.get(var, ""), f"${var}")
    for t in toolkits:
        if not t.found_in.startswith(("pip ", "conda ")):
            add_prefix(t.path, f"CUDA {t.version} at {t.path}")
    for d in SYSTEM_LIB_DIRS:
        if ctx.glob(f"{d}/libcudnn.so*"):
            add_prefix(_strip(d, _LIB_TAILS), d)
    for path in cache.files_named("libcudnn.so."):
        add_prefix(_strip(os.path.dirname(path), _LIB_TAILS), f"ldconfig cache ({path})")
    for pattern in PREFIX_GLOBS:
        for path in ctx.glob(pattern):
            add_prefix(path, path)
    for module, d in modules.prefixes("cudnn"):
        add_prefix(_strip(d, (*_LIB_TAILS, *_INCLUDE_TAILS)), f"module {module}")
    for dist in python.distributions:
        if re.fullmatch(r"nvidia-cudnn(?:-cu\d+)?", dist.name):
            pre = add_prefix(f"{dist.location}/nvidia/cudnn", f"pip {dist.name} {dist.version}")
            if pre is not None and ctx.is_dir(f"{pre.path}/lib") and f"{pre.path}/lib" not in pre.lib_dirs:
                pre.lib_dirs.append(f"{pre.path}/lib")
    for pkg in conda.find("cudnn"):
        add_prefix(conda.prefix, f"conda cudnn {pkg.version}")

    installs: list[_Install] = []
    for pre in prefixes.values():
        installs.extend(_installs_in(ctx, pre, python, conda))
    _mark_loads_first(ctx, installs, cache)
    return [
        CudnnInstall(i.version, i.path, _found_in(i), i.loads_first, os.path.dirname(i.libs[0]) if i.libs else "")
        for i in installs
    ]


def _found_in(i: _Install) -> str:
    parts = [i.where]
    if i.first_for:
        parts.append(f"loads first for {i.first_for}")
    parts.append("found via " + ", ".join(i.how))
    return "; ".join(parts)


def _strip(d: str, tails: tuple[str, ...]) -> str:
    d = d.rstrip("/")
    for tail in sorted(tails, key=len, reverse=True):
        if d.endswith(tail):
            return d[: -len(tail)] or "/"
    return d


def header_version(text: str) -> CudnnVersion | None:
    parts = []
    for key in ("CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL"):
        m = re.search(rf"#\s*define\s+{key}\s+(\d{{1,9}})\b", text)
        if not m:
            return None
        parts.append(int(m.group(1)))
    try:
        return CudnnVersion(tuple(parts))
    except VersionError:
        return None


def _installs_in(ctx: ProbeContext, pre: _Prefix, python: PythonReport, conda: CondaReport) -> list[_Install]:
    headers: list[tuple[CudnnVersion, str]] = []
    for d in pre.include_dirs:
        for name in ("cudnn_version.h", "cudnn.h", *[os.path.basename(p) for p in ctx.glob(f"{d}/cudnn_version_v*.h")]):
            version = header_version(ctx.read_text(f"{d}/{name}") or "")
            if version is not None:
                headers.append((version, f"{d}/{name}"))
                break
    # library files by major version: the longest name says most ("libcudnn.so.5.1.10" over "libcudnn.so.5")
    libs: dict[int, list[str]] = {}
    for d in pre.lib_dirs:
        for path in ctx.glob(f"{d}/libcudnn.so.*"):
            m = re.search(r"libcudnn\.so\.(\d{1,4})\b", path)
            if m:
                libs.setdefault(int(m.group(1)), []).append(path)
    installs: list[_Install] = []
    majors = sorted(set(libs) | {v.major for v, _ in headers})
    for major in majors:
        files = libs.get(major, [])
        header = next(((v, w) for v, w in headers if v.major == major), None)
        if header is not None:
            version, where = header
        elif files:
            version, where = _version_from_names(files)
        else:
            continue
        pip = _pip_version(pre, python, major)
        if pip is not None and len(version.parts) < 3:
            version, where = pip
        conda_pkg = next((p for p in conda.find("cudnn") if pre.path == ctx.realpath(conda.prefix)), None)
        if conda_pkg is not None and len(version.parts) < 3:
            with contextlib.suppress(VersionError):
                version, where = CudnnVersion.parse(conda_pkg.version), f"conda cudnn {conda_pkg.version}"
        installs.append(_Install(version, pre.path, where, list(pre.how), sorted(files)))
    return installs


def _version_from_names(files: list[str]) -> tuple[CudnnVersion, str]:
    best = max(files, key=lambda p: (p.count("."), p))
    m = re.search(r"libcudnn\.so\.(\d{1,4}(?:\.\d{1,6}){0,2})\b", best)
    parts = tuple(int(x) for x in (m.group(1) if m else "0").split(".")[:3] if x)
    return CudnnVersion(parts), best


def _pip_version(pre: _Prefix, python: PythonReport, major: int) -> tuple[CudnnVersion, str] | None:
    for dist in python.distributions:
        if re.fullmatch(r"nvidia-cudnn(?:-cu\d+)?", dist.name) and pre.path.startswith(dist.location + "/"):
            try:
                version = CudnnVersion.parse(dist.version)
            except VersionError:
                return None
            if version.major == major:
                return version, f"pip {dist.name} {dist.version} ({dist.location})"
    return None


def _mark_loads_first(ctx: ProbeContext, installs: list[_Install], cache: LdCache) -> None:
    sonames = sorted({s for i in installs for f in i.libs if (s := soname_of(f))})
    for soname in sonames:
        hit = resolve(ctx, soname, cache)
        if hit is None:
            continue
        real = ctx.realpath(hit.path)
        for inst in installs:
            if any(ctx.realpath(f) == real for f in inst.libs):
                inst.loads_first = True
                inst.first_for = ", ".join(x for x in (inst.first_for, f"{soname} ({hit.how}: {hit.path})") if x)
                break
        else:
            ctx.note(f"{soname}: the linker would load {hit.path} ({hit.how}), which no install here accounts for")
