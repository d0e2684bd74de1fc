"""pyproject.toml: PEP 621 dependencies and optional-dependencies, PEP 735 dependency-groups,
[tool.uv] indexes and sources, [tool.poetry] (see ``poetry``), and [tool.dnnresolve] target defaults.

uv searches every index in ``[[tool.uv.index]]`` that is not ``explicit`` before PyPI, and a package
named in ``[tool.uv.sources]`` with ``index = "..."`` comes only from that index: that is how uv users
pin torch to a CUDA index.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import UserError
from ..pkgname import canonicalize_name
from . import poetry
from .interface import IndexContext, InvalidRequirement, LocatedRequirement, Skipped, SourceFile, parse_requirement
from .text import first_line
from .tomllines import TomlLines, as_list, load_toml


def read(path: Path, text: str, root: Path) -> SourceFile:
    file = str(path)
    doc = load_toml(text, file)
    lines = TomlLines(text)
    sf = SourceFile(file, "pyproject")
    uv = _table(doc, "tool", "uv")
    default_ctx, source_ctx = _uv_contexts(uv, file, lines, sf)
    project = _table(doc, "project")
    deps = project.get("dependencies", [])
    _read_list(sf, lines, deps, ["project"], "dependencies", "dependencies", default_ctx, source_ctx)
    for group, items in _table(project, "optional-dependencies").items():
        tables = ["project.optional-dependencies", "project"]
        _read_list(sf, lines, items, tables, group, f"optional-dependencies.{group}", default_ctx, source_ctx)
    for group, items in _table(doc, "dependency-groups").items():
        _read_list(
            sf, lines, items, ["dependency-groups"], group, f"dependency-groups.{group}", default_ctx, source_ctx
        )
    poetry.read_poetry(doc, lines, sf)
    target = _table(doc, "tool", "dnnresolve")
    sf.target = {k: str(v) for k, v in target.items() if isinstance(v, (str, int, float))}
    span = lines.table("tool.dnnresolve")
    sf.target_line = span[0] + 1 if span else 0
    return sf


def _table(doc: dict[str, Any], *keys: str) -> dict[str, Any]:
    cur: Any = doc
    for k in keys:
        cur = cur.get(k, {}) if isinstance(cur, dict) else {}
    return cur if isinstance(cur, dict) else {}


def _uv_contexts(
    uv: dict[str, Any], file: str, lines: TomlLines, sf: SourceFile
) -> tuple[IndexContext, dict[str, IndexContext]]:
    indexes = [i for i in as_list(uv.get("index")) if isinstance(i, dict) and isinstance(i.get("url"), str)]
    by_name = {str(i.get("name", "")): str(i["url"]) for i in indexes}
    default = next((str(i["url"]) for i in indexes if i.get("default")), str(uv.get("index-url", "")))
    extra = tuple(str(i["url"]) for i in indexes if not i.get("explicit") and not i.get("default"))
    extra += tuple(str(u) for u in as_list(uv.get("extra-index-url")) if isinstance(u, str))
    find_links = tuple(str(u) for u in as_list(uv.get("find-links")) if isinstance(u, str))
    default_ctx = IndexContext(default, extra, find_links)
    per_package: dict[str, IndexContext] = {}
    for name, spec in _table(uv, "sources").items():
        entries = spec if isinstance(spec, list) else [spec]
        urls = []
        for e in entries:
            if not isinstance(e, dict):
                continue
            index = e.get("index")
            if isinstance(index, str):
                if index not in by_name:
                    line = lines.key_line(["tool.uv.sources"], name)
                    raise UserError(f"[tool.uv.sources] {name}: no [[tool.uv.index]] named {index!r}", file, line)
                urls.append(by_name[index])
            elif any(k in e for k in ("git", "url", "path", "workspace")):
                line = lines.key_line(["tool.uv.sources"], name)
                sf.skipped.append(
                    Skipped(file, line, f"{name} = {e}", f"{name} from a git/url/path source: not checked")
                )
                per_package[canonicalize_name(name)] = IndexContext(no_index=True)
        if urls:
            per_package[canonicalize_name(name)] = IndexContext(urls[0], tuple(urls[1:]), find_links)
    return default_ctx, per_package


def _read_list(
    sf: SourceFile,
    lines: TomlLines,
    items: Any,
    tables: list[str],
    key: str,
    group: str,
    default_ctx: IndexContext,
    source_ctx: dict[str, IndexContext],
) -> None:
    if not isinstance(items, list):
        return
    after = max(lines.key_line(tables, key) - 1, 0)
    for item in items:
        if not isinstance(item, str):
            continue  # {include-group = "..."} in dependency-groups
        line = lines.string_line(tables, item, after) or after + 1
        after = line
        try:
            req = parse_requirement(item)
        except InvalidRequirement as exc:
            raise UserError(f"not a valid requirement {item!r}: {first_line(exc)}", sf.path, line) from exc
        if req.url:
            sf.skipped.append(Skipped(sf.path, line, item, f"{req.name} from a URL: not checked"))
            continue
        ctx = source_ctx.get(canonicalize_name(req.name), default_ctx)
        if ctx.no_index and not ctx.index_url:
            continue  # a git/path source, already listed as skipped
        sf.requirements.append(LocatedRequirement(sf.path, line, item, "pip", requirement=req, index=ctx, group=group))
