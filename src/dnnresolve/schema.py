"""The matrix file's schema: each [[table]] row validated and built into a model object.

Errors name the file, the line of the row's header, the row and the field.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Iterator

from .compat import CudnnRule
from .cuda_names import build as _cuda_name
from .errors import MatrixError
from .images import build_cuda_image, build_os_python
from .model import (
    COMPANIONS,
    CudaFamily,
    CudaRelease,
    CudnnArchive,
    CudnnRelease,
    FrameworkRelease,
    GpuModel,
    InstallRecipe,
    WheelPins,
)
from .pkgname import canonicalize_name
from .versions import (
    ComputeCapability,
    CudaVersion,
    CudnnVersion,
    DriverVersion,
    PythonVersion,
    VersionError,
)

TABLES = ("framework", "wheel_pins", "cuda", "cuda_family", "cudnn", "gpu", "cuda_image", "os_python", "cuda_name")
OS_NAMES = frozenset({"linux", "windows", "macos"})
INSTALL_KINDS = frozenset({"pip", "conda", "manual"})
INSTALL_KEYS = frozenset(
    {
        "kind",
        "cuda",
        "requirement",
        "index_url",
        "extra_index_url",
        "find_links",
        "packages",
        "channels",
        "python",
        "url",
        "note",
        "torchvision",
        "torchaudio",
        "os",
        "sm",
        "sm_exact",
        "ptx",
        "cudnn",
    }
)
_LIST_KEYS = ("packages", "channels", "python", "os", "sm", "sm_exact", "ptx", "cudnn")
_URL = re.compile(r"https?://[^\s\"'<>]+")

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
        if not _URL.fullmatch(src):
            self.fail("source", f"not a URL: {src!r}")
        for extra in self.texts("sources"):
            if not _URL.fullmatch(extra):
                self.fail("sources", f"not a URL: {extra!r}")
        return src


def _header_lines(text: str) -> dict[str, list[int]]:
    lines: dict[str, list[int]] = {t: [] for t in TABLES}
    for number, line in enumerate(text.splitlines(), 1):
        m = re.match(r"\s*\[\[\s*([A-Za-z_]+)\s*\]\]", line)
        if m and m.group(1) in lines:
            lines[m.group(1)].append(number)
    return lines


def _recipe_versions(row: Row, i: int, item: dict[str, Any], key: str, parse: Callable[[str], T]) -> list[T]:
    out = []
    for text in item.get(key, ()):
        try:
            out.append(parse(text))
        except VersionError as exc:
            row.fail("install", f"entry {i}: {key}: {exc}")
    return out


def _install(row: Row, raw: Any) -> tuple[InstallRecipe, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        row.fail("install", "expected a list of inline tables")
    out = []
    for i, item in enumerate(raw, 1):
        if not isinstance(item, dict):
            row.fail("install", f"entry {i}: expected an inline table")
        unknown = sorted(set(item) - INSTALL_KEYS)
        if unknown:
            row.fail("install", f"entry {i}: unknown key {unknown[0]!r}")
        kind = item.get("kind")
        if kind not in INSTALL_KINDS:
            row.fail("install", f"entry {i}: kind must be one of pip, conda, manual, got {kind!r}")
        for key, value in item.items():
            ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
            if key in _LIST_KEYS and not ok:
                row.fail("install", f"entry {i}: {key!r} must be a list of strings")
            if key not in _LIST_KEYS and not isinstance(value, str):
                row.fail("install", f"entry {i}: {key!r} must be a string")
        for key in ("index_url", "extra_index_url", "find_links", "url"):
            if item.get(key) and not _URL.fullmatch(item[key]):
                row.fail("install", f"entry {i}: {key} is not a URL: {item[key]!r}")
        if kind == "pip" and not item.get("requirement"):
            row.fail("install", f"entry {i}: a pip recipe needs 'requirement'")
        if kind == "conda" and not item.get("packages"):
            row.fail("install", f"entry {i}: a conda recipe needs 'packages'")
        companions = tuple((k, item[k]) for k in COMPANIONS if item.get(k))
        sm = _recipe_versions(row, i, item, "sm", ComputeCapability.parse)
        ptx = _recipe_versions(row, i, item, "ptx", ComputeCapability.parse)
        exact = _recipe_versions(row, i, item, "sm_exact", ComputeCapability.parse)
        cudnn = _recipe_versions(row, i, item, "cudnn", CudnnVersion.parse)
        out.append(
            InstallRecipe(
                kind=kind,
                cuda=item.get("cuda", ""),
                requirement=item.get("requirement", ""),
                index_url=item.get("index_url", ""),
                extra_index_url=item.get("extra_index_url", ""),
                find_links=item.get("find_links", ""),
                packages=tuple(item.get("packages", ())),
                channels=tuple(item.get("channels", ())),
                python=tuple(item.get("python", ())),
                url=item.get("url", ""),
                note=item.get("note", ""),
                companions=companions,
                sm=tuple(sm),
                ptx=tuple(ptx),
                sm_exact=tuple(exact),
                cudnn=tuple(cudnn),
            )
        )
    return tuple(out)


def _framework(row: Row) -> FrameworkRelease:
    row.check_keys(
        {
            "package",
            "version",
            "covers",
            "aliases",
            "os",
            "python",
            "cuda",
            "cuda_default",
            "cudnn",
            "cudnn_rule",
            "cudnn_optional",
            "compute_capability_min",
            "sm",
            "sm_exact",
            "ptx",
            "compiler",
            "build_tool",
            "on_pypi",
            "wheels_any_python",
            "system_cuda",
            "builds_each_release",
            "install",
            "source",
            "sources",
            "note",
        }
    )
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    package = canonicalize_name(row.text("package", required=True))
    version = row.parsed("version", Version, required=True)
    assert version is not None
    covers = row.parsed("covers", SpecifierSet) or SpecifierSet(f"=={version}")
    oses = row.texts("os", required=True)
    for o in oses:
        if o not in OS_NAMES:
            row.fail("os", f"unknown operating system {o!r} (linux, windows, macos)")
    rule_text = row.text("cudnn_rule")
    rule = None
    if rule_text:
        try:
            rule = CudnnRule(rule_text)
        except ValueError:
            row.fail("cudnn_rule", f"unknown rule {rule_text!r} ({', '.join(r.value for r in CudnnRule)})")
    release = FrameworkRelease(
        package=package,
        version=version,
        covers=covers,
        os=oses,
        python=row.parsed_list("python", PythonVersion.parse, required=True),
        cuda=row.parsed_list("cuda", CudaVersion.parse),
        cuda_default=row.parsed("cuda_default", CudaVersion.parse),
        cudnn=row.parsed_list("cudnn", CudnnVersion.parse),
        cudnn_rule=rule,
        cudnn_optional=row.flag("cudnn_optional", False),
        compute_capability_min=row.parsed("compute_capability_min", ComputeCapability.parse),
        sm=row.parsed_list("sm", ComputeCapability.parse),
        ptx=row.parsed_list("ptx", ComputeCapability.parse),
        sm_exact=row.parsed_list("sm_exact", ComputeCapability.parse),
        aliases=tuple(canonicalize_name(a) for a in row.texts("aliases")),
        compiler=row.text("compiler"),
        build_tool=row.text("build_tool"),
        on_pypi=row.flag("on_pypi", True),
        wheels_any_python=row.flag("wheels_any_python", False),
        system_cuda=row.flag("system_cuda", False),
        builds_each_release=row.flag("builds_each_release", False),
        install=_install(row, row.data.get("install")),
        source=row.source(),
        sources=row.texts("sources"),
        note=row.text("note"),
        row=row.index,
        line=row.line,
    )
    listed = {c.series for c in release.cudnn}
    for recipe in release.install:
        for c in recipe.cudnn:
            if c.series not in listed:
                row.fail("install", f"cuDNN {c} of the CUDA {recipe.cuda or '?'} recipe is not in the row's cudnn list")
    return release


def _wheel_pins(row: Row) -> WheelPins:
    from packaging.version import Version

    row.check_keys({"package", "version", "extra", "platform", "python", "requires", "source", "sources", "note"})
    version = row.parsed("version", Version, required=True)
    assert version is not None
    requires = row.texts("requires", required=True)
    if not row.trusted:
        from .specs import InvalidRequirement, parse_requirement
    for r in () if row.trusted else requires:
        try:
            parse_requirement(r)
        except InvalidRequirement as exc:
            row.fail("requires", f"{r!r}: {exc}")
    return WheelPins(
        package=canonicalize_name(row.text("package", required=True)),
        version=version,
        extra=row.text("extra"),
        platform=row.text("platform", required=True),
        requires=requires,
        python=row.text("python"),
        source=row.source(),
        row=row.index,
        line=row.line,
    )


def _cuda(row: Row) -> CudaRelease:
    row.check_keys(
        {
            "version",
            "label",
            "driver_min_linux",
            "driver_min_windows",
            "compute_capability_min",
            "compute_capability_max",
            "source",
            "sources",
            "note",
        }
    )
    version = row.parsed("version", CudaVersion.parse, required=True)
    linux = row.parsed("driver_min_linux", DriverVersion.parse, required=True)
    assert version is not None and linux is not None
    return CudaRelease(
        version=version,
        driver_min_linux=linux,
        driver_min_windows=row.parsed("driver_min_windows", DriverVersion.parse),
        label=row.text("label"),
        compute_capability_min=row.parsed("compute_capability_min", ComputeCapability.parse),
        compute_capability_max=row.parsed("compute_capability_max", ComputeCapability.parse),
        source=row.source(),
        note=row.text("note"),
        row=row.index,
        line=row.line,
    )


def _cuda_family(row: Row) -> CudaFamily:
    row.check_keys({"major", "driver_min_linux", "driver_min_windows", "source", "sources", "note"})
    major = row.data.get("major")
    if not isinstance(major, int) or isinstance(major, bool):
        row.fail("major", "expected an integer")
    assert isinstance(major, int)
    linux = row.parsed("driver_min_linux", DriverVersion.parse, required=True)
    assert linux is not None
    return CudaFamily(
        major=major,
        driver_min_linux=linux,
        driver_min_windows=row.parsed("driver_min_windows", DriverVersion.parse),
        source=row.source(),
        note=row.text("note"),
        row=row.index,
        line=row.line,
    )


def _cudnn(row: Row) -> CudnnRelease:
    row.check_keys(
        {
            "version",
            "cuda",
            "driver_min_linux",
            "compute_capability_min",
            "os",
            "archives",
            "source",
            "sources",
            "note",
        }
    )
    version = row.parsed("version", CudnnVersion.parse, required=True)
    assert version is not None
    archives = []
    raw = row.data.get("archives") or []
    if not isinstance(raw, list):
        row.fail("archives", "expected a list of inline tables")
    for i, a in enumerate(raw, 1):
        if not isinstance(a, dict) or not all(isinstance(a.get(k), str) for k in ("cuda", "os", "file")):
            row.fail("archives", f"entry {i}: needs string keys cuda, os, file")
        archives.append(CudnnArchive(a["cuda"], a["os"], a["file"]))
    return CudnnRelease(
        version=version,
        cuda=row.parsed_list("cuda", CudaVersion.parse, required=True),
        driver_min_linux=row.parsed("driver_min_linux", DriverVersion.parse),
        compute_capability_min=row.parsed("compute_capability_min", ComputeCapability.parse),
        os=row.texts("os"),
        archives=tuple(archives),
        source=row.source(),
        note=row.text("note"),
        row=row.index,
        line=row.line,
    )


def _gpu(row: Row) -> GpuModel:
    row.check_keys({"name", "aliases", "compute_capability", "architecture", "source", "sources", "note"})
    cc = row.parsed("compute_capability", ComputeCapability.parse, required=True)
    assert cc is not None
    return GpuModel(
        name=row.text("name", required=True),
        compute_capability=cc,
        architecture=row.text("architecture", required=True),
        aliases=row.texts("aliases"),
        source=row.source(),
        row=row.index,
        line=row.line,
    )


BUILDERS: dict[str, Callable[[Row], Any]] = {
    "framework": _framework,
    "wheel_pins": _wheel_pins,
    "cuda": _cuda,
    "cuda_family": _cuda_family,
    "cudnn": _cudnn,
    "gpu": _gpu,
    "cuda_image": build_cuda_image,
    "os_python": build_os_python,
    "cuda_name": _cuda_name,
}


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
