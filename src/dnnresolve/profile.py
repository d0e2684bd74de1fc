"""A runtime profile: ``dnnresolve detect --json`` written on one machine, read back by ``plan`` and
``check --target FILE`` on another. ``runtime_to_json`` and ``runtime_from_json`` are inverses; reading
validates every field and names the file and field it cannot use."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from .errors import UserError
from .model import CudaInstall, CudnnInstall, Gpu, InstalledPackage, Module, Runtime
from .versions import (
    ComputeCapability,
    CudaVersion,
    CudnnVersion,
    DriverVersion,
    PythonVersion,
    VersionError,
    parse_build_tag,
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
        "conda": {"prefix": rt.conda_prefix, "env": rt.conda_env},
        "modules": [
            {"name": m.name, "version": m.version, "loaded": m.loaded, "modulefile": m.modulefile} for m in rt.modules
        ],
        "notes": list(rt.notes),
        "sources": dict(rt.sources),
    }


def _package_json(p: InstalledPackage) -> dict[str, Any]:
    d: dict[str, Any] = {"name": p.name, "version": p.version, "location": p.location}
    try:
        tag = parse_build_tag(p.version)
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
        rt.gpus.append(
            Gpu(
                r.get(g, "name", str, where, ""),
                r.version(g, "compute_capability", ComputeCapability.parse, where),
                None if memory < 0 else memory,
                r.get(g, "found_in", str, where, ""),
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
        rt.packages.append(InstalledPackage(name, version, r.get(p, "location", str, where, "")))
    conda = r.get(data, "conda", dict, "", {})
    rt.conda_prefix = r.get(conda, "prefix", str, "conda.", "")
    rt.conda_env = r.get(conda, "env", str, "conda.", "")
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
    notes = r.get(data, "notes", list, "", [])
    if not all(isinstance(n, str) for n in notes):
        raise r.fail("notes", "expected a list of strings")
    rt.notes = list(notes)
    sources = r.get(data, "sources", dict, "", {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in sources.items()):
        raise r.fail("sources", "expected an object of strings")
    rt.sources = dict(sources)
    return rt


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
