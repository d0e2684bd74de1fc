"""Pipfile (TOML): [packages], [dev-packages] and [[source]].

pipenv installs from the first [[source]] unless a package names another with ``index = "..."``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import UserError
from .interface import IndexContext, InvalidRequirement, LocatedRequirement, Skipped, SourceFile, parse_requirement
from .text import first_line
from .tomllines import TomlLines, as_list, load_toml


def read(path: Path, text: str, root: Path) -> SourceFile:
    file = str(path)
    doc = load_toml(text, file)
    lines = TomlLines(text)
    sf = SourceFile(file, "pipfile")
    sources = [s for s in as_list(doc.get("source")) if isinstance(s, dict) and isinstance(s.get("url"), str)]
    by_name = {str(s.get("name", "")): str(s["url"]) for s in sources}
    default_ctx = IndexContext(str(sources[0]["url"])) if sources else IndexContext()
    for table in ("packages", "dev-packages"):
        packages = doc.get(table, {})
        if not isinstance(packages, dict):
            continue
        for name, spec in packages.items():
            line = lines.key_line([table], name)
            _add(sf, table, line, name, spec, by_name, default_ctx)
    return sf


def _add(
    sf: SourceFile, table: str, line: int, name: str, spec: Any, by_name: dict[str, str], default_ctx: IndexContext
) -> None:
    raw = f'{name} = "{spec}"' if isinstance(spec, str) else f"{name} = {spec!r}"
    ctx = default_ctx
    if isinstance(spec, str):
        version, extras, markers = spec, [], ""
    elif isinstance(spec, dict):
        if any(k in spec for k in ("git", "path", "file", "editable")):
            sf.skipped.append(Skipped(sf.path, line, raw, f"{name} from a git/path source: not checked"))
            return
        version = str(spec.get("version", "*"))
        extras = [str(e) for e in as_list(spec.get("extras"))]
        markers = str(spec.get("markers", ""))
        index = spec.get("index")
        if isinstance(index, str):
            if index not in by_name:
                raise UserError(f"{name}: no [[source]] named {index!r}", sf.path, line)
            ctx = IndexContext(by_name[index])
    else:
        return
    version = "" if version.strip() == "*" else version.strip()
    text = name + (f"[{','.join(extras)}]" if extras else "") + version + (f"; {markers}" if markers else "")
    try:
        req = parse_requirement(text)
    except InvalidRequirement as exc:
        raise UserError(f"not a valid requirement {raw}: {first_line(exc)}", sf.path, line) from exc
    sf.requirements.append(LocatedRequirement(sf.path, line, raw, "pip", requirement=req, index=ctx, group=table))
