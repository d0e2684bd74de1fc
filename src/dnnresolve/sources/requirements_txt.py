"""requirements.txt (and *.in): pip's line format.

pip applies the index options of a requirements file (``--index-url``, ``--extra-index-url``,
``--find-links``, ``--no-index``) to the whole install, wherever they appear and in whichever ``-r``
file, so every requirement of one top-level file shares the context collected from its whole tree.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..artifact import unnamed_line, wheel_requirement
from ..errors import UserError
from ..records import field, record, replace
from .interface import IndexContext, InvalidRequirement, LocatedRequirement, Skipped, SourceFile, parse_requirement
from .text import first_line, read_source

_OPTION_SPLIT = re.compile(r"\s+(?=--?[A-Za-z])")
_COMMENT = re.compile(r"(^|\s+)#.*$")
_URLISH = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|(?:git|hg|svn|bzr)\+|\.{1,2}[/\\]|/|[A-Za-z]:[/\\])")
# Options that take a value and do not change which packages or indexes are used.
_IGNORED_WITH_VALUE = {"--trusted-host", "--only-binary", "--no-binary", "--use-feature", "--config-settings"}
_IGNORED_FLAGS = {"--pre", "--prefer-binary", "--require-hashes", "--no-deps"}


@record
class PipLines:
    """What a run of requirement lines (a file and its includes, or a conda ``pip:`` list) holds."""

    root: Path
    requirements: list[LocatedRequirement] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    includes: list[str] = field(default_factory=list)
    index: IndexContext = field(default_factory=IndexContext)
    stack: list[Path] = field(default_factory=list)

    def finish(self) -> list[LocatedRequirement]:
        if self.index == IndexContext():
            return self.requirements
        return [replace(r, index=self.index) for r in self.requirements]


def read(path: Path, text: str, root: Path) -> SourceFile:
    state = PipLines(root, stack=[path.resolve()])
    read_lines(str(path), enumerate(text.splitlines(), 1), path.parent, state, constraint=False)
    return SourceFile(str(path), "requirements", state.finish(), state.skipped, state.includes)


def logical_lines(lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """Joins backslash continuations and drops comments; yields (first line number, text)."""
    start, buf = 0, list[str]()
    for number, physical in lines:
        if not buf:
            start = number
        if physical.endswith("\\") and not physical.endswith("\\\\"):
            buf.append(physical[:-1])
            continue
        buf.append(physical)
        joined = _COMMENT.sub("", " ".join(buf)).strip()
        buf = []
        if joined:
            yield start, joined
    if buf:
        joined = _COMMENT.sub("", " ".join(buf)).strip()
        if joined:
            yield start, joined


def read_lines(
    file: str, lines: Iterable[tuple[int, str]], base: Path, state: PipLines, constraint: bool, group: str = ""
) -> None:
    for number, line in logical_lines(lines):
        if line.startswith("-"):
            _option(file, number, line, base, state, constraint)
            continue
        req_text = _OPTION_SPLIT.split(line, maxsplit=1)[0].strip()
        _requirement(file, number, req_text, state, constraint, group)


def _option(file: str, number: int, line: str, base: Path, state: PipLines, constraint: bool) -> None:
    m = re.match(r"(--?[A-Za-z][\w-]*)(?:\s*=\s*|\s+)?(.*)$", line)
    if m is None:  # "-", "--", "-1": a dash that starts no option pip knows
        raise UserError(f"not an option or a requirement: {line!r}", file, number)
    opt, value = m.group(1), m.group(2).strip()
    if opt in ("-r", "--requirement", "-c", "--constraint"):
        _include(file, number, value, base, state, constraint or opt in ("-c", "--constraint"))
    elif opt in ("-i", "--index-url"):
        state.index = replace(state.index, index_url=value)
    elif opt == "--extra-index-url":
        state.index = state.index.merged(IndexContext(extra_index_urls=(value,)))
    elif opt in ("-f", "--find-links"):
        state.index = state.index.merged(IndexContext(find_links=(value,)))
    elif opt == "--no-index":
        state.index = replace(state.index, no_index=True)
    elif opt in ("-e", "--editable"):
        state.skipped.append(Skipped(file, number, line, "editable install: not checked"))
    elif opt in _IGNORED_WITH_VALUE or opt in _IGNORED_FLAGS or opt == "--hash":
        return
    else:
        state.skipped.append(Skipped(file, number, line, f"option {opt} not understood: ignored"))


def _include(file: str, number: int, value: str, base: Path, state: PipLines, constraint: bool) -> None:
    if not value:
        raise UserError("-r/-c needs a file name", file, number)
    if re.match(r"^[a-z][a-z0-9+.-]*://", value):
        state.skipped.append(Skipped(file, number, value, "include by URL: not read"))
        return
    target = base / value
    shown = os.path.normpath(target)
    resolved = target.resolve()
    if not _inside(resolved, state.root):
        raise UserError(f"include {value!r} points outside the project ({state.root})", file, number)
    if resolved in state.stack:
        chain = " -> ".join(p.name for p in [*state.stack[state.stack.index(resolved) :], resolved])
        raise UserError(f"include cycle: {chain}", file, number)
    if not resolved.is_file():
        raise UserError(f"include {value!r}: no such file", file, number)
    text = read_source(resolved, shown)
    state.includes.append(shown)
    state.stack.append(resolved)
    group = f"-c {value}" if constraint else f"-r {value}"
    read_lines(shown, enumerate(text.splitlines(), 1), resolved.parent, state, constraint, group)
    state.stack.pop()


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root.resolve())
    except ValueError:
        return False
    return True


def _requirement(file: str, number: int, text: str, state: PipLines, constraint: bool, group: str) -> None:
    why = unnamed_line(text)
    if why or _URLISH.match(text):
        # pip installs it (a path such as submodules/diff-gaussian-rasterization is built from its directory)
        state.skipped.append(Skipped(file, number, text, why or "not checked: a URL, VCS link or local path"))
        return
    try:
        req = parse_requirement(text)
    except InvalidRequirement as exc:
        raise UserError(f"not a valid requirement {text!r}: {first_line(exc)}", file, number) from exc
    if req.url and wheel_requirement(req) is None:  # (a wheel's file name says its release and build: checked)
        state.skipped.append(Skipped(file, number, text, f"{req.name} from a URL: not checked"))
        return
    state.requirements.append(
        LocatedRequirement(file, number, text, "pip", requirement=req, group=group, constraint=constraint)
    )
