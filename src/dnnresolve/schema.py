"""The matrix file's format: its TOML read, its tables listed, each [[table]] row (``Row``: typed fields, errors
that name the file, the line of the row's header, the row and the field) and the schema version it states.
Each table's fields, validated and built into a model object: ``schema_tables``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Iterator

from .errors import MatrixError
from .lazyre import lazy_compile

TABLES = ("framework", "wheel_pins", "cuda", "cuda_family", "cudnn", "gpu", "cuda_image", "os_python", "cuda_name")
URL = lazy_compile(r"https?://[^\s\"'<>]+")

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    T = TypeVar("T")


def toml_loads(text: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on old Pythons only
        import tomli as tomllib  # type: ignore[no-redef,unused-ignore]
    try:
        doc: dict[str, Any] = tomllib.loads(text)
    except RecursionError:  # brackets nested thousands deep: say where, as the parser's own errors do
        from .sources.text import too_deep_line

        line = too_deep_line(text)
        raise ValueError("nested too deeply" + (f" (at line {line})" if line else "")) from None
    return doc


class Row:
    """One [[table]] of the file: typed access to its fields, errors that name row and field."""

    def __init__(self, path: str, table: str, index: int, line: int, data: Any, trusted: bool = False) -> None:
        self.path, self.table, self.index, self.line = path, table, index, line
        self.trusted = trusted  # already validated once (the matrix cache): skip the costly checks
        self.data: dict[str, Any] = data if isinstance(data, dict) else {}
        if not isinstance(data, dict):
            self.fail("", f"expected a table ([[{table}]]), got {type(data).__name__}")

    def label(self) -> str:
        name = self.data.get("package") or self.data.get("name") or self.data.get("version") or self.data.get("major")
        extra = f" {self.data['version']}" if "package" in self.data and "version" in self.data else ""
        return (
            f"[[{self.table}]] row {self.index} ({name}{extra})"
            if name is not None
            else f"[[{self.table}]] row {self.index}"
        )

    def fail(self, key: str, message: str) -> None:
        field = f", field '{key}'" if key else ""
        raise MatrixError(f"{self.label()}{field}: {message}", self.path, self.line)

    def check_keys(self, allowed: Iterable[str]) -> None:
        unknown = sorted(set(self.data) - set(allowed))
        if unknown:
            self.fail(unknown[0], "unknown field (typo?)")

    def text(self, key: str, required: bool = False) -> str:
        value = self.data.get(key)
        if value is None:
            if required:
                self.fail(key, "missing")
            return ""
        if not isinstance(value, str):
            self.fail(key, f"expected a string, got {type(value).__name__}")
        return str(value)

    def flag(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            self.fail(key, f"expected true or false, got {type(value).__name__}")
        return bool(value)

    def texts(self, key: str, required: bool = False) -> tuple[str, ...]:
        value = self.data.get(key)
        if value is None:
            if required:
                self.fail(key, "missing")
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.fail(key, "expected a list of strings")
        return tuple(value)

    def parsed(self, key: str, parse: Callable[[str], T], required: bool = False) -> T | None:
        text = self.text(key, required)
        if not text:
            return None
        try:
            return parse(text)
        except ValueError as exc:  # VersionError, packaging's InvalidVersion and InvalidSpecifier
            self.fail(key, str(exc))
        raise AssertionError  # unreachable: fail raises

    def parsed_list(self, key: str, parse: Callable[[str], T], required: bool = False) -> tuple[T, ...]:
        out: list[T] = []
        for text in self.texts(key, required):
            try:
                out.append(parse(text))
            except ValueError as exc:  # VersionError, packaging's InvalidVersion
                self.fail(key, str(exc))
        return tuple(out)

    def source(self) -> str:
        src = self.text("source", required=True)
        if not URL.fullmatch(src):
            self.fail("source", f"not a URL: {src!r}")
        for extra in self.texts("sources"):
            if not URL.fullmatch(extra):
                self.fail("sources", f"not a URL: {extra!r}")
        return src


def _header_lines(text: str) -> dict[str, list[int]]:
    lines: dict[str, list[int]] = {t: [] for t in TABLES}
    for number, line in enumerate(text.splitlines(), 1):
        m = re.match(r"\s*\[\[\s*([A-Za-z_]+)\s*\]\]", line)
        if m and m.group(1) in lines:
            lines[m.group(1)].append(number)
    return lines


# The matrix format this reader knows. A matrix states its own with a top-level ``schema = N`` (none: 1); one that
# adds tables or changes fields an older reader would misread raises it, and an older reader then refuses it with
# one line that says what to upgrade, rather than answering from half a matrix.
SCHEMA = 1
UPGRADE = "upgrade dnnresolve (python -m pip install -U dnnresolve)"


def iter_rows(doc: dict[str, Any], path: str, text: str) -> Iterator[tuple[str, Row]]:
    headers = _header_lines(text)
    _check_schema(doc, path, text)
    for key, value in doc.items():
        if key == "schema":
            continue
        if key not in TABLES:
            line = _first_line_of(key, text)
            raise MatrixError(
                f"unknown table or key {key!r} (this dnnresolve reads {', '.join(TABLES)}): a typo, or a matrix "
                f"made for a newer dnnresolve: {UPGRADE}",
                path,
                line,
            )
        if not isinstance(value, list):
            raise MatrixError(f"{key!r} must be an array of tables ([[{key}]])", path, None)
        lines = headers.get(key, [])
        for i, item in enumerate(value, 1):
            line = lines[i - 1] if i - 1 < len(lines) else 0
            yield key, Row(path, key, i, line, item)


def _check_schema(doc: dict[str, Any], path: str, text: str) -> None:
    from . import __version__

    schema = doc.get("schema", 1)
    if isinstance(schema, bool) or not isinstance(schema, int) or schema < 1:
        raise MatrixError(f"schema must be a whole number >= 1, got {schema!r}", path, _first_line_of("schema", text))
    if schema > SCHEMA:
        raise MatrixError(
            f"schema {schema}: a matrix made for a newer dnnresolve (dnnresolve {__version__} reads schema {SCHEMA}); "
            f"{UPGRADE}",
            path,
            _first_line_of("schema", text),
        )


def _first_line_of(key: str, text: str) -> int | None:
    pattern = re.compile(rf"\s*(\[{{1,2}}\s*{re.escape(key)}\s*\]{{1,2}}|\"?{re.escape(key)}\"?\s*=)")
    for number, line in enumerate(text.splitlines(), 1):
        if pattern.match(line):
            return number
    return None
