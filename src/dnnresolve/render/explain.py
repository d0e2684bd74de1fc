"""The `explain` command's output: short, decoded, ranked, sourced; or the JSON contract."""

from __future__ import annotations

import re

from ..explain import Diagnosis, ScanResult
from .console import emit_json, writer

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_LABEL_WIDTH = 20
_MIN_TEXT = 30  # a label's text narrower than this goes under the label
_FIX_HANG = 7  # a fix's text wraps under itself, after "    1. "
_QUOTED = re.compile(r"`([^`]+)`")


def to_json(result: ScanResult, source: str) -> dict[str, Any]:
    return {
        "diagnoses": [d.to_dict() for d in result.diagnoses],
        "input": source,
        "lines_read": result.lines_read,
        "truncated": result.truncated,
    }


def emit(result: ScanResult, source: str, as_json: bool) -> None:
    if as_json:
        emit_json(to_json(result, source))
        return
    out = writer()
    if not result.diagnoses:
        out.line(f"No known CUDA, cuDNN or driver error in {source} ({_lines(result.lines_read)} read).")
        out.line("dnnresolve only explains messages it knows; it does not guess.")
        return
    n = len(result.diagnoses)
    head = f"{n} problem{'s' if n != 1 else ''} found in {source} ({_lines(result.lines_read)} read)"
    out.line((head + (" - showing the first ones" if result.truncated else ""), "heading"))
    for i, d in enumerate(result.diagnoses, 1):
        out.line()
        for line, hang in render_text(d, i if n > 1 else 0, out.width):
            if hang < 0:  # a command to paste: whole, on its own line
                out.line(line, wrap=False)
            else:
                out.line(line, hang=hang)


def render_text(d: Diagnosis, number: int = 0, width: int = 80) -> list[tuple[str, int]]:
    """One diagnosis as lines, each with the indent its continuation lines take when it is wrapped to ``width``
    (a label's text wraps under itself where the width leaves room, else under its label); -1 for a line never
    to be wrapped (a command wider than a fix's line, taken out of its sentence to be pasted whole)."""
    title = d.summary + (f" ({d.framework_name})" if d.framework_name else "")
    where = f"line {d.line}" + (f", seen {d.occurrences} times" if d.occurrences > 1 else "")
    lead = f"{number}. " if number else ""
    lines = [(f"{lead}{title} - {where}", len(lead))]
    beside = width - _LABEL_WIDTH - 3 >= _MIN_TEXT

    def row(label: str, text: str) -> None:
        if beside:
            lines.append((f"  {label:<{_LABEL_WIDTH}} {text}", _LABEL_WIDTH + 3))
        else:
            lines.append((f"  {label}: {text}", 6))

    row("message", _clip(d.text, 160))
    for label, text in d.rows:
        row(label, text)
    if d.rule:
        row("rule", d.rule)
    for c in d.consequences:
        extra = f" ({c.occurrences} times)" if c.occurrences > 1 else ""
        row("led to", f"line {c.line}: {c.summary}{extra} - {_clip(c.text, 100)}")
    row("why", d.explanation)
    if d.fixes:
        lines.append(("  Fix:", 4))
        for i, step in enumerate(d.fixes, 1):
            lines.extend(_fix_lines(f"    {i}. ", step, width))
    lines.append((f"  Source: {d.source}", 4))
    if d.plan and d.plan.get("fix_source"):  # the leading fix is the planner's, from this matrix row
        lines.append((f"  Source of fix 1: {d.plan['fix_source']}", 4))
    return lines


def _fix_lines(lead: str, text: str, width: int) -> list[tuple[str, int]]:
    """A fix: its prose wrapped under itself, and each quoted command too wide for the rest of a line taken out
    onto a line of its own, unquoted, so that it can be pasted whole."""
    lines: list[tuple[str, int]] = []
    prose = lead
    indent = " " * _FIX_HANG
    at = 0
    for m in _QUOTED.finditer(text):
        if len(m.group(1)) + 2 <= width - _FIX_HANG:
            continue
        before = text[at : m.start()].rstrip()
        if (prose + before).strip():
            lines.append((prose + before, _FIX_HANG))
        lines.append((indent + "  " + m.group(1), -1))
        prose, at = indent, m.end()
    rest = text[at:].lstrip(" ") if at else text
    if (prose + rest).strip():
        lines.append((prose + rest, _FIX_HANG))
    return lines


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _lines(n: int) -> str:
    return f"{n} line{'s' if n != 1 else ''}"
