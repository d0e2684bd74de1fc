"""The error catalog (data/error_catalog.toml): loaded once, validated, its regexes compiled (the packaged
catalog's on first use).

Errors in the file name the file, the line of the row's header and the field, like the matrix loader.
"""

from __future__ import annotations

import contextlib
import os
import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from functools import cached_property

from ..compat import CudnnRule
from ..lazyre import lazy_compile
from ..records import record
from .datafile import CATALOG_MAX_BYTES, KINDS, CatalogError, _read, _read_bytes, _toml, compile_pattern, cut_pattern
from .vocabulary import TEXT_RULE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

__all__ = ["CATALOG_MAX_BYTES", "KINDS", "Catalog", "CatalogEntry", "CatalogError", "load_catalog", "parse_catalog"]

CHANNELS = frozenset({"module", "path", "pip", "conda", "driver", "manual"})
_PLACEHOLDER = lazy_compile(r"\{(\w+)\}")


@record(frozen=True)
class FixTemplate:
    channel: str
    text: str

    @property
    def placeholders(self) -> tuple[str, ...]:
        return tuple(_PLACEHOLDER.findall(self.text))


@record(frozen=True)
class CatalogEntry:
    id: str
    kind: str
    framework: str  # "" when many frameworks print it
    anchors: tuple[str, ...]  # lower case
    pattern_text: str  # the regex as written; compiled on first use (``pattern``)
    decoder: str
    summary: str
    explanation: str
    source: str
    cudnn_rule: CudnnRule | None = None
    rule: str = ""  # the rule broken, as a template
    consequence_of: tuple[str, ...] = ()
    fixes: tuple[FixTemplate, ...] = ()
    codes: tuple[str, ...] = ()  # status codes of the vocabulary this entry advises on (upper case)
    cuts: bool = True  # whether a message cut short still reads (false: the words before the cut say nothing)
    line: int = 0
    path: str = ""

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """The compiled regex. A command compiles only the entries whose anchors its text holds; a catalog
        other than the packaged one (which the test suite compiles whole) is compiled when loaded. The entry that
        reads the runtime's texts matches with the vocabulary's ``TextMatcher`` (its regexes compile per text)."""
        if self.pattern_text == TEXT_RULE:
            from .vocabulary import TextMatcher, load_vocabulary

            matcher: re.Pattern[str] = TextMatcher(load_vocabulary())  # type: ignore[assignment]  # a Pattern's duck
            return matcher
        return _regex(self.pattern_text, f"[[error]] ({self.id})", self.path, self.line or None, compile_pattern)

    @cached_property
    def cut(self) -> re.Pattern[str] | None:
        """The regex read as a message cut short (``datafile.cut_pattern``: a title, a truncated line), compiled on
        first use, which only a line the whole pattern does not read needs; None for an entry with no sentence."""
        if not self.cuts or self.pattern_text in (TEXT_RULE, "(?!)"):
            return None
        try:
            return compile_pattern(cut_pattern(self.pattern_text))
        except (ValueError, re.error):
            return None


@record(frozen=True)
class Marker:
    contains: str  # lower case
    framework: str
    replaces: str = ""  # also applies to entries that name this framework


@record(frozen=True)
class LibraryRule:
    pattern_text: str  # compiled on first use (``pattern``), like an entry's
    component: str
    what: str
    note: str = ""
    where: str = ""  # its row, for the error of a bad regex
    line: int = 0
    path: str = ""

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        # any case: Windows names files case-blind, and a shouted log line keeps the name's letters
        return _regex(self.pattern_text, self.where, self.path, self.line or None, _ignore_case)


@record
class Catalog:
    path: str
    entries: list[CatalogEntry]
    markers: list[Marker]
    libraries: list[LibraryRule]
    framework_names: dict[str, str]
    packages: dict[str, str]
    # the prefilter: lower case, none holding another; worked out from the entries unless given (a compiled
    # catalog holds them)
    anchors: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.anchors:
            self.anchors = _minimal(a for e in self.entries for a in e.anchors)

    def entry(self, entry_id: str) -> CatalogEntry:
        for e in self.entries:
            if e.id == entry_id:
                return e
        raise KeyError(entry_id)

    def advice_for(self, code: str) -> str:
        """The id of the entry that advises on a status code (its ``codes`` list it), or ""."""
        up = code.upper()
        return next((e.id for e in self.entries if up in e.codes), "")

    def framework_name(self, framework: str | None) -> str:
        if not framework:
            return ""
        return self.framework_names.get(framework, framework)

    def library(self, name: str) -> tuple[LibraryRule, dict[str, str]] | None:
        for rule in self.libraries:
            m = rule.pattern.match(name)
            if m:
                return rule, {k: v for k, v in m.groupdict().items() if v is not None}
        return None


def _minimal(anchors: Iterable[str]) -> tuple[str, ...]:
    """The anchors none of the others is part of, sorted: a line holding a longer one holds the shorter."""
    every = sorted(set(anchors))
    # each anchor found in all of them joined (one str.find pass each, not a test of every pair: a start-up's
    # catalog has a hundred anchors); an anchor holds another found within its own span
    joined = "\n".join(every)
    starts = []
    at = 0
    for a in every:
        starts.append(at)
        at += len(a) + 1
    holds = set()
    for b in every:
        at = joined.find(b)
        while at != -1:
            i = bisect_right(starts, at) - 1
            if every[i] != b and at + len(b) <= starts[i] + len(every[i]):
                holds.add(i)
            at = joined.find(b, at + 1)
    return tuple(a for i, a in enumerate(every) if i not in holds)


def packaged_catalog_file() -> str:
    """The catalog shipped in the wheel (compiled: ``data/error_catalog.compiled``), or the source tree's TOML when
    running from a checkout. (A path as text: ``pathlib`` costs a start-up 0.2x a bare interpreter's.)"""
    here = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    shipped = os.path.join(here, "data", "error_catalog.compiled")
    if os.path.isfile(shipped):
        return shipped
    return os.path.join(os.path.dirname(os.path.dirname(here)), "data", "error_catalog.toml")


def packaged_catalog_path() -> Path:
    """``packaged_catalog_file()`` as a Path."""
    from pathlib import Path

    return Path(packaged_catalog_file())


_CACHE: dict[str, Catalog] = {}


def load_catalog(path: str | os.PathLike[str] | None = None) -> Catalog:
    p = os.fspath(path) if path is not None else packaged_catalog_file()
    key = os.path.normpath(p)  # (the same file however its path is spelled, as Path compared them)
    if key not in _CACHE:
        if p.endswith(".compiled"):  # (compiled.SUFFIX) what the wheel ships: the validated catalog itself
            _CACHE[key] = _load_shipped(p)
        elif key == os.path.normpath(packaged_catalog_file()):
            _CACHE[key] = _load_packaged(p)
        else:
            _CACHE[key] = parse_catalog(_read(p), p)
    return _CACHE[key]


def _load_shipped(p: str) -> Catalog:
    """A compiled catalog (``compile_catalog``): its entries as validated, its prefilter worked out."""
    from .. import compiled

    try:
        form = compiled.open_shipped(p, "catalog").load("catalog")
        return _from_form(form, p)
    except (OSError, ValueError, EOFError, TypeError, KeyError) as exc:
        raise CatalogError(f"cannot read the error catalog: {exc}", str(p)) from exc


def _load_packaged(p: str) -> Catalog:
    """The packaged catalog: from its compiled form when there is one for these bytes (see ``compiled``), else
    read, parsed and compiled. Its regexes compile on first use (the test suite compiles every one)."""
    from .. import compiled

    data = _read_bytes(p)
    key = compiled.source_key(data)
    found = compiled.load("catalog", p, key)
    doc = found.load("doc") if found is not None else None
    if isinstance(doc, dict):
        with contextlib.suppress(CatalogError):  # a compiled form this code cannot read: parse the file instead
            return catalog_from_document(doc, {}, str(p), compile_now=False)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CatalogError(f"cannot read the error catalog: {exc}", str(p)) from exc
    doc = _toml(text, str(p))
    catalog = catalog_from_document(doc, _header_lines(text), str(p), compile_now=False)
    compiled.store("catalog", key, {"doc": compiled.dumps(doc)}, {})
    return catalog


def compile_catalog(data: bytes, path: str) -> tuple[dict[str, bytes], dict[str, Any]]:
    """The compiled form of a catalog file's bytes (for the wheel's build): the catalog validated (every regex
    compiled), as plain data that ``_from_form`` builds back without validating again; CatalogError if invalid.
    The anchors of the rule that reads the runtime's texts are the vocabulary's now (the wheel ships both), so
    that a first question loads the vocabulary only when a line holds one of them."""
    from ..compiled import dumps

    text = data.decode("utf-8")
    catalog = parse_catalog(text, path)
    return {"catalog": dumps(_form(catalog))}, {}


def _form(catalog: Catalog) -> dict[str, Any]:
    """``catalog`` as plain data (``marshal``): each record's init fields in order, but the path, which is where
    it is loaded from."""

    def plain(value: Any) -> Any:
        if isinstance(value, CudnnRule):
            return value.value
        if isinstance(value, tuple) and value and isinstance(value[0], FixTemplate):
            return tuple((f.channel, f.text) for f in value)
        return value

    return {
        "entries": [tuple(plain(getattr(e, n)) for n in _fields(CatalogEntry)) for e in catalog.entries],
        "markers": [tuple(getattr(m, n) for n in _fields(Marker)) for m in catalog.markers],
        "libraries": [tuple(getattr(r, n) for n in _fields(LibraryRule)) for r in catalog.libraries],
        "framework_names": catalog.framework_names,
        "packages": catalog.packages,
        "anchors": catalog.anchors,
    }


def _from_form(form: dict[str, Any], path: str) -> Catalog:
    """The catalog ``_form`` wrote, its records built by position (no row is validated again)."""
    fields = _fields(CatalogEntry)
    rule_at, fixes_at = fields.index("cudnn_rule"), fields.index("fixes")
    entries = []
    for values in form["entries"]:
        row = list(values)
        if row[rule_at] is not None:
            row[rule_at] = CudnnRule(row[rule_at])
        row[fixes_at] = tuple(FixTemplate(channel, text) for channel, text in row[fixes_at])
        row.append(path)
        entries.append(CatalogEntry(*row))
    return Catalog(
        path,
        entries,
        [Marker(*values) for values in form["markers"]],
        [LibraryRule(*(*values, path)) for values in form["libraries"]],
        dict(form["framework_names"]),
        dict(form["packages"]),
        tuple(form["anchors"]),
    )


def _fields(cls: type) -> list[str]:
    """A record's init fields in order, but ``path`` (the last, where it has one)."""
    names = [n for n, f in cls.__record_fields__.items() if f.init]  # type: ignore[attr-defined]
    assert "path" not in names[:-1], cls
    return names[:-1] if names[-1] == "path" else names


def parse_catalog(text: str, path: str = "error_catalog.toml", compile_now: bool = True) -> Catalog:
    """The catalog in ``text``, validated; with ``compile_now`` every entry's regex is compiled (and a bad
    one reported) here, else on first use."""
    return catalog_from_document(_toml(text, path), _header_lines(text), path, compile_now)


def catalog_from_document(
    doc: dict[str, Any], headers: dict[str, list[int]], path: str, compile_now: bool = True
) -> Catalog:
    """The catalog in a parsed document, validated; ``headers`` gives each table's row lines for errors."""
    from .decoders import DECODERS  # the functions a row may name (imported here: the catalog loads lazily)

    names, packages = doc.get("frameworks", {}), doc.get("packages", {})
    for table, value in (("frameworks", names), ("packages", packages)):
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise CatalogError(f"[{table}] must map framework names to strings", path)
    entries: list[CatalogEntry] = []
    seen: set[str] = set()
    for i, row in enumerate(_rows(doc, "error", path)):
        line = _nth(headers.get("error", []), i)
        where = f"[[error]] row {i + 1}"
        entry = _entry(row, where, path, line, set(DECODERS))
        if entry.id in seen:
            raise CatalogError(f"{where}: duplicate id {entry.id!r}", path, line)
        seen.add(entry.id)
        if compile_now and entry.pattern_text != TEXT_RULE:
            at = f"{where} ({entry.id})"
            entry.__dict__["pattern"] = _regex(entry.pattern_text, at, path, line, compile_=compile_pattern)
        entries.append(entry)
    markers = []
    for i, row in enumerate(_rows(doc, "marker", path)):
        where, line = f"[[marker]] row {i + 1}", _nth(headers.get("marker", []), i)
        markers.append(
            Marker(
                _str(row, "contains", where, path, line).lower(),
                _str(row, "framework", where, path, line),
                str(row.get("replaces", "")),
            )
        )
    libraries = []
    for i, row in enumerate(_rows(doc, "library", path)):
        where, line = f"[[library]] row {i + 1}", _nth(headers.get("library", []), i)
        rule = LibraryRule(
            _str(row, "pattern", where, path, line),
            _str(row, "component", where, path, line),
            _str(row, "what", where, path, line),
            str(row.get("note", "")),
            where,
            line or 0,
            path,
        )
        if compile_now:
            _ = rule.pattern  # a bad regex is reported here
        libraries.append(rule)
    return Catalog(path, entries, markers, libraries, dict(names), dict(packages))


def _entry(row: dict[str, Any], where: str, path: str, line: int | None, decoders: set[str]) -> CatalogEntry:
    def s(key: str) -> str:
        return _str(row, key, where, path, line)

    entry_id = s("id")
    where = f"{where} ({entry_id})"
    kind = s("kind")
    if kind not in KINDS:
        raise CatalogError(f"{where}: kind {kind!r} is not one of {', '.join(KINDS)}", path, line)
    decoder = s("decoder")
    if decoder not in decoders:
        raise CatalogError(f"{where}: no decoder named {decoder!r}", path, line)
    # an entry that only advises on the vocabulary's codes (``codes``) needs no sentence of its own; one that reads
    # the CUDA runtime's texts (``texts``) takes its anchors and regex from the vocabulary
    advice_only = bool(row.get("codes")) and "anchors" not in row and "pattern" not in row
    texts_rule = row.get("texts") == "cudaGetErrorString"
    if texts_rule:
        from .vocabulary import load_vocabulary, text_rule

        anchors: Any = list(text_rule(load_vocabulary()))
    else:
        anchors = [] if advice_only else row.get("anchors")
    if (
        not isinstance(anchors, list)
        or not (anchors or advice_only)
        or not all(isinstance(a, str) and a for a in anchors)
    ):
        raise CatalogError(f"{where}: anchors must be a non-empty list of strings", path, line)
    source = s("source")
    if not source.startswith(("https://", "http://")):
        raise CatalogError(f"{where}: source must be a URL", path, line)
    rule = None
    if "cudnn_rule" in row:
        try:
            rule = CudnnRule(s("cudnn_rule"))
        except ValueError as exc:
            raise CatalogError(f"{where}: unknown cudnn_rule {row['cudnn_rule']!r}", path, line) from exc
    consequence_of = row.get("consequence_of", [])
    if not isinstance(consequence_of, list) or any(k not in KINDS for k in consequence_of):
        raise CatalogError(f"{where}: consequence_of must list kinds", path, line)
    codes = row.get("codes", [])
    if not isinstance(codes, list) or not all(isinstance(c, str) and c for c in codes):
        raise CatalogError(f"{where}: codes must be a list of status code names", path, line)
    cuts = row.get("cuts", True)
    if not isinstance(cuts, bool):
        raise CatalogError(f"{where}: cuts must be true or false", path, line)
    fixes = []
    for fix in row.get("fixes", []):
        if not isinstance(fix, dict) or fix.get("channel") not in CHANNELS or not isinstance(fix.get("text"), str):
            raise CatalogError(f"{where}: each fix needs channel (one of {sorted(CHANNELS)}) and text", path, line)
        fixes.append(FixTemplate(fix["channel"], fix["text"]))
    return CatalogEntry(
        id=entry_id,
        kind=kind,
        framework=str(row.get("framework", "")),
        anchors=tuple(a.lower() for a in anchors),
        pattern_text="(?!)" if advice_only else TEXT_RULE if texts_rule else s("pattern"),
        decoder=decoder,
        summary=s("summary"),
        explanation=s("explanation"),
        source=source,
        cudnn_rule=rule,
        rule=str(row.get("rule", "")),
        consequence_of=tuple(consequence_of),
        fixes=tuple(fixes),
        codes=tuple(c.upper() for c in codes),
        cuts=cuts,
        line=line or 0,
        path=path,
    )


def _rows(doc: dict[str, Any], table: str, path: str) -> list[dict[str, Any]]:
    rows = doc.get(table, [])
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise CatalogError(f"[[{table}]] must be an array of tables", path)
    return rows


def _str(row: dict[str, Any], key: str, where: str, path: str, line: int | None) -> str:
    value = row.get(key)
    if not isinstance(value, str) or not value.strip():
        raise CatalogError(f"{where}: field {key!r} must be a non-empty string", path, line)
    return value


def _regex(text: str, where: str, path: str, line: int | None, compile_: Any) -> re.Pattern[str]:
    try:
        pattern: re.Pattern[str] = compile_(text)
    except re.error as exc:
        raise CatalogError(f"{where}: bad regex: {exc}", path, line) from exc
    return pattern


def _ignore_case(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def _header_lines(text: str) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        m = re.match(r"\s*\[\[(\w+)\]\]", raw)
        if m:
            found.setdefault(m.group(1), []).append(n)
    return found


def _nth(values: Sequence[int], i: int) -> int | None:
    return values[i] if i < len(values) else None
