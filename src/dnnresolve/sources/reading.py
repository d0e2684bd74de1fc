"""Which reader reads each file: by name first (pyproject.toml, Pipfile, environment*.yml, conda.yaml, *.txt,
*.in), then by content; a directory stands for the requirement files directly inside it."""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from ..errors import UserError
from . import conda_env, dockerfile, pipfile, pyproject, requirements_txt
from .interface import Reader, SourceFile
from .text import read_source

__all__ = ["project_root", "read_file", "read_paths"]

_PROJECT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg", ".hg")
# What a directory argument stands for: the requirement files found directly inside it.
_DIR_PATTERNS = (
    "requirements*.txt",
    "requirements*.in",
    "pyproject.toml",
    "Pipfile",
    "environment*.y*ml",
    "conda.y*ml",
    "Dockerfile",
    "Containerfile",
    "*.dockerfile",
    "Dockerfile.*",
)


def project_root(path: Path, known: dict[Path, Path] | None = None) -> Path:
    """The nearest directory above ``path`` holding a project marker (.git, pyproject.toml...), else its folder.
    ``known`` remembers the answer per folder across the files of one run (a monorepo's thousand files)."""
    start = path.resolve().parent
    if known is not None and start in known:
        return known[start]
    root = start
    for d in (start, *start.parents):
        if any((d / m).exists() for m in _PROJECT_MARKERS):
            root = d
            break
    if known is not None:
        known[start] = root
    return root


def kind_of(path: Path, text: str) -> str:
    name = path.name.lower()
    if name == "pyproject.toml":
        return "pyproject"
    if name == "pipfile":
        return "pipfile"
    if dockerfile.is_dockerfile(path):
        return "dockerfile"
    if name.endswith((".yml", ".yaml")):
        return "conda"
    if name.endswith((".txt", ".in")):
        return "requirements"
    if re.search(r"(?m)^\s*dependencies\s*:", text):
        return "conda"
    if re.search(r"(?m)^\s*\[(packages|dev-packages)\]", text):
        return "pipfile"
    if re.search(r"(?m)^\s*\[(project|tool\.[\w.-]+)\]", text):
        return "pyproject"
    return "requirements"


_READERS: dict[str, Reader] = {
    "pyproject": pyproject.read,
    "pipfile": pipfile.read,
    "conda": conda_env.read,
    "requirements": requirements_txt.read,
    "dockerfile": dockerfile.read,
}


def read_file(path: Path, roots: dict[Path, Path] | None = None, stage: str = "") -> SourceFile:
    """One file, read; ``stage``: the stage of a Dockerfile to read (else the last, the one that runs)."""
    text = read_source(path, str(path))
    kind = kind_of(path, text)
    if kind == "dockerfile" and stage:
        return dockerfile.read(path, text, project_root(path, roots), stage)
    return _READERS[kind](path, text, project_root(path, roots))


def expand(patterns: Sequence[str]) -> list[Path]:
    """File arguments: plain paths, globs (``**`` allowed) and directories, in order, each once."""
    out: dict[str, Path] = {}
    for pattern in patterns:
        if any(ch in pattern for ch in "*?["):
            matches = sorted(glob.glob(pattern, recursive=True))
            if not matches:
                raise UserError(f"no file matches {pattern!r}")
            for m in matches:
                if os.path.isfile(m):
                    out.setdefault(os.path.normpath(m), Path(m))
        elif os.path.isdir(pattern):
            # regular files only: a FIFO or device that happens to match is not opened (it could block the run)
            found = sorted({f for p in _DIR_PATTERNS for f in glob.glob(os.path.join(pattern, p)) if os.path.isfile(f)})
            if not found:
                raise UserError("no requirement files in this directory", pattern)
            for f in found:
                out.setdefault(os.path.normpath(f), Path(f))
        else:
            out.setdefault(os.path.normpath(pattern), Path(pattern))
    return list(out.values())


def read_paths(
    patterns: Sequence[str], on_progress: Callable[[int, int], None] | None = None, stage: str = ""
) -> list[SourceFile]:
    """Every file the patterns name, read; ``on_progress(done, total)`` hears of each one."""
    paths = expand(patterns)
    out = []
    roots: dict[Path, Path] = {}
    for n, p in enumerate(paths, 1):
        out.append(read_file(p, roots, stage))
        if on_progress is not None:
            on_progress(n, len(paths))
    return out
