"""A runtime profile: ``dnnresolve detect --json`` written on one machine, read back by ``plan`` and
``check --target FILE`` on another. ``runtime_to_json`` and ``runtime_from_json`` are inverses; reading
validates every field and names the file and field it cannot use. Values and where they were found are
separate fields (``found_in``, ``compute_capability_from``, ``sources``); ``machine_json`` is the short form
the other commands' JSON carries."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

from .errors import UserError
from .indexes import IndexContext, PipContext
from .machine import MATRIX_GPU_TABLE, CudaInstall, CudnnInstall, Gpu, InstalledPackage, Module, Runtime
from .versions import (
    ComputeCapability,
    CudaVersion,
    CudnnVersion,
    DriverVersion,
    PythonVersion,
    VersionError,
)

SCHEMA = "dnnresolve-runtime/1"
T = TypeVar("T")


def runtime_to_json(rt: Runtime) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "os": rt.os,
        "system": rt.system,
        "driver": _s(rt.driver),
        "driver_cuda": _s(rt.driver_cuda),
        "gpus": [
            {
                "name": g.name,
                "compute_capability": _s(g.compute_capability),
                "memory_mib": g.memory_mib,
                "found_in": g.found_in,
                "compute_capability_from": g.capability_from or None,
            }
            for g in rt.gpus
        ],
        "cuda": [{"version": str(c.version), "path": c.path, "found_in": c.found_in} for c in rt.cuda],
        "cudnn": [
            {
                "version": str(c.version),
                "path": c.path,
                "found_in": c.found_in,
                "loads_first": c.loads_first,
                "lib_dir": c.lib_dir,
            }
            for c in rt.cudnn
        ],
        "python": {
            "version": _s(rt.python),
            "implementation": rt.python_implementation,
            "executable": rt.python_executable,
            "machine": rt.machine,
            "glibc": rt.glibc,
        },
        "packages": [_package_json(p) for p in rt.packages],
        "conda": {"prefix": rt.conda_prefix, "env": rt.conda_env, "cuda": _s(rt.conda_cuda)},
        "modules": [
            {"name": m.name, "version": m.version, "loaded": m.loaded, "modulefile": m.modulefile} for m in rt.modules
        ],
        "pip": _pip_json(rt.pip),
        "notes": list(rt.notes),
        "sources": dict(rt.sources),
    }


def _pip_json(pip: PipContext | None) -> dict[str, Any] | None:
    if pip is None:
        return None
    return {
        "index_url": pip.index.index_url,
        "extra_index_urls": list(pip.index.extra_index_urls),
        "find_links": list(pip.index.find_links),
        "no_index": pip.index.no_index,
        "from": dict(pip.origins),
    }


def machine_json(rt: Runtime) -> dict[str, Any]:
    """The facts a verdict is made of (the GPU, CUDA and cuDNN in use), each value alone, and in ``sources``
    where each came from: the ``target`` of ``check --json``, the ``machine`` of ``plan`` and ``doctor``."""
    gpu, cuda, cudnn = (rt.gpus[0] if rt.gpus else None), rt.active_cuda, rt.active_cudnn
    values: dict[str, Any] = {
        "os": rt.os,
        "driver": _s(rt.driver),
        "driver_cuda": _s(rt.driver_cuda),
        "gpu": gpu.name if gpu else None,
        "compute_capability": _s(gpu.compute_capability) if gpu else None,
        "cuda": _s(cuda.version) if cuda else None,
        "cudnn": _s(cudnn.version) if cudnn else None,
        "python": _s(rt.python),
        "python_executable": rt.python_executable or None,
    }
    sources = fact_sources(rt)
    return {**values, "sources": {k: sources[k] for k in values if values[k] is not None and sources.get(k)}}


def fact_sources(rt: Runtime) -> dict[str, str]:
    """Where each fact of ``machine_json`` came from (a file, a program, a flag, the matrix); a fact nobody
    stated (the default operating system) has none."""
    gpu, cuda, cudnn = (rt.gpus[0] if rt.gpus else None), rt.active_cuda, rt.active_cudnn
    out = {k: rt.sources.get(k, "") for k in ("os", "driver", "driver_cuda", "python")}
    out["gpu"] = gpu.found_in if gpu else ""
    out["compute_capability"] = (gpu.capability_from or gpu.found_in) if gpu else ""
    out["cuda"] = cuda.found_in if cuda else ""
    out["cudnn"] = cudnn.found_in if cudnn else ""
    return {k: v for k, v in out.items() if v}


def _package_json(p: InstalledPackage) -> dict[str, Any]:
    d: dict[str, Any] = {"name": p.name, "version": p.version, "location": p.location}
    if p.by_conda:
        d["conda"] = {"build": p.build, "channel": p.channel}
    try:
        tag = p.build_tag()
    except VersionError:
        return d
    if tag.kind:
        d["build"] = {"kind": tag.kind, "cuda": _s(tag.cuda), "label": tag.label}
    return d


def _s(value: object) -> str | None:
    return None if value is None else str(value)


class _Reader:
    """Typed access to a profile's fields; every failure names the file and the field."""

    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, field: str, message: str) -> UserError:
        return UserError(f"field {field!r}: {message}", self.file)

    def get(self, obj: dict[str, Any], key: str, kind: type[T], where: str, default: T) -> T:
        value = obj.get(key, default)
        if value is None:
            return default
        if kind is int and isinstance(value, bool):
            raise self.fail(f"{where}{key}", "expected an integer")
        if not isinstance(value, kind):
            raise self.fail(f"{where}{key}", f"expected {_kind_name(kind)}, got {type(value).__name__}")
        return value

    def version(self, obj: dict[str, Any], key: str, parse: Callable[[str], T], where: str) -> T | None:
        text = self.get(obj, key, str, where, "")
        if not text:
            return None
        try:
            return parse(text)
        except VersionError as exc:
            raise self.fail(f"{where}{key}", str(exc)) from None

    def items(self, obj: dict[str, Any], key: str) -> list[tuple[str, dict[str, Any]]]:
        values = self.get(obj, key, list, "", [])
        out = []
        for i, item in enumerate(values):
            if not isinstance(item, dict):
                raise self.fail(f"{key}[{i}]", f"expected an object, got {type(item).__name__}")
            out.append((f"{key}[{i}].", item))
        return out


def _kind_name(kind: type) -> str:
    return {str: "a string", int: "an integer", bool: "true or false", list: "a list", dict: "an object"}.get(
        kind, kind.__name__
    )


def runtime_from_json(data: Any, file: str) -> Runtime:
    """A Runtime from a profile's parsed JSON; a UserError naming ``file`` and the field when it is wrong."""
    r = _Reader(file)
    if not isinstance(data, dict):
        raise UserError("not a dnnresolve runtime profile: expected a JSON object", file)
    schema = data.get("schema")
    if schema != SCHEMA:
        raise r.fail("schema", f"expected {SCHEMA!r} (write one with 'dnnresolve detect --json'), got {schema!r}")
    rt = Runtime()
    rt.os = r.get(data, "os", str, "", "linux")
    if rt.os not in ("linux", "windows"):
        raise r.fail("os", f"expected 'linux' or 'windows', got {rt.os!r}")
    rt.system = r.get(data, "system", str, "", "")
    rt.driver = r.version(data, "driver", DriverVersion.parse, "")
    rt.driver_cuda = r.version(data, "driver_cuda", CudaVersion.parse, "")
    for where, g in r.items(data, "gpus"):
        memory = r.get(g, "memory_mib", int, where, -1)
        found_in = r.get(g, "found_in", str, where, "")
        capability_from = r.get(g, "compute_capability_from", str, where, "")
        old = _OLD_CAPABILITY_FROM.match(found_in)
        if old and not capability_from:  # written before the two were apart
            found_in, capability_from = old.group(1), MATRIX_GPU_TABLE
        rt.gpus.append(
            Gpu(
                r.get(g, "name", str, where, ""),
                r.version(g, "compute_capability", ComputeCapability.parse, where),
                None if memory < 0 else memory,
                found_in,
                capability_from,
            )
        )
    for where, c in r.items(data, "cuda"):
        cuda = r.version(c, "version", CudaVersion.parse, where)
        if cuda is None:
            raise r.fail(f"{where}version", "missing")
        rt.cuda.append(CudaInstall(cuda, r.get(c, "path", str, where, ""), r.get(c, "found_in", str, where, "")))
    for where, c in r.items(data, "cudnn"):
        cudnn = r.version(c, "version", CudnnVersion.parse, where)
        if cudnn is None:
            raise r.fail(f"{where}version", "missing")
        rt.cudnn.append(
            CudnnInstall(
                cudnn,
                r.get(c, "path", str, where, ""),
                r.get(c, "found_in", str, where, ""),
                r.get(c, "loads_first", bool, where, False),
                r.get(c, "lib_dir", str, where, ""),
            )
        )
    python = r.get(data, "python", dict, "", {})
    rt.python = r.version(python, "version", PythonVersion.parse, "python.")
    rt.python_implementation = r.get(python, "implementation", str, "python.", "")
    rt.python_executable = r.get(python, "executable", str, "python.", "")
    rt.machine = r.get(python, "machine", str, "python.", "")
    rt.glibc = r.get(python, "glibc", str, "python.", "")
    for where, p in r.items(data, "packages"):
        name, version = r.get(p, "name", str, where, ""), r.get(p, "version", str, where, "")
        if not name or not version:
            raise r.fail(f"{where}{'name' if not name else 'version'}", "missing")
        conda = r.get(p, "conda", dict, where, {})
        build = r.get(conda, "build", str, f"{where}conda.", "")
        channel = r.get(conda, "channel", str, f"{where}conda.", "")
        installer = "conda" if "conda" in p else ""
        rt.packages.append(
            InstalledPackage(name, version, r.get(p, "location", str, where, ""), installer, build, channel)
        )
    conda = r.get(data, "conda", dict, "", {})
    rt.conda_prefix = r.get(conda, "prefix", str, "conda.", "")
    rt.conda_env = r.get(conda, "env", str, "conda.", "")
    rt.conda_cuda = r.version(conda, "cuda", CudaVersion.parse, "conda.")
    for where, m in r.items(data, "modules"):
        name = r.get(m, "name", str, where, "")
        if not name:
            raise r.fail(f"{where}name", "missing")
        rt.modules.append(
            Module(
                name,
                r.get(m, "version", str, where, ""),
                r.get(m, "loaded", bool, where, False),
                r.get(m, "modulefile", str, where, ""),
            )
        )
    rt.pip = _pip_from_json(r, data)
    notes = r.get(data, "notes", list, "", [])
    if not all(isinstance(n, str) for n in notes):
        raise r.fail("notes", "expected a list of strings")
    rt.notes = list(notes)
    sources = r.get(data, "sources", dict, "", {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in sources.items()):
        raise r.fail("sources", "expected an object of strings")
    rt.sources = dict(sources)
    if rt.gpus and _OLD_CAPABILITY_FROM.match(rt.sources.get("gpus", "")):
        rt.sources["gpus"] = rt.gpus[0].found_in
    return rt


def _pip_from_json(r: _Reader, data: dict[str, Any]) -> PipContext | None:
    """The profile's pip configuration; None where the profile predates it (``"pip"`` missing or null)."""
    pip = data.get("pip")
    if pip is None:
        return None
    if not isinstance(pip, dict):
        raise r.fail("pip", f"expected an object, got {type(pip).__name__}")
    lists: dict[str, tuple[str, ...]] = {}
    for key in ("extra_index_urls", "find_links"):
        value = r.get(pip, key, list, "pip.", [])
        if not all(isinstance(v, str) for v in value):
            raise r.fail(f"pip.{key}", "expected a list of strings")
        lists[key] = tuple(value)
    origins = r.get(pip, "from", dict, "pip.", {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in origins.items()):
        raise r.fail("pip.from", "expected an object of strings")
    index = IndexContext(
        r.get(pip, "index_url", str, "pip.", ""),
        lists["extra_index_urls"],
        lists["find_links"],
        r.get(pip, "no_index", bool, "pip.", False),
    )
    return PipContext(index, tuple(origins.items()))


# how a GPU's found_in ended before compute_capability_from: "...; compute capability 3.5 from the matrix's GPU
# table" (detected), "given (--gpu); compute capability from the matrix" (a flag)
_OLD_CAPABILITY_FROM = re.compile(r"(.*?); compute capability (?:\S+ )?from the matrix(?:'s GPU table)?$")


def load_profile(path: str) -> Runtime:
    """Read a profile file (``--target FILE``)."""
    import json
    from pathlib import Path

    from .sources.text import read_source, too_deep_line

    text = read_source(Path(path), path, "a runtime profile")
    try:
        data = json.loads(text)
    except RecursionError:
        raise UserError("not JSON: nested too deeply", path, too_deep_line(text)) from None
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        raise UserError(f"not JSON: {getattr(exc, 'msg', exc)}", path, line) from None
    return runtime_from_json(data, path)
