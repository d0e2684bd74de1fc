"""What `check` reports: findings with file, line, severity, rule and reason, and the report around them.

Plain data, no I/O. The rules are listed once here, for the renderers (SARIF needs them up front).
"""

from __future__ import annotations

import enum
from typing import Any

from .records import field, record


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


RULES: dict[str, str] = {
    "target-incompatible": "A GPU framework pin the target cannot run (driver, GPU, Python, OS, CUDA, cuDNN)",
    "target-caveat": "A GPU framework pin the target runs with a caveat (minor-version compatibility, PTX JIT, ...)",
    "needs-extras": "A GPU framework pin without the extras that bring its CUDA and cuDNN, on a target that lacks them",
    "no-runtime": "A framework pin without the extra (or companion package) its code needs to run: jax before 0.4.30",
    "wheel-conflict": "Frameworks whose pip wheels require nvidia-* wheels that no single version satisfies",
    "cuda-major-mix": "Frameworks that install together but load libraries of different CUDA majors into one process",
    "cuda-disagreement": "A CUDA build (local tag, CUDA index, pytorch-cuda) that disagrees with the project's CUDA",
    "conda-cuda-mix": "Frameworks in one conda environment whose conda builds need CUDA versions no cudatoolkit serves",
    "unpinned": "A GPU framework without an exact version: the result depends on the day it is installed",
    "cuda-name": "A package that carries CUDA (an nvidia-* wheel, a jax CUDA plugin): what it is, and its driver",
    "not-checked": "A GPU-related package that the compatibility matrix does not know: not checked",
    "renamed": "A framework asked for under a name it no longer publishes under (tensorflow-gpu after 2.11.0)",
    "image-deleted": "A Dockerfile's base image tag that NVIDIA deleted (EOL): the build cannot pull it",
    "image-not-checked": "A Dockerfile's base image this check cannot read: its CUDA, cuDNN and Python not checked",
    "skipped": "An entry that cannot be checked (URL, VCS or path requirement, editable install)",
}


@record(frozen=True)
class Finding:
    file: str
    line: int
    package: str
    severity: Severity
    rule: str
    message: str
    fix: str = ""  # a short instruction, then its steps a line each: "$ " starts a command, else an instruction
    source: str = ""  # the matrix row's page, or the metadata's home, that states the fact

    @property
    def fix_title(self) -> str:
        return self.fix.split("\n", 1)[0]

    @property
    def fix_lines(self) -> list[tuple[str, bool]]:
        """The steps of the fix, each with whether it is a command (to paste whole) or an instruction (to read)."""
        return [(s[2:], True) if s.startswith("$ ") else (s, False) for s in self.fix.split("\n")[1:]]

    @property
    def fix_steps(self) -> list[str]:
        """The commands and short instructions of the fix, in order."""
        return [text for text, _ in self.fix_lines]

    @property
    def fix_text(self) -> str:
        """The fix on one line (JSON, markdown, SARIF): its instruction, then its steps."""
        steps = self.fix_steps
        return self.fix_title + (": " + "; ".join(steps) if steps else "")

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "package": self.package,
            "severity": self.severity.value,
            "rule": self.rule,
            "message": self.message,
            "fix": self.fix_text or None,
            "fix_steps": self.fix_steps,
            "source": self.source or None,
        }


@record(frozen=True)
class CheckedPin:
    """One framework line checked against the matrix: the release it stands for and what was found of it."""

    file: str
    line: int
    package: str
    release: str  # "torch 2.1.0 (CUDA 12.1)": the build the line installs, as the matrix knows it
    severity: Severity | None  # its worst finding; None: it passed
    verdict: str | None = None  # on the target, in the words plan gives ("runs", ...); None without a target

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "package": self.package,
            "release": self.release,
            "worst": self.severity.value if self.severity else None,
            "verdict": self.verdict,
        }


@record
class CheckReport:
    files: list[str]
    findings: list[Finding] = field(default_factory=list)
    not_checked: list[str] = field(default_factory=list)  # packages the matrix does not know, not GPU-related
    checked: list[str] = field(default_factory=list)  # packages checked against the matrix
    pins: list[CheckedPin] = field(default_factory=list)  # each framework line checked, in file order
    target: dict[str, Any] = field(default_factory=dict)  # profile.machine_json: values, and "sources" apart
    notes: list[str] = field(default_factory=list)
    # per Dockerfile: what its image brings on the target's driver and GPUs (machine_json, with file and image)
    containers: list[dict[str, Any]] = field(default_factory=list)

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity is severity)

    def exit_status(self, strict: bool) -> int:
        if self.count(Severity.ERROR) or (strict and self.count(Severity.WARNING)):
            return 1
        return 0

    def sorted_findings(self) -> list[Finding]:
        order = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
        return sorted(self.findings, key=lambda f: (f.file, f.line, order[f.severity], f.rule))

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "target": self.target,
            "containers": self.containers,
            "notes": self.notes,
            "summary": {s.value: self.count(s) for s in Severity},
            "findings": [f.to_dict() for f in self.sorted_findings()],
            "checked": self.checked,
            "checked_lines": [p.to_dict() for p in self.pins],
            "not_checked": self.not_checked,
        }
