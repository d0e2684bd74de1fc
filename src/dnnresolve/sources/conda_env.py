"""conda environment files (environment.yml, environment-gpu.yml, conda.yaml): conda MatchSpecs under
``dependencies``, the ``pip:`` list (pip's line format, index options included), and ``channels``.

Line numbers come from the YAML node marks (yaml.compose), so each entry points at its own line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import UserError
from . import requirements_txt
from .interface import LocatedRequirement, SourceFile
from .matchspec import MatchSpecError, parse_matchspec
from .text import first_line, line_of, too_deep_line


def read(path: Path, text: str, root: Path) -> SourceFile:
    import yaml  # lazily: only conda files need it

    file = str(path)
    try:
        node = yaml.compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        if mark is not None:
            line: int | None = mark.line + 1
        elif isinstance(getattr(exc, "position", None), int):  # a ReaderError: a character YAML forbids
            line = line_of(text, exc.position)  # type: ignore[attr-defined]
        else:
            line = None
        problem = first_line(Exception(getattr(exc, "problem", None) or exc))
        raise UserError(f"not valid YAML: {problem}", file, line) from exc
    except RecursionError as exc:
        raise UserError("not valid YAML: nested too deeply", file, too_deep_line(text)) from exc
    sf = SourceFile(file, "conda")
    if node is None:
        return sf
    if not isinstance(node, yaml.MappingNode):
        raise UserError("not a conda environment file (expected a mapping with 'dependencies')", file, 1)
    channels = _value(node, "channels")
    if isinstance(channels, yaml.SequenceNode):
        sf.channels = [str(c.value) for c in channels.value if isinstance(c, yaml.ScalarNode)]
    deps = _value(node, "dependencies")
    if deps is None:
        return sf
    if not isinstance(deps, yaml.SequenceNode):
        raise UserError("'dependencies' must be a list", file, deps.start_mark.line + 1)
    for item in deps.value:
        line = item.start_mark.line + 1
        if isinstance(item, yaml.ScalarNode):
            _conda(sf, line, str(item.value))
        elif isinstance(item, yaml.MappingNode):
            pip = _value(item, "pip")
            if isinstance(pip, yaml.SequenceNode):
                _pip(sf, path, root, pip)
    return sf


def _value(mapping: Any, key: str) -> Any:
    for k, v in mapping.value:
        if getattr(k, "value", None) == key:
            return v
    return None


def _conda(sf: SourceFile, line: int, text: str) -> None:
    try:
        spec = parse_matchspec(text)
    except MatchSpecError as exc:
        raise UserError(str(exc), sf.path, line) from exc
    sf.requirements.append(LocatedRequirement(sf.path, line, text, "conda", conda=spec, group="dependencies"))


def _pip(sf: SourceFile, path: Path, root: Path, pip: Any) -> None:
    import yaml

    numbered = [(n.start_mark.line + 1, str(n.value)) for n in pip.value if isinstance(n, yaml.ScalarNode)]
    state = requirements_txt.PipLines(root, stack=[path.resolve()])
    requirements_txt.read_lines(sf.path, numbered, path.parent, state, constraint=False, group="pip")
    sf.requirements.extend(state.finish())
    sf.skipped.extend(state.skipped)
    sf.includes.extend(state.includes)
