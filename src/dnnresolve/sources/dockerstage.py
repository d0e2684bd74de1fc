"""A Dockerfile stage, and what its ``RUN`` steps install: ``pip install`` (its ``-r`` files through the ``COPY``
lines that put them in the image, relative to the build context), ``conda install``, and the Python, CUDA or cuDNN
packages ``apt-get`` installs. BuildKit's ``RUN --mount=…`` options are skipped. ``dockerfile`` reads the
instructions and chooses the stages."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..findings import Finding
from ..records import field, record
from . import requirements_txt
from .container import Container
from .dockerrun import Command, commands, conda_arguments, pip_arguments
from .interface import IndexContext, InvalidRequirement, LocatedRequirement, Skipped, parse_requirement
from .matchspec import MatchSpecError, parse_matchspec

_APT_PYTHON = re.compile(r"^python(3\.\d+)(?:-dev|-venv|-distutils|-full)?(?:=\S*)?$")
_APT_PYTHON3 = re.compile(r"^python3(?:-pip|-dev|-venv|-full)?(?:=\S*)?$")
# the toolkit or its runtime, of CUDA X.Y (a pin such as =10.1.243-1 is the package's, not always CUDA's)
_APT_CUDA = re.compile(r"^cuda(?:-toolkit|-runtime|-cudart|-libraries)?-(\d+)-(\d+)(?:=\S*)?$")
_APT_CUDNN = re.compile(r"^libcudnn\d+(?:-dev)?=(\d+\.\d+\.\d+(?:\.\d+)?)")
# RUN's own options (BuildKit's --mount, --network, --security) come before the shell text
_RUN_FLAGS = re.compile(r"^\s*(?:--[a-z]+=\S*\s+)+")
_URLISH = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|(?:git|hg|svn|bzr)\+|\.{1,2}(?:/|$)|/)")


@record
class Stage:
    name: str
    base: str  # the FROM image, variables filled in ("" when one stayed unknown)
    line: int
    parent: Stage | None = None  # the stage it is built FROM, when the base names an earlier stage
    env: dict[str, str] = field(default_factory=dict)
    workdir: str = "/"
    copies: list[tuple[str, str, int]] = field(default_factory=list)  # (context source, image destination, line)
    copied_from: list[str] = field(default_factory=list)  # stages COPY --from names
    requirements: list[LocatedRequirement] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    includes: list[str] = field(default_factory=list)
    container: Container = field(default_factory=Container)
    notes: list[Finding] = field(default_factory=list)


def join(base: str, path: str) -> str:
    return os.path.normpath(path if path.startswith("/") else os.path.join(base or "/", path))


def line_of(word: str, physical: list[tuple[int, str]], after: int) -> int:
    """The physical line, at or after ``after``, where a word of the instruction is written."""
    for number, text in physical:
        if number >= after and word in text:
            return number
    return after


def run(
    file: str, stage: Stage, line: int, script: str, physical: list[tuple[int, str]], base: Path, root: Path
) -> None:
    at = line
    script = _RUN_FLAGS.sub("", script, count=1)
    for command in commands(script, stage.env):
        if command.tool == "pip":
            at = _pip(file, stage, command, physical, at, base, root)
        elif command.tool in ("conda", "conda-env"):
            at = _conda(file, stage, command, physical, at)
        elif command.tool == "apt":
            _apt(file, stage, command, physical, at)


def _pip(
    file: str, stage: Stage, command: Command, physical: list[tuple[int, str]], at: int, base: Path, root: Path
) -> int:
    options, words = pip_arguments(command.words)
    index = IndexContext()
    found: list[LocatedRequirement] = []
    for name, value in options:
        if name in ("-i", "--index-url"):
            index = IndexContext(value, index.extra_index_urls, index.find_links, index.no_index)
        elif name == "--extra-index-url":
            index = index.merged(IndexContext(extra_index_urls=(value,)))
        elif name in ("-f", "--find-links"):
            index = index.merged(IndexContext(find_links=(value,)))
        elif name == "--no-index":
            index = IndexContext(index.index_url, index.extra_index_urls, index.find_links, True)
        elif name in ("-r", "--requirement", "-c", "--constraint"):
            at = line_of(value, physical, at)
            found.extend(_requirements_file(file, stage, at, value, name in ("-c", "--constraint"), base, root))
        elif name in ("-e", "--editable"):
            stage.skipped.append(
                Skipped(file, line_of(value, physical, at), f"-e {value}", "editable install: not checked")
            )
    for word in words:
        at = line_of(word, physical, at)
        if "$" in word:
            stage.skipped.append(Skipped(file, at, word, "names a variable no ARG or ENV sets: not checked"))
        elif _URLISH.match(word) or word.endswith((".whl", ".tar.gz", ".zip")):
            stage.skipped.append(Skipped(file, at, word, "URL, VCS or local path requirement: not checked"))
        else:
            try:
                req = parse_requirement(word)
            except InvalidRequirement:
                stage.skipped.append(Skipped(file, at, word, "not a requirement pip would read: not checked"))
                continue
            found.append(LocatedRequirement(file, at, word, "pip", requirement=req, group="RUN pip install"))
    if index != IndexContext():
        found = [r if r.index != IndexContext() else _with_index(r, index) for r in found]
    stage.requirements.extend(found)
    return at


def _with_index(r: LocatedRequirement, index: IndexContext) -> LocatedRequirement:
    from ..records import replace

    return replace(r, index=index)


def _requirements_file(
    file: str, stage: Stage, line: int, value: str, constraint: bool, base: Path, root: Path
) -> list[LocatedRequirement]:
    """The requirements of a ``pip install -r FILE``: FILE found through the COPY that put it in the image."""
    inside = join(stage.workdir, value)
    context = None
    for src, dest, _ in reversed(stage.copies):
        if dest == inside:
            context = src
        elif (src in (".", "./") or (base / src).is_dir()) and inside.startswith(dest.rstrip("/") + "/"):
            context = os.path.join(src, os.path.relpath(inside, dest))
        if context is not None:
            break
    if context is None:
        stage.skipped.append(Skipped(file, line, f"-r {value}", "no COPY puts this file in the image: not read"))
        return []
    target = (base / context).resolve()
    shown = os.path.normpath(base / context)
    if not target.is_file():
        stage.skipped.append(Skipped(file, line, f"-r {value}", f"{shown} is not in the build context: not read"))
        return []
    state = requirements_txt.PipLines(root, stack=[target])
    from .text import read_source

    text = read_source(target, shown)
    stage.includes.append(shown)
    group = f"-c {value}" if constraint else f"-r {value}"
    requirements_txt.read_lines(shown, enumerate(text.splitlines(), 1), target.parent, state, constraint, group)
    stage.skipped.extend(state.skipped)
    stage.includes.extend(state.includes)
    return state.finish()


def _conda(file: str, stage: Stage, command: Command, physical: list[tuple[int, str]], at: int) -> int:
    _, specs = conda_arguments(command.words)
    if command.tool == "conda-env":
        return at  # (conda env create -f FILE: the file is checked on its own)
    for spec in specs:
        at = line_of(spec, physical, at)
        try:
            match = parse_matchspec(spec)
        except MatchSpecError:
            stage.skipped.append(Skipped(file, at, spec, "not a conda package spec: not checked"))
            continue
        located = LocatedRequirement(file, at, spec, "conda", conda=match, group="RUN conda install")
        version = match.exact_version
        where = f"{file}:{at} ({spec})"
        if match.name == "python" and version:
            _set(stage, "python", version, where)
        elif match.name in ("cudatoolkit", "cuda-version", "cuda-toolkit") and version:
            _set(stage, "cuda", version, where)
        elif match.name == "cudnn" and version:
            _set(stage, "cudnn", version, where)
        stage.requirements.append(located)
    return at


def _apt(file: str, stage: Stage, command: Command, physical: list[tuple[int, str]], at: int) -> None:
    for word in command.words:
        m = _APT_PYTHON.match(word)
        if m:
            _set(stage, "python", m.group(1), f"{file}:{line_of(word, physical, at)} ({word})")
            continue
        if _APT_PYTHON3.match(word) and "python3" not in stage.container.where:
            stage.container.where["python3"] = f"{file}:{line_of(word, physical, at)} ({word})"
            continue
        m = _APT_CUDNN.match(word)
        if m:
            _set(stage, "cudnn", m.group(1), f"{file}:{line_of(word, physical, at)} ({word})")
            continue
        m = _APT_CUDA.match(word)
        if m:
            _set(stage, "cuda", f"{m.group(1)}.{m.group(2)}", f"{file}:{line_of(word, physical, at)} ({word})")


def _set(stage: Stage, key: str, version: str, where: str) -> None:
    from ..versions import CudaVersion, CudnnVersion, PythonVersion, VersionError

    parse = {"python": PythonVersion.parse, "cuda": CudaVersion.parse, "cudnn": CudnnVersion.parse}[key]
    try:
        setattr(stage.container, key, parse(version))
    except VersionError:
        return
    stage.container.where[key] = where
    stage.container.stepped.add(key)
