"""The `plan` command's output: needs / has / gap, then ranked options; JSON; or a shell script."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..cuda_builds import NO_RUNTIME, PLUGIN_MISMATCH, BuildGap
from ..doctor import verdict_with_build
from ..machine import Runtime
from ..pkgname import canonicalize_name
from ..plan import Plan, RequirementPlan, needs_summary
from ..plan_options import Option
from ..profile import fact_sources, machine_json
from ..solve.results import Candidate, Check, Status
from .console import emit_json, writer

if TYPE_CHECKING:  # (styled's records import typing's NamedTuple and Protocol: a JSON answer needs none)
    from ..doctor import CodeFinding
    from .styled import Hint, Piece, Writer

_MARK = {Status.OK: "ok", Status.FAIL: "MISSING", Status.WARN: "warn", Status.UNKNOWN: "?"}
_HINT: dict[Status, Hint] = {Status.OK: "ok", Status.FAIL: "missing", Status.WARN: "warn", Status.UNKNOWN: "dim"}
_BUILD_MARK: dict[str, tuple[str, Hint]] = {
    NO_RUNTIME: ("cannot run", "error"),
    PLUGIN_MISMATCH: ("CUDA plugin", "missing"),
}


def to_json(plan: Plan, runtime: Runtime) -> dict[str, Any]:
    origins = _origins(runtime)
    return {
        "satisfied": plan.satisfied,
        "conflicts": plan.conflicts,
        "requirements": [_req_json(rp, origins) for rp in plan.requirements],
        "notes": [{"line": line, "note": note} for line, note in plan.notes],
        "machine": machine_json(runtime),
        # a branch alone (--driver 535) is some 535.x: the checks' verdicts say where its patch level decides
        "driver": {"version": str(runtime.driver), "branch": runtime.driver.is_branch} if runtime.driver else None,
    }


def _origins(runtime: Runtime) -> dict[str, str]:
    """component of a check -> where the fact it found came from."""
    out = fact_sources(runtime)
    out.pop("compute_capability", None)  # several GPUs: the one the check names, below
    for g in reversed(runtime.gpus):
        if g.compute_capability is not None:
            out[f"compute_capability {g.compute_capability}"] = g.capability_from or g.found_in
    for component in ("install", "python"):
        if "python" in out:
            out[component] = out["python"]
    platform = runtime.sources.get("system") if runtime.system else runtime.python_executable
    if platform:
        out["platform"] = platform
    return out


def _req_json(rp: RequirementPlan, origins: dict[str, str]) -> dict[str, Any]:
    r = rp.result
    best = r.best
    return {
        "requirement": str(r.requirement),
        "package": r.package,
        "known": r.known,
        "release": str(best.release.version) if best else None,
        "cuda_variant": str(best.cuda) if best and best.cuda else None,
        "installed": r.installed.version if r.installed else None,
        "satisfied": r.satisfied,
        "needs": needs_summary(best) if best else {},
        "checks": [_check_json(c, origins) for c in (best.checks if best else [])],
        "gap": [c.component for c in (best.failures if best else [])],
        "verdict": r.verdict,
        "source": best.release.source if best else None,
        "message": rp.message or None,
        "options": [o.to_dict() for o in rp.options],
        "dropped": rp.dropped,
    }


def _check_json(c: Check, origins: dict[str, str]) -> dict[str, Any]:
    key = f"compute_capability {c.found}" if c.component == "compute_capability" else c.component
    return {
        "component": c.component,
        "status": c.status.value,
        "needed": c.needed or None,
        "found": c.found or None,
        "found_from": origins.get(key) if c.found else None,  # where the machine's fact came from
        "reason": c.reason,
        "source": c.source or None,  # where what is needed is stated
    }


def to_sh(plan: Plan) -> str:
    """The first option of each requirement as a shell script."""
    lines = ["#!/usr/bin/env bash", "# written by dnnresolve plan --format sh", "set -euo pipefail"]
    lines += [_comment(f"{line}: {note}") for line, note in plan.notes]
    for rp in plan.requirements:
        if not rp.options:
            lines.append(_comment(f"{rp.result.requirement}: {rp.message or 'no option found'}"))
            continue
        opt = rp.options[0]
        lines.append(_comment(f"{rp.result.requirement}: {opt.title}"))
        if any(s.kind == "conda" for s in opt.steps):
            lines.append('eval "$(conda shell.bash hook)"')
        for s in opt.steps:
            if s.kind == "manual":
                lines.append(_comment(f"MANUAL: {s.description}"))
            else:
                lines.append(s.shell)
    return "\n".join(lines) + "\n"


def _comment(text: str) -> str:
    """A shell comment of one line: text from inputs (a module name, a path from a profile) may hold a
    newline, and the line after it would be a command."""
    return "# " + " ".join(text.splitlines())


def emit(plan: Plan, runtime: Runtime, as_json: bool, fmt: str = "text") -> None:
    if as_json:
        emit_json(to_json(plan, runtime))
        return
    if fmt == "sh":
        import sys

        sys.stdout.write(to_sh(plan))
        return
    out = writer()
    if runtime.driver is None and not runtime.gpus and _unknown_machine_shows(plan):
        out.line(
            (
                "No NVIDIA driver or GPU is known for this machine; the checks that need one show '?'. "
                "To plan for another machine give --driver and --gpu, or --target PROFILE.json.",
                "dim",
            )
        )
    for rp in plan.requirements:
        _emit_requirement(out, rp)
    for line, note in plan.notes:
        out.line((f"{line}: {note}", "dim"))
    for c in plan.conflicts:
        out.line(("conflict", "error"), f": {c}")


_MARK_WIDTH = 8
_MIN_NEEDS = 20  # a "needs" column narrower than this reads worse than a line a check


def _unknown_machine_shows(plan: Plan) -> bool:
    """Whether a plan shown has a driver or GPU check that reads '?': only then is the banner that says why
    worth its lines."""
    return any(
        c.status is Status.UNKNOWN and c.component in ("driver", "compute_capability")
        for rp in plan.requirements
        if rp.result.best is not None
        for c in rp.result.best.checks
    )


def _emit_requirement(out: Writer, rp: RequirementPlan) -> None:
    r = rp.result
    best = r.best
    if best is None:
        out.line((str(r.requirement), "heading"), f": {rp.message}")
        if rp.options:  # planned under the framework's own name
            out.line("Options, best first:")
            for i, opt in enumerate(rp.options, 1):
                _emit_option(out, i, opt)
        return
    out.line((str(r.requirement), "heading"), f" -> {_label(best)}")
    _emit_checks(out, best)
    for d in rp.dropped:
        out.line("  ", (d, "dim"), hang=4)
    if rp.options:
        out.line("Options, best first:")
        for i, opt in enumerate(rp.options, 1):
            _emit_option(out, i, opt)
    elif rp.message:
        out.line(rp.message)
    else:
        out.line(("No option found", "missing"), ": nothing in the matrix runs on this machine.")
    out.line((f"Source: {best.release.source}", "dim"))


def _emit_checks(out: Writer, best: Candidate) -> None:
    """A check a row: mark, component, what it needs, what the machine has, in columns that fit the width (a
    long need wraps in its column, so "has" keeps its own); where they cannot, a check a line, wrapped."""
    rows = [(c, f"needs {c.needed}" if c.needed else "", f"has {c.found}" if c.found else "has ?") for c in best.checks]
    component = max((len(c.component) for c in best.checks), default=0) + 1
    indent = 2 + _MARK_WIDTH + 1  # where a reason starts: under the component
    has = max((len(h) for _, _, h in rows), default=0)
    natural = max((len(n) for _, n, _ in rows), default=0)
    needs = min(natural, out.width - indent - component - 1 - has)
    import textwrap  # (the text answer's only: not a JSON one's)

    for c, needed, found in rows:
        mark = ("  ", (f"{_MARK[c.status]:<{_MARK_WIDTH}}", _HINT[c.status]), " ")
        if needs < min(natural, _MIN_NEEDS):
            out.line(*mark, f"{c.component}: {needed + '; ' if needed else ''}{found}", hang=indent + 2)
        else:
            first, *more = textwrap.wrap(needed, needs, break_long_words=False, break_on_hyphens=False) or [""]
            out.line(*mark, f"{c.component:<{component}}{first:<{needs}} {found}", wrap=False)  # fits: see needs
            for line in more:
                out.line(" " * (indent + component) + line, wrap=False)
        if c.status in (Status.FAIL, Status.WARN):
            out.line(" " * indent, (c.reason, "dim"), hang=indent)


def _emit_option(out: Writer, i: int, opt: Option) -> None:
    root: tuple[Piece, ...] = (" ", ("(needs root)", "warn")) if opt.needs_root else ()
    out.line(f"  {i}. {opt.title}", *root, hang=5)
    for s in opt.steps:
        if s.kind == "manual":
            out.line("       ", (s.description, "manual"), hang=7)
        else:  # a command stays whole on its line, however wide, to be pasted
            out.line(f"       {s.shell}", wrap=False)
    for n in opt.notes:
        out.line("       ", (f"note: {n}", "dim"), hang=9)


def _label(c: Candidate) -> str:
    cuda = f" for CUDA {c.cuda}" if c.cuda else " (CPU build)"
    return f"{c.release.package} {c.release.version}{cuda}"


def emit_doctor(
    plan: Plan,
    runtime: Runtime,
    as_json: bool,
    code: Sequence[CodeFinding] = (),
    notes: Sequence[str] = (),
    builds: Sequence[BuildGap] = (),
) -> None:
    """Each installed framework checked against this machine (one without its CUDA build says so first), then
    the GPU code its own libraries carry held against the machine's GPUs; nothing installed is said plainly."""
    if as_json:
        data = to_json(plan, runtime)
        data["installed_frameworks"] = [str(rp.result.requirement) for rp in plan.requirements]
        kinds = {canonicalize_name(n): g.kind for g in builds for n in (g.package, g.companion) if n}
        for req in data["requirements"]:
            req["verdict"] = verdict_with_build(req["verdict"], kinds.get(req["package"]))
        data["cuda_builds"] = [
            {"package": g.package, "version": g.version, "kind": g.kind, "reason": g.reason, "fix": g.commands}
            for g in builds
        ]
        data["gpu_code"] = [
            {
                "package": f.package,
                "version": f.version,
                "code": f.code,
                "libraries": f.libraries,
                "gpu": f.gpu or None,
                "compute_capability": f.capability or None,
                "status": f.status.value,
                "reason": f.reason,
            }
            for f in code
        ]
        data["gpu_code_notes"] = list(notes)
        data["machine"]["notes"] = list(runtime.notes)
        emit_json(data)
        return
    from ..doctor import machine_facts

    out = writer()
    root = runtime.sources.get("root")
    out.line(f"Machine: files under {root}" if root else "Machine: this one")
    for label, value in machine_facts(runtime):
        out.line(f"  {label:<7} {value}")
    if runtime.python is None and not plan.requirements:
        out.line("No GPU framework checked: no Python environment found.")
        return
    if not plan.requirements:
        out.line("No GPU framework the matrix knows is installed in this Python environment.")
        return
    gapped = {canonicalize_name(n) for g in builds for n in (g.package, g.companion) if n}
    for g in builds:
        mark = _BUILD_MARK.get(g.kind, ("CPU build", "warn"))
        out.line(mark, f": {g.reason}")
        if g.steps and len(f"  install its CUDA build: {g.commands}") <= out.width:
            out.line(f"  install its CUDA build: {g.commands}")
        elif g.steps:  # the commands on a line of their own, whole, to be pasted
            out.line("  install its CUDA build:")
            out.line(f"    {g.commands}", wrap=False)
    for rp in plan.requirements:
        best = rp.result.best
        if best is not None and not best.failures:
            if canonicalize_name(rp.result.requirement.name) not in gapped:
                out.line(("ok", "ok"), f" {rp.result.requirement}: this machine provides what it needs")
            continue
        _emit_requirement(out, rp)
    for c in plan.conflicts:
        out.line(("conflict", "error"), f": {c}")
    if code:
        out.line("GPU code in the installed libraries (read from their fat binaries):")
    for f in code:
        what = f"{f.code} ({f.libraries} {'library' if f.libraries == 1 else 'libraries'})" if f.code else "none"
        gpu = f" on {f.gpu} ({f.capability})" if f.gpu else ""
        out.line("  ", (f"{_MARK[f.status]:<8}", _HINT[f.status]), f" {f.package} {f.version}{gpu}: {what}", hang=11)
        out.line("           ", (f.reason, "dim"), hang=11)
    for n in notes:
        out.line((f"note: {n}", "dim"), hang=6)
