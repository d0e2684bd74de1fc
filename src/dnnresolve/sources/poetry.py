"""[tool.poetry] dependencies, groups and sources, with poetry's constraint syntax turned into PEP 440.

``^1.2.3`` -> ``>=1.2.3,<2.0.0`` (the leftmost non-zero part may not change), ``^0.2.3`` -> ``>=0.2.3,<0.3.0``,
``~1.2.3`` -> ``>=1.2.3,<1.3.0``, ``~1`` -> ``>=1,<2``, ``*`` -> any, ``1.2.3`` -> ``==1.2.3``, ``1.2.*`` as is,
``>= 1.2, < 2`` and ``>=1.2 <2`` -> ``>=1.2,<2``. An ``||`` alternative has no PEP 440 form: skipped.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import UserError
from .interface import IndexContext, InvalidRequirement, LocatedRequirement, Skipped, SourceFile, parse_requirement
from .text import first_line
from .tomllines import TomlLines, as_list


class PoetryConstraintError(ValueError):
    pass


def poetry_to_pep440(constraint: str) -> str:
    c = constraint.strip()
    if "||" in c or "|" in c:
        raise PoetryConstraintError(f"poetry alternative {constraint!r} has no PEP 440 form")
    if c in ("", "*"):
        return ""
    parts = [p for p in re.split(r"\s*,\s*|\s+(?=[<>=!~^])", c) if p]
    return ",".join(_one(p.replace(" ", "")) for p in parts)


def _one(p: str) -> str:
    if p.startswith("^"):
        nums = _numbers(p[1:])
        upper = _caret_upper(nums)
        return f">={p[1:]},<{upper}"
    if p.startswith("~") and not p.startswith("~="):
        nums = _numbers(p[1:])
        bound = [nums[0] + 1] if len(nums) == 1 else [nums[0], nums[1] + 1]
        return f">={p[1:]},<{'.'.join(map(str, bound))}"
    if p[0] in "<>=!~":
        return p if not (p.startswith("=") and not p.startswith("==")) else "=" + p
    return f"=={p}"


def _numbers(v: str) -> list[int]:
    m = re.match(r"^(\d{1,9}(?:\.\d{1,9})*)(?!\d)", v)
    if not m:
        raise PoetryConstraintError(f"not a version: {v!r}")
    return [int(x) for x in m.group(1).split(".")]


def _caret_upper(nums: list[int]) -> str:
    for i, n in enumerate(nums):
        if n != 0:
            return ".".join(map(str, [*nums[:i], n + 1]))
    # ^0, ^0.0, ^0.0.0: the last given part may change by one
    return ".".join(map(str, [*nums[:-1], nums[-1] + 1]))


def read_poetry(doc: dict[str, Any], lines: TomlLines, sf: SourceFile) -> None:
    tool = doc.get("tool", {})
    poetry = tool.get("poetry", {}) if isinstance(tool, dict) else {}
    if not isinstance(poetry, dict) or not poetry:
        return
    sources = {
        str(s.get("name")): str(s.get("url", ""))
        for s in as_list(poetry.get("source"))
        if isinstance(s, dict) and s.get("url")
    }
    primary = [
        str(s["url"])
        for s in as_list(poetry.get("source"))
        if isinstance(s, dict) and s.get("url") and s.get("priority", "primary") in ("primary", "default")
    ]
    default_ctx = IndexContext(primary[0], tuple(primary[1:])) if primary else IndexContext()
    groups: list[tuple[str, Any]] = [("tool.poetry.dependencies", poetry.get("dependencies", {}))]
    groups.append(("tool.poetry.dev-dependencies", poetry.get("dev-dependencies", {})))
    for name, g in (poetry.get("group") or {}).items():
        if isinstance(g, dict):
            groups.append((f"tool.poetry.group.{name}.dependencies", g.get("dependencies", {})))
    for table, deps in groups:
        if not isinstance(deps, dict):
            continue
        for name, spec in deps.items():
            if name.lower() == "python":
                continue
            line = lines.key_line([table], name)
            _add(sf, table, line, name, spec, sources, default_ctx)


def _add(
    sf: SourceFile, table: str, line: int, name: str, spec: Any, sources: dict[str, str], default_ctx: IndexContext
) -> None:
    entry = spec[0] if isinstance(spec, list) and spec else spec
    raw = f"{name} = {spec!r}" if not isinstance(spec, str) else f'{name} = "{spec}"'
    if isinstance(entry, str):
        version, extras, markers, source = entry, [], "", ""
    elif isinstance(entry, dict):
        if any(k in entry for k in ("git", "path", "url")):
            sf.skipped.append(Skipped(sf.path, line, raw, f"{name} from a git/path/url source: not checked"))
            return
        version = str(entry.get("version", "*"))
        extras = [str(e) for e in as_list(entry.get("extras"))]
        markers = str(entry.get("markers", ""))
        source = str(entry.get("source", ""))
    else:
        return
    try:
        specifier = poetry_to_pep440(version)
    except PoetryConstraintError as exc:
        sf.skipped.append(Skipped(sf.path, line, raw, f"{exc}: not checked"))
        return
    text = name + (f"[{','.join(extras)}]" if extras else "") + specifier + (f"; {markers}" if markers else "")
    try:
        req = parse_requirement(text)
    except InvalidRequirement as exc:
        raise UserError(f"cannot read poetry dependency {raw}: {first_line(exc)}", sf.path, line) from exc
    ctx = default_ctx
    if source:
        if source not in sources:
            raise UserError(f"{name}: no [[tool.poetry.source]] named {source!r}", sf.path, line)
        ctx = IndexContext(sources[source])
    group = table.removeprefix("tool.poetry.")
    sf.requirements.append(LocatedRequirement(sf.path, line, raw, "pip", requirement=req, index=ctx, group=group))
