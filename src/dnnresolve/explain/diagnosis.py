"""What `explain` found: one Diagnosis per distinct problem, root causes first, consequences attached."""

from __future__ import annotations

from ..records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Root causes first: a driver too old explains more than a missing library, which explains a failed init.
KIND_ORDER = {
    "driver_too_old": 0,
    "cuda_version_mismatch": 1,
    "cudnn_version_mismatch": 2,
    "arch_unsupported": 3,
    "missing_library": 4,
    "init_failure": 5,
    "no_cuda_build": 6,
    "other": 7,
}
MAX_LINES_KEPT = 20  # line numbers kept per diagnosis; the count goes on


@record
class Consequence:
    """A later message that follows from a diagnosis (a failed convolution after a cuDNN mismatch)."""

    id: str
    kind: str
    summary: str
    line: int
    text: str
    source: str
    occurrences: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "summary": self.summary,
            "line": self.line,
            "text": self.text,
            "occurrences": self.occurrences,
            "source": self.source,
        }


@record
class Diagnosis:
    id: str  # the catalog entry
    kind: str
    framework: str | None
    framework_name: str
    found: dict[str, str]
    expected: dict[str, str]
    summary: str
    explanation: str
    source: str
    line: int  # first line where it was seen (1-based)
    text: str  # the message as matched, whitespace collapsed
    rows: list[tuple[str, str]] = field(default_factory=list)  # decoded facts: (label, text)
    rule: str = ""
    facts: dict[str, str] = field(default_factory=dict)
    fixes: list[str] = field(default_factory=list)
    occurrences: int = 1
    lines: list[int] = field(default_factory=list)
    consequences: list[Consequence] = field(default_factory=list)
    consequence_of: tuple[str, ...] = ()
    nearby: tuple[str, ...] = ()  # the lines before the message and its own, where versions may be printed
    nearby_from: int = 0  # the line number of nearby[0]
    plan: dict[str, Any] | None = None  # the planner's verdict on the release for the machine (``planned``)

    def seen_again(self, line: int) -> None:
        self.occurrences += 1
        if len(self.lines) < MAX_LINES_KEPT:
            self.lines.append(line)

    def as_consequence(self) -> Consequence:
        return Consequence(self.id, self.kind, self.summary, self.line, self.text, self.source, self.occurrences)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "framework": self.framework,
            "found": dict(self.found),
            "expected": dict(self.expected),
            "summary": self.summary,
            "explanation": self.explanation,
            "fixes": list(self.fixes),
            "line": self.line,
            "source": self.source,
            "id": self.id,
            "rule": self.rule or None,
            "decoded": [{"label": label, "text": text} for label, text in self.rows],
            "text": self.text,
            "occurrences": self.occurrences,
            "lines": list(self.lines),
            "consequences": [c.to_dict() for c in self.consequences],
            "plan": self.plan,
        }


def rank(diagnoses: list[Diagnosis]) -> list[Diagnosis]:
    """Attach consequences to the root cause they follow from, then order root causes first."""
    by_line = sorted(diagnoses, key=lambda d: d.line)
    roots = [d for d in by_line if not d.consequence_of]
    kept: list[Diagnosis] = list(roots)
    for d in by_line:
        if not d.consequence_of:
            continue
        candidates = [r for r in roots if r.kind in d.consequence_of]
        before = [r for r in candidates if r.line <= d.line]
        root = before[-1] if before else (candidates[0] if candidates else None)
        if root is None:  # no root cause: an earlier message of a fitting kind, itself kept, explains it
            root = next((r for r in reversed(kept) if r.line <= d.line and r.kind in d.consequence_of), None)
        if root is None:
            kept.append(d)
        else:
            root.consequences.append(d.as_consequence())
    return sorted(kept, key=lambda d: (KIND_ORDER.get(d.kind, 9), d.line))
