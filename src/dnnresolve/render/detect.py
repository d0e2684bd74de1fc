"""The `detect` command's output: one row per fact with where it was found; or the runtime profile as JSON."""

from __future__ import annotations

from ..machine import Runtime
from ..profile import runtime_to_json
from ..versions import VersionError, parse_build_tag
from .console import emit_json, writer
from .layout import column_widths
from .styled import Column, Table


def emit(rt: Runtime, as_json: bool) -> None:
    if as_json:
        emit_json(runtime_to_json(rt))
        return
    out = writer()
    root = rt.sources.get("root")
    title = f"dnnresolve detect: files under {root}" if root else "dnnresolve detect: this machine"
    columns = (Column("item", hint="heading", no_wrap=True), Column("value"), Column("found in"))
    table = Table(columns, rows(rt), title=title)
    if column_widths(table, out.width):
        out.table(table)
    else:  # a fact a block: the item and its value, then where it was found, under it
        out.line(title)
        pad = max(len(str(r[0])) for r in table.rows) + 2
        pad = pad if pad <= out.width // 3 else 0
        for item, value, where in table.rows:
            out.line((f"{item:<{pad}}" if pad else f"{item}  ", "heading"), str(value), hang=pad or 4)
            if where:
                out.line("  ", ("found in:", "dim"), f" {where}", hang=4)
    if rt.notes:
        out.line("notes:")
        for note in rt.notes:
            out.line(f"  - {note}", hang=4)


def rows(rt: Runtime) -> list[tuple[str, str, str]]:
    """(item, value, where found) for each fact, in reading order."""
    out: list[tuple[str, str, str]] = []
    system = {"wsl": "WSL (the driver is the Windows host's)", "jetson": "Jetson (L4T)"}.get(rt.system, "")
    if system:
        out.append(("system", system, rt.sources.get("system", "")))
    out.append(("driver", str(rt.driver) if rt.driver else "none found", rt.sources.get("driver", "")))
    if rt.driver_cuda is not None:
        out.append(("driver supports CUDA", f"up to {rt.driver_cuda}", rt.sources.get("driver_cuda", "")))
    if not rt.gpus:
        out.append(("GPU", "none found", ""))
    for i, g in enumerate(rt.gpus):
        parts = [g.name]
        if g.compute_capability is not None:
            parts.append(f"compute capability {g.compute_capability}")
        if g.memory_mib is not None:
            parts.append(f"{g.memory_mib} MiB")
        where = g.found_in + (f"; compute capability from {g.capability_from}" if g.capability_from else "")
        out.append((f"GPU {i}", ", ".join(parts), where))
    if not rt.cuda:
        out.append(("CUDA", "none found", ""))
    for i, c in enumerate(rt.cuda):
        label = f"{c.version}" + ("  (in use)" if i == 0 and len(rt.cuda) > 1 else "")
        out.append(("CUDA", f"{label}  {c.path}".rstrip(), c.found_in))
    if not rt.cudnn:
        out.append(("cuDNN", "none found", ""))
    for n in rt.cudnn:
        mark = "  (loads first)" if n.loads_first else ""
        out.append(("cuDNN", f"{n.version}{mark}  {n.path}".rstrip(), n.found_in))
    if rt.python is not None:
        details = [d for d in (rt.python_implementation, rt.machine, f"glibc {rt.glibc}" if rt.glibc else "") if d]
        value = f"{rt.python}" + (f" ({', '.join(details)})" if details else "")
        out.append(("Python", value, rt.python_executable or rt.sources.get("python", "")))
    else:
        out.append(("Python", "none found", ""))
    for p in rt.packages:
        out.append(("package", p.describe() if p.by_conda else _package(p.name, p.version), p.location))
    if rt.conda_prefix:
        out.append(("conda env", rt.conda_env or rt.conda_prefix, rt.conda_prefix))
    if rt.conda_cuda is not None:
        out.append(
            ("conda CUDA", f"{rt.conda_cuda} (the env holds every install to it)", rt.sources.get("conda_cuda", ""))
        )
    loaded = [m.full for m in rt.modules if m.loaded]
    available = [m.full for m in rt.modules if not m.loaded]
    if loaded:
        out.append(("modules loaded", " ".join(loaded), "$LOADEDMODULES"))
    if available:
        out.append(("modules available", " ".join(available), rt.sources.get("modules", "")))
    return out


def _package(name: str, version: str) -> str:
    try:
        tag = parse_build_tag(version)
    except VersionError:
        return f"{name} {version}"
    if tag.is_cuda and tag.cuda is not None:
        return f"{name} {version} (built for CUDA {tag.cuda})"
    if tag.kind == "cpu":
        return f"{name} {version} (CPU build)"
    return f"{name} {version}"
