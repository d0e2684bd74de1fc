"""The `matrix` command's output: a table like the official ones, with sources; or JSON records."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

from ..query import MatrixResult
from .console import emit_json, writer
from .layout import Footnotes, column_widths, pack
from .styled import Column, Piece, Table, Writer


def emit(result: MatrixResult, as_json: bool, verbose: bool = False) -> None:
    """The rows; a release's sourcing note (PRs, commits, what a binary was read with) only when ``verbose``:
    JSON always carries it."""
    if as_json:
        emit_json(_json(result))
        return
    out = writer()
    if result.packages:
        columns = [Column(c) for c in ("package", "rows", "oldest", "newest")]
        rows = [(p["package"], str(p["rows"]), p["oldest"], p["newest"]) for p in result.packages]
        table = Table(columns, rows, title="dnnresolve compatibility matrix", frame="box")
        if column_widths(table, out.width):
            out.table(table)
            return
        out.line((table.title, "heading"))
        for package, count, oldest, newest in rows:
            out.line((package, "heading"), f"  {count} rows, {oldest} to {newest}", hang=4)
        return
    for n in result.names:
        _name(n, out)
    if not result.releases:
        if not result.names:
            out.line(result.message or "nothing found")
        return
    if len(result.releases) == 1:
        _one(result.releases[0], out, verbose)
        return
    heads = ("version", "os", "python", "cuda", "cudnn", "min driver (linux)", "gpu code", "compiler", "source")
    sources = Footnotes()  # the rows share a few URLs: numbered, they keep the table narrow
    releases = [
        (
            r["package"] + " " + r["version"],
            ",".join(r["os"]),
            _span(r["python"]),
            ", ".join(r["cuda"]) or "cpu",
            _cudnn(r) or "-",
            r["driver_min_linux"] or "-",
            _code_span(r),
            r["compiler"] or "-",
            sources.mark(r["source"]) or "-",
        )
        for r in result.releases
    ]
    table = Table([Column(c) for c in heads], releases, title=f"{result.query}", frame="box")
    if column_widths(table, out.width):
        out.table(table)
    else:  # a block a release: its name, system and source, then the fields it has, packed
        out.line((result.query, "heading"))
        for row in releases:
            version, system, *fields, source = row
            out.line((version, "heading"), f"  {system}  {source}")
            packed: list[list[Piece]] = [[(f"{h}:", "dim"), f" {v}"] for h, v in zip(heads[2:], fields) if v != "-"]
            for line in pack(packed, out.width, indent=2):
                out.line(*line, wrap=False)  # packed to the width already
        out.line()
    for line in sources.lines():
        out.line(*line, hang=4)


def _json(result: MatrixResult) -> dict[str, Any]:
    """One shape for every query (docs/matrix-schema.md, "matrix --json"): the releases as a list, even of one,
    so that a reader never has to tell a record from a listing."""
    return {
        "query": result.query,
        "releases": result.releases,
        "names": result.names,
        "packages": result.packages,
        "message": result.message or None,
    }


def _name(n: dict[str, Any], out: Writer) -> None:
    """A [[cuda_name]] answer: what the asked version is, the driver its CUDA needs, where that is stated."""
    asked = n["asked"]
    out.line((f"{n['name']}{' ' + asked['version'] if asked['version'] else ''}", "heading"), f"  ({n['ecosystem']})")
    out.line("  ", ("is:", "heading"), f" {asked['is']}", hang=4)
    if asked["driver_min_linux"] or asked["driver_min_windows"]:
        drivers = ", ".join(
            f"{os_name} >= {asked[key]}"
            for os_name, key in (("linux", "driver_min_linux"), ("windows", "driver_min_windows"))
            if asked[key] and os_name in n["os"]
        )
        out.line("  ", ("driver:", "heading"), f" {drivers}", hang=4)
    if n["framework"]:
        out.line("  ", ("answers as:", "heading"), f" {n['framework']}[{n['extra']}] of the same version", hang=4)
    out.line("  ", ("os:", "heading"), f" {', '.join(n['os'])}", hang=4)
    out.line("  ", ("source:", "heading"), f" {n['source']}", hang=4)


def _span(values: list[str]) -> str:
    if len(values) > 2:
        return f"{values[0]}-{values[-1]}"
    return ", ".join(values)


def _cudnn(r: dict[str, Any]) -> str:
    """The cuDNN a row lists, marked when only some of the release's features load it."""
    text = ", ".join(r["cudnn"])
    return f"{text} (optional)" if text and r.get("cudnn_optional") else text


def _one(r: dict[str, Any], out: Writer, verbose: bool = False) -> None:
    rows: list[tuple[str, str]] = [
        ("python", ", ".join(r["python"])),
        ("cuda", ", ".join(r["cuda"]) or "cpu only"),
        ("cuda (plain PyPI wheel)", r["cuda_default"] or ""),
        ("cudnn", _cudnn(r)),
        ("cudnn rule", r["cudnn_rule"] or ""),
        ("min driver linux", r["driver_min_linux"] or ""),
        ("min driver windows", r["driver_min_windows"] or ""),
        ("min compute capability", r["compute_capability_min"] or ""),
        ("gpu code (plain PyPI wheel)", gpu_code(r.get("sm", []), r.get("ptx", []), r.get("sm_exact", []))),
        ("compiler", r["compiler"] or ""),
        ("build tool", r["build_tool"] or ""),
    ]
    for inst in r["install"]:
        cudnn = f", cudnn {', '.join(inst['cudnn'])}" if inst.get("cudnn") else ""
        code = gpu_code(inst.get("sm", []), inst.get("ptx", []), inst.get("sm_exact", []))
        perhaps = gpu_code(inst.get("sm_unconfirmed", []), inst.get("ptx_unconfirmed", []))
        code = ", ".join(t for t in (code, f"perhaps {perhaps}" if perhaps else "") if t)  # (only some builds)
        code = f", {code}" if code else ""
        command = install_command(inst)
        if inst["kind"] != "manual" and inst.get("note"):  # (a manual step's note is its text already)
            command += f"\n{inst['note']}"
        rows.append((f"install ({inst['kind']}, cuda {inst['cuda'] or 'none'}{cudnn}{code})", command))
    if verbose:
        rows.append(("note", r["note"] or ""))
    rows.append(("source", r["source"]))
    title = f"{r['package']} {r['version']} ({', '.join(r['os'])})"
    columns = (Column("field", hint="heading"), Column("value"))
    shown = [row for row in rows if row[1]]
    table = Table(columns, shown, title=title, show_header=False, frame="box")
    widths = column_widths(table, out.width)
    commands = [value.split("\n")[0] for field, value in shown if field.startswith("install")]
    if widths and widths[1] >= max(map(len, commands), default=0):  # a command in a cell is pasted whole
        out.table(table)
    else:  # a line a field, its value wrapped under it; a command keeps a line of its own, whole
        out.line((title, "heading"))
        for field, value in shown:
            if field.startswith("install"):
                out.line("  ", (f"{field}:", "heading"))
                command, *notes = value.split("\n")
                out.line(f"    {command}", wrap=False)
                for n in notes:
                    out.line(f"    {n}", hang=4)
            else:
                out.line("  ", (f"{field}:", "heading"), f" {value}", hang=4)
    if r["note"] and not verbose:
        again = ["dnnresolve", "matrix", f"{r['package']}=={r['version']}", "--verbose"]
        again += [] if "linux" in r["os"] else ["--os", r["os"][0]]
        out.line((f"notes on how these values were sourced: {shlex.join(again)}", "dim"))
    for other in r.get("other_os", []):  # the same release's record for another system, one command away
        systems = ", ".join(other["os"])
        command = shlex.join(
            ["dnnresolve", "matrix", f"{other['package']}=={other['version']}", "--os", other["os"][0]]
        )
        said = f"{other['package']} {other['version']} for {systems} has its own record:"
        if len(f"{said} {command}") <= out.width:
            out.line(f"{said} {command}")
        else:  # the command on a line of its own, whole, to be pasted
            out.line(said)
            out.line(f"  {command}", wrap=False)


def _code_span(r: dict[str, Any]) -> str:
    """A release's GPU code in a table cell: ``sm_60-sm_89 + PTX compute_90``, else its minimum, else ``-``."""
    sm, ptx = r.get("sm", []) + [s + "a" for s in r.get("sm_exact", [])], r.get("ptx", [])
    parts = ["-".join(_arch("sm_", s) for s in (sm[:1] + sm[1:][-1:]))] if sm else []
    if ptx:
        parts.append(gpu_code([], ptx[-1:]))  # the newest PTX is what newer GPUs run
    if parts:
        return " + ".join(parts)
    return f">= {r['compute_capability_min']}" if r.get("compute_capability_min") else "-"


def _arch(prefix: str, cc: str) -> str:
    """``("sm_", "8.6")`` -> ``sm_86``; an "a" (arch-specific) stays at the end: ``"9.0a"`` -> ``sm_90a``."""
    return prefix + cc.replace(".", "")


def gpu_code(sm: Sequence[str], ptx: Sequence[str], exact: Sequence[str] = ()) -> str:
    """``["5.0", "8.6"]``, ``["8.0"]``, ``["9.0"]`` -> ``sm_50 sm_86 sm_90a + PTX compute_80``: the code a build
    carries (``exact``: arch-specific code, for that capability only)."""
    sass = [_arch("sm_", s) for s in sm] + [_arch("sm_", e) + "a" for e in exact]
    parts = [" ".join(sass)] if sass else []
    if ptx:
        parts.append("PTX " + " ".join(_arch("compute_", p) for p in ptx))
    return " + ".join(parts)


def install_command(inst: dict[str, Any]) -> str:
    """A recipe as one shell-quoted command (``'jax[cuda12]'`` must not meet a shell's globbing unquoted)."""
    if inst["kind"] == "pip":
        argv = ["pip", "install", inst["requirement"], *(f"{n}=={v}" for n, v in inst.get("companions", {}).items())]
        for flag, key in (("--index-url", "index_url"), ("--extra-index-url", "extra_index_url"), ("-f", "find_links")):
            if inst.get(key):
                argv += [flag, inst[key]]
        return shlex.join(argv)
    if inst["kind"] == "conda":
        argv = ["conda", "install"]
        for channel in inst.get("channels", []):
            argv += ["-c", channel]
        return shlex.join([*argv, *inst["packages"]])
    return " ".join(x for x in (inst.get("url", ""), inst.get("note", "")) if x)
