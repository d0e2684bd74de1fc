"""The `check` command's output: a table, JSON, a Markdown pull-request comment, or SARIF 2.1.0."""

from __future__ import annotations

import sys
from typing import Any

from .. import __version__
from ..findings import RULES, CheckReport, Severity
from .console import emit_json, writer
from .styled import Column, Hint, Table

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
_INFO_URI = "https://github.com/dnnresolve/dnnresolve"


def to_sarif(report: CheckReport) -> dict[str, Any]:
    rule_ids = list(RULES)
    results = []
    for f in report.sorted_findings():
        location: dict[str, Any] = {"artifactLocation": {"uri": f.file.replace("\\", "/")}}
        if f.line:
            location["region"] = {"startLine": f.line}
        text = f.message + (f" Fix: {f.fix_text}." if f.fix else "") + (f" Source: {f.source}" if f.source else "")
        results.append(
            {
                "ruleId": f.rule,
                "ruleIndex": rule_ids.index(f.rule),
                "level": _SARIF_LEVEL[f.severity],
                "message": {"text": text},
                "locations": [{"physicalLocation": location}],
            }
        )
    return {
        "version": "2.1.0",
        "$schema": SARIF_SCHEMA,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "dnnresolve",
                        "version": __version__,
                        "informationUri": _INFO_URI,
                        "rules": [
                            {"id": rid, "name": rid, "shortDescription": {"text": text}} for rid, text in RULES.items()
                        ],
                    }
                },
                "results": results,
            }
        ],
    }


def target_line(target: dict[str, Any], label: str = "Target") -> str:
    """``Target: os linux, driver 535.104.05 (given (--driver)), gpu A100 (compute capability 8.0), ...``"""
    sources = target.get("sources", {})
    parts = []
    for key in ("os", "driver", "gpu", "python", "cuda", "cudnn"):
        value = target.get(key)
        if value is None:
            continue
        if key == "gpu":
            cc = target.get("compute_capability")
            parts.append(f"gpu {value}" + (f" (compute capability {cc})" if cc else ""))
        else:
            parts.append(f"{key} {value}" + (f" ({sources[key]})" if sources.get(key) else ""))
    return f"{label}: " + ", ".join(parts)


def container_lines(report: CheckReport) -> list[str]:
    """Per Dockerfile, the container its lines were judged in: ``Container of Dockerfile (FROM ...): ...``."""
    out = []
    for c in report.containers:
        file = c["file"]
        # a fact the Dockerfile set says its line; the JSON keeps the whole of where it came from
        sources = {
            k: f"line {v[len(file) + 1 :].split(' ', 1)[0]}" if v.startswith(f"{file}:") else v
            for k, v in c.get("sources", {}).items()
        }
        out.append(target_line({**c, "sources": sources}, f"Container of {file} (FROM {c['image'] or '?'})"))
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(report: CheckReport) -> str:
    errors, warnings = report.count(Severity.ERROR), report.count(Severity.WARNING)
    lines = [f"### dnnresolve check: {errors} error(s), {warnings} warning(s)", ""]
    if report.target:
        lines.append(target_line(report.target))
        lines.append("")
    for line in container_lines(report):
        lines += [line, ""]
    for note in report.notes:
        lines.append(f"> {note}")
        lines.append("")
    if report.findings:
        lines.append("| file:line | package | severity | finding | fix |")
        lines.append("|---|---|---|---|---|")
        for f in report.sorted_findings():
            finding = f.message + (f" ([source]({f.source}))" if f.source else "")
            lines.append(
                f"| `{_cell(f.where)}` | {_cell(f.package or '-')} | {f.severity.value} | {_cell(finding)} | "
                f"{_cell(f.fix_text or '-')} |"
            )
    else:
        lines.append("No findings.")
    if report.not_checked:
        lines.append("")
        lines.append(f"Not checked (not in the compatibility matrix): {', '.join(report.not_checked)}")
    return "\n".join(lines) + "\n"


def emit(report: CheckReport, as_json: bool, fmt: str = "text") -> None:
    if as_json:
        emit_json(report.to_dict())
        return
    if fmt == "sarif":
        emit_json(to_sarif(report))
        return
    if fmt == "markdown":
        sys.stdout.write(to_markdown(report))
        return
    _emit_text(report)


_SEVERITY: dict[Severity, Hint] = {Severity.ERROR: "error", Severity.WARNING: "warn", Severity.INFO: "dim"}


def _emit_text(report: CheckReport) -> None:
    from .layout import Footnotes, column_widths

    out = writer()
    if report.target:
        out.line(target_line(report.target))
    for container in container_lines(report):
        out.line(container)
    for note in report.notes:
        out.line(("note", "warn"), f": {note}")
    sources = Footnotes()  # a URL in each finding would make the lines wide: the findings carry its number
    if report.findings:
        findings = report.sorted_findings()
        columns = [Column(c) for c in ("file:line", "package", "severity", "finding", "fix")]
        rows = [
            (
                f.where,
                f.package or "-",
                [(f.severity.value, _SEVERITY[f.severity])],
                [f.message, *((" ", (sources.mark(f.source), "dim")) if f.source else ())],
                f.fix_text or "-",
            )
            for f in findings
        ]
        table = Table(columns, rows)
        if column_widths(table, out.width):
            out.table(table)
        else:  # each finding as a block: where, severity and package, then the finding and its fix below
            for i, (where, package, severity, finding, fix) in enumerate(rows):
                if i:
                    out.line()
                out.line((where, "heading"), "  ", *severity, *(("  ", package) if package != "-" else ()))
                out.line("  ", *finding, hang=4)
                if fix != "-":
                    f = findings[i]
                    out.line("  fix: ", f.fix_title + (":" if f.fix_steps else ""), hang=4)
                    for step, command in f.fix_lines:  # a command on a line of its own, whole, to be pasted
                        if command:
                            out.line(f"      {step}", wrap=False)
                        else:
                            out.line("      ", step, hang=8)
            out.line()
    if report.not_checked:
        out.line((f"not checked (not in the compatibility matrix): {', '.join(report.not_checked)}", "dim"))
    for line in sources.lines():
        out.line(*line, hang=4)
    out.line(
        f"{report.count(Severity.ERROR)} error(s), {report.count(Severity.WARNING)} warning(s), "
        f"{report.count(Severity.INFO)} note(s) in {len(report.files)} file(s)"
    )
    if report.pins:
        out.line("checked: " + checked_line(report))


_SAID = {None: "ok", Severity.WARNING: "warning, see above", Severity.ERROR: "error, see above"}
_PLACES_SHOWN = 3  # lines named for one release; the rest are counted


def checked_line(report: CheckReport) -> str:
    """What was checked, each release once with the lines that name it and what was found: ``torch 2.1.0 (CUDA
    12.1) (requirements.txt:1) ok; ...``. The findings above say what is wrong; this says what passed."""
    groups: dict[tuple[str, Severity | None], list[str]] = {}
    for pin in report.pins:
        groups.setdefault((pin.release, pin.severity), []).append(pin.where)
    parts = []
    for (release, severity), places in groups.items():
        shown = ", ".join(places[:_PLACES_SHOWN])
        more = len(places) - _PLACES_SHOWN
        parts.append(f"{release} ({shown}{f' and {more} more' if more > 0 else ''}) {_SAID[severity]}")
    return "; ".join(parts)
