"""Dockerfiles (``Dockerfile``, ``Containerfile``, ``*.dockerfile``, ``Dockerfile.*``): the stage that runs and what
it installs.

The stage that runs is the last one; the stages it is built ``FROM`` and those it copies files from
(``COPY --from=builder``) count too, since what they installed ends up in it. ``ARG`` defaults and ``ENV``
values fill in ``${VAR}`` (ARGs before the first FROM are the only ones a FROM line sees). ``RUN`` steps are read
for ``pip install`` (its ``-r`` files through the ``COPY`` lines that put them in the image, relative to the
Dockerfile's folder, the build context), ``conda install`` and the Python, CUDA or cuDNN packages ``apt-get``
installs; BuildKit's ``RUN --mount=…`` options are skipped.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Iterator
from pathlib import Path

from ..errors import UserError
from ..findings import Finding, Severity
from ..records import field, record
from . import requirements_txt
from .container import Container
from .dockerrun import Command, commands, conda_arguments, expand, pip_arguments
from .interface import IndexContext, InvalidRequirement, LocatedRequirement, Skipped, SourceFile, parse_requirement
from .matchspec import MatchSpecError, parse_matchspec

_INSTRUCTION = re.compile(r"^\s*([A-Za-z]+)(?:\s+(.*))?$", re.DOTALL)
_HEREDOC = re.compile(r"<<-?\s*[\"']?(\w+)[\"']?")
_APT_PYTHON = re.compile(r"^python(3\.\d+)(?:-dev|-venv|-distutils|-full)?(?:=\S*)?$")
_APT_PYTHON3 = re.compile(r"^python3(?:-pip|-dev|-venv|-full)?(?:=\S*)?$")
# the toolkit or its runtime, of CUDA X.Y (a pin such as =10.1.243-1 is the package's, not always CUDA's)
_APT_CUDA = re.compile(r"^cuda(?:-toolkit|-runtime|-cudart|-libraries)?-(\d+)-(\d+)(?:=\S*)?$")
_APT_CUDNN = re.compile(r"^libcudnn\d+(?:-dev)?=(\d+\.\d+\.\d+(?:\.\d+)?)")
# RUN's own options (BuildKit's --mount, --network, --security) come before the shell text
_RUN_FLAGS = re.compile(r"^\s*(?:--[a-z]+=\S*\s+)+")
# an nvidia/cuda tag whose only unknown part is the OS after the flavour
_CUDA_WITHOUT_OS = re.compile(
    r"^(?P<image>(?:[\w.-]+(?::\d+)?/)?nvidia/cuda:\d+\.\d+(?:\.\d+)?-(?:cudnn\d*-)?(?:base|runtime|devel))"
    r"-[^$]*\$\{?\w+\}?[^$]*$"
)
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


def is_dockerfile(path: Path) -> bool:
    name = path.name.lower()
    return name in ("dockerfile", "containerfile") or name.endswith(".dockerfile") or name.startswith("dockerfile.")


def read(path: Path, text: str, root: Path, stage_name: str = "") -> SourceFile:
    """The stage that runs: the last one, or the one named (``check --stage``, as ``docker build --target``)."""
    file = str(path)
    global_args: dict[str, str] = {}
    stages: list[Stage] = []
    for line, keyword, args, physical in instructions(file, text):
        stage = stages[-1] if stages else None
        if keyword == "FROM":
            stages.append(_from(file, line, args, global_args, stages))
        elif keyword == "ARG":
            for name, value in _assignments(args, stage.env if stage else global_args):
                if stage is None:
                    global_args[name] = value if value is not None else global_args.get(name, "")
                elif value is not None or name in global_args:
                    stage.env[name] = value if value is not None else global_args[name]
        elif stage is None:
            continue  # (only ARG may come before the first FROM)
        elif keyword == "ENV":
            for name, value in _assignments(args, stage.env):
                stage.env[name] = value or ""
                if name.startswith("NVIDIA_"):  # what the container toolkit reads (image_require)
                    stage.container.env[name] = value or ""
                    stage.container.where[f"ENV {name}"] = f"{file}:{line}"
        elif keyword == "WORKDIR":
            stage.workdir = _join(stage.workdir, expand(args.strip(), stage.env))
        elif keyword in ("COPY", "ADD"):
            _copy(stage, line, args)
        elif keyword == "RUN":
            _run(file, stage, line, args, physical, path.parent, root)
    sf = SourceFile(file, "dockerfile")
    if not stages:
        return sf
    final = _pick(file, stages, stage_name)
    chain = _chain(final, stages)
    for s in chain:
        sf.requirements.extend(s.requirements)
        sf.skipped.extend(s.skipped)
        sf.includes.extend(s.includes)
    sf.findings.extend(n for s in chain for n in s.notes)
    sf.container = _container(final)
    return sf


def _pick(file: str, stages: list[Stage], name: str) -> Stage:
    if not name:
        return stages[-1]
    for s in stages:
        if s.name == name.lower():
            return s
    named = ", ".join(s.name for s in stages if s.name) or "none is named"
    raise UserError(f"--stage {name}: no stage of this Dockerfile is named so (stages: {named})", file)


def instructions(file: str, text: str) -> Iterator[tuple[int, str, str, list[tuple[int, str]]]]:
    """(first line, KEYWORD, arguments, the physical lines) of each instruction: continuations joined (the
    escape character of a ``# escape=`` directive too), comment lines inside them dropped, heredoc bodies kept."""
    lines = text.splitlines()
    escape = "\\"
    for raw in lines[:5]:
        m = re.match(r"^#\s*escape\s*=\s*(\S)\s*$", raw)
        if m:
            escape = m.group(1)
    i = 0
    while i < len(lines):
        start, buf = i + 1, list[str]()
        physical: list[tuple[int, str]] = []
        while True:
            raw = lines[i]
            i += 1
            if buf and raw.lstrip().startswith("#"):  # a comment inside a continued instruction
                _continues(i, lines, file, start)
                continue
            physical.append((i, raw))
            stripped = raw.rstrip()
            if stripped.endswith(escape) and not stripped.endswith(escape * 2):
                buf.append(stripped[:-1])
                _continues(i, lines, file, start)
                continue
            buf.append(raw)
            break
        joined = " ".join(buf).strip()
        if not joined or joined.startswith("#"):
            continue
        m = _INSTRUCTION.match(joined)
        if m is None:
            raise UserError(f"not a Dockerfile instruction: {joined[:60]!r}", file, start)
        keyword, args = m.group(1).upper(), m.group(2) or ""
        for tag in _HEREDOC.findall(args) if keyword in ("RUN", "COPY", "ADD") else ():
            body = []
            while i < len(lines) and lines[i].strip() != tag:
                body.append(lines[i])
                physical.append((i + 1, lines[i]))
                i += 1
            if i >= len(lines):
                raise UserError(f"heredoc <<{tag} is never closed", file, start)
            i += 1
            args += "\n" + "\n".join(body)
        yield start, keyword, args, physical


def _continues(i: int, lines: list[str], file: str, start: int) -> None:
    """An instruction continued past the last line is bad input, named by the line it started on."""
    if i >= len(lines):
        raise UserError(
            f"line continuation at the end of the file: the instruction of line {start} is unterminated", file, start
        )


def _assignments(args: str, env: dict[str, str]) -> Iterator[tuple[str, str | None]]:
    """NAME=value pairs of ARG / ENV (``ENV NAME value`` too); a bare ARG NAME has no value (None)."""
    import shlex

    try:
        words = shlex.split(args)
    except ValueError:
        words = args.split()
    if len(words) >= 2 and "=" not in words[0]:
        yield words[0], expand(" ".join(words[1:]), env)  # ENV NAME value
        return
    for w in words:
        name, eq, value = w.partition("=")
        yield name, (expand(value, env) if eq else None)


def _from(file: str, line: int, args: str, global_args: dict[str, str], stages: list[Stage]) -> Stage:
    words = [w for w in args.split() if not w.startswith("--platform")]
    ref = words[0] if words else ""
    name = words[2] if len(words) >= 3 and words[1].lower() == "as" else ""
    missing: list[str] = []
    base = expand(ref, global_args, missing)
    parent = next((s for s in reversed(stages) if s.name and s.name == base.lower()), None)
    stage = Stage(name.lower(), "" if missing else base, line, parent)
    if parent is not None:
        stage.env = dict(parent.env)
        stage.workdir = parent.workdir
        stage.copies = list(parent.copies)
        stage.container = copy.deepcopy(parent.container)
    elif missing:
        known = _CUDA_WITHOUT_OS.match(base)
        what = "its OS not checked" if known else "base image not checked"
        message = f"FROM {ref}: ${missing[0]} is set by no ARG before the first FROM (a --build-arg?): {what}"
        stage.notes.append(Finding(file, line, "", Severity.INFO, "image-not-checked", message))
        if known:  # nvidia/cuda:12.1.0-runtime-ubuntu${UBUNTU}: the CUDA and cuDNN are known all the same
            image = known.group("image")
            stage.container = Container(image=image, where={"image": f"{file}:{line} (FROM {base})"})
    else:
        stage.container = Container(image=base, where={"image": f"{file}:{line} (FROM {base})"})
    return stage


def _copy(stage: Stage, line: int, args: str) -> None:
    words = args.split()
    sources = [w for w in words if not w.startswith("--")]
    for w in words:
        if w.startswith("--from="):
            stage.copied_from.append(w.split("=", 1)[1].lower())
            return  # files of another stage or image, not of the build context
    if len(sources) < 2 or sources[0].startswith("["):
        return
    dest = _join(stage.workdir, expand(sources[-1], stage.env))
    # a folder: written as one, or the WORKDIR itself (COPY requirements.txt /app after WORKDIR /app)
    many = len(sources) > 2 or sources[-1].endswith("/") or sources[-1] in (".", "./") or dest == stage.workdir
    for src in sources[:-1]:
        src = expand(src, stage.env)
        target = _join(dest, os.path.basename(src.rstrip("/"))) if many and src not in (".", "./") else dest
        stage.copies.append((src, target, line))


def _join(base: str, path: str) -> str:
    return os.path.normpath(path if path.startswith("/") else os.path.join(base or "/", path))


def _chain(final: Stage, stages: list[Stage]) -> list[Stage]:
    """The final stage, the stages it is built from, and those it (or they) copy files from, oldest first."""
    named = {s.name: s for s in stages if s.name}
    out: list[Stage] = []
    todo = [final]
    while todo:
        s = todo.pop()
        if s in out:
            continue
        out.append(s)
        if s.parent is not None:
            todo.append(s.parent)
        todo.extend(named[n] for n in s.copied_from if n in named)
        todo.extend(stages[int(n)] for n in s.copied_from if n.isdigit() and int(n) < len(stages))
    return sorted(out, key=lambda s: s.line)


def _container(final: Stage) -> Container:
    return final.container


def _line_of(word: str, physical: list[tuple[int, str]], after: int) -> int:
    """The physical line, at or after ``after``, where a word of the instruction is written."""
    for number, text in physical:
        if number >= after and word in text:
            return number
    return after


def _run(
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
            at = _line_of(value, physical, at)
            found.extend(_requirements_file(file, stage, at, value, name in ("-c", "--constraint"), base, root))
        elif name in ("-e", "--editable"):
            stage.skipped.append(
                Skipped(file, _line_of(value, physical, at), f"-e {value}", "editable install: not checked")
            )
    for word in words:
        at = _line_of(word, physical, at)
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
    inside = _join(stage.workdir, value)
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
        at = _line_of(spec, physical, at)
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
            _set(stage, "python", m.group(1), f"{file}:{_line_of(word, physical, at)} ({word})")
            continue
        if _APT_PYTHON3.match(word) and "python3" not in stage.container.where:
            stage.container.where["python3"] = f"{file}:{_line_of(word, physical, at)} ({word})"
            continue
        m = _APT_CUDNN.match(word)
        if m:
            _set(stage, "cudnn", m.group(1), f"{file}:{_line_of(word, physical, at)} ({word})")
            continue
        m = _APT_CUDA.match(word)
        if m:
            _set(stage, "cuda", f"{m.group(1)}.{m.group(2)}", f"{file}:{_line_of(word, physical, at)} ({word})")


def _set(stage: Stage, key: str, version: str, where: str) -> None:
    from ..versions import CudaVersion, CudnnVersion, PythonVersion, VersionError

    parse = {"python": PythonVersion.parse, "cuda": CudaVersion.parse, "cudnn": CudnnVersion.parse}[key]
    try:
        setattr(stage.container, key, parse(version))
    except VersionError:
        return
    stage.container.where[key] = where
    stage.container.stepped.add(key)
