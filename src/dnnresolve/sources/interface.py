"""What every reader yields: requirements that remember where they were written, and the index context in force."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..indexes import IndexContext
from ..pkgname import canonicalize_name
from ..records import field, record
from ..specs import MAX_VERSION_DIGITS, InvalidRequirement, Requirement, parse_requirement
from .matchspec import MatchSpec

if TYPE_CHECKING:
    from ..findings import Finding
    from .container import Container


@record(frozen=True)
class LocatedRequirement:
    """One requirement as written in a file: a pip requirement or a conda MatchSpec, with file and line."""

    file: str
    line: int
    raw: str
    origin: str  # "pip" or "conda"
    requirement: Requirement | None = None
    conda: MatchSpec | None = None
    index: IndexContext = IndexContext()
    group: str = ""  # "optional-dependencies.gpu", "dev-packages", "-c constraints.txt"...
    constraint: bool = False  # from a pip -c file: limits versions, installs nothing

    @property
    def name(self) -> str:
        if self.requirement is not None:
            return canonicalize_name(self.requirement.name)
        assert self.conda is not None
        return self.conda.name

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


@record(frozen=True)
class Skipped:
    """An entry the check cannot judge (URL, VCS, local path, editable install...), shown, never dropped."""

    file: str
    line: int
    raw: str
    reason: str


@record
class SourceFile:
    """One file as read: its requirements, what was skipped, and the target defaults it states."""

    path: str
    kind: str  # "requirements", "pyproject", "conda", "pipfile"
    requirements: list[LocatedRequirement] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    includes: list[str] = field(default_factory=list)  # files read through -r / -c
    target: dict[str, str] = field(default_factory=dict)  # [tool.dnnresolve] of a pyproject.toml
    target_line: int = 0
    # a Dockerfile: the container its final stage builds (its base image's CUDA, cuDNN, OS, Python), and what
    # was found of the images themselves (a deleted tag, an image not checked)
    container: Container | None = None
    findings: list[Finding] = field(default_factory=list)
    # what pip's own configuration adds under the file's index lines (``pipconfig.apply``; requirements files only)
    pip_index: IndexContext = field(default_factory=IndexContext)
    channels: list[str] = field(default_factory=list)  # a conda environment file's, in priority order


class Reader(Protocol):
    """A reader for one format: the file's text in, a SourceFile out; raises UserError with file and line."""

    def __call__(self, path: Path, text: str, root: Path) -> SourceFile: ...


__all__ = [
    "MAX_VERSION_DIGITS",
    "IndexContext",
    "InvalidRequirement",
    "LocatedRequirement",
    "Reader",
    "Skipped",
    "SourceFile",
    "parse_requirement",
]
