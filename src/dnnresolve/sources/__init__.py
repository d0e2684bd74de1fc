"""Readers of requirement files, one module per format; ``read_paths`` picks the reader for each file.

Files are recognised by name first (pyproject.toml, Pipfile, environment*.yml, conda.yaml, *.txt, *.in),
then by content for other names. Every reader yields requirements with file and line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .interface import IndexContext, LocatedRequirement, Skipped, SourceFile
    from .reading import project_root, read_file, read_paths

__all__ = ["IndexContext", "LocatedRequirement", "Skipped", "SourceFile", "project_root", "read_file", "read_paths"]


def __getattr__(name: str) -> Any:
    # imported on first use: ``sources.interface`` (which plan and matrix need) must not pull in every reader
    if name in ("IndexContext", "LocatedRequirement", "Skipped", "SourceFile"):
        from . import interface

        return getattr(interface, name)
    if name in ("project_root", "read_file", "read_paths"):
        from . import reading

        return getattr(reading, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
