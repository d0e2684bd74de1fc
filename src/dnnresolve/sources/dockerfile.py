"""Dockerfiles (``Dockerfile``, ``Containerfile``, ``*.dockerfile``, ``Dockerfile.*``): the stage that runs and what
it installs.

The stage that runs is the last one; the stages it is built ``FROM`` and those it copies files from
(``COPY --from=builder``) count too, since what they installed ends up in it. ``ARG`` defaults and ``ENV``
values fill in ``${VAR}`` (ARGs before the first FROM are the only ones a FROM line sees). What each ``RUN``
step installs is read by ``dockerstage``.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Iterator
from pathlib import Path

from ..errors import UserError
from ..findings import Finding, Severity
from .container import Container
from .dockerrun import expand
from .dockerstage import Stage, join, run
from .interface import SourceFile

_INSTRUCTION = re.compile(r"^\s*([A-Za-z]+)(?:\s+(.*))?$", re.DOTALL)
_HEREDOC = re.compile(r"<<-?\s*[\"']?(\w+)[\"']?")
# an nvidia/cuda tag whose only unknown part is the OS after the flavour
_CUDA_WITHOUT_OS = re.compile(
    r"^(?P<image>(?:[\w.-]+(?::\d+)?/)?nvidia/cuda:\d+\.\d+(?:\.\d+)?-(?:cudnn\d*-)?(?:base|runtime|devel))"
    r"-[^$]*\$\{?\w+\}?[^$]*$"
)


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
            stage.workdir = join(stage.workdir, expand(args.strip(), stage.env))
        elif keyword in ("COPY", "ADD"):
            _copy(stage, line, args)
        elif keyword == "RUN":
            run(file, stage, line, args, physical, path.parent, root)
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
    dest = join(stage.workdir, expand(sources[-1], stage.env))
    # a folder: written as one, or the WORKDIR itself (COPY requirements.txt /app after WORKDIR /app)
    many = len(sources) > 2 or sources[-1].endswith("/") or sources[-1] in (".", "./") or dest == stage.workdir
    for src in sources[:-1]:
        src = expand(src, stage.env)
        target = join(dest, os.path.basename(src.rstrip("/"))) if many and src not in (".", "./") else dest
        stage.copies.append((src, target, line))


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
