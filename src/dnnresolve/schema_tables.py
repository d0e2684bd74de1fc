"""Each table of the matrix file (see docs/matrix-schema.md): its fields validated and the row built into its model
object (``BUILDERS``, by table); errors name the file, the line, the row and the field (``schema.Row``)."""

from __future__ import annotations

from collections.abc import Callable

from .compat import CudnnRule
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
from .schema import URL, Row
from .versions import (
    ComputeCapability,
    CudaVersion,
    CudnnVersion,
    DriverVersion,
    PythonVersion,
    VersionError,
)

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
        "sm_unconfirmed",
        "ptx_unconfirmed",
        "cudnn",
    }
)
_LIST_KEYS = (
    *("packages", "channels", "python", "os", "cudnn"),
    *("sm", "sm_exact", "ptx", "sm_unconfirmed", "ptx_unconfirmed"),
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from packaging.specifiers import SpecifierSet

    from .cuda_names import CudaName
    from .images import CudaImage, OsPython

    T = TypeVar("T")


def _recipe_versions(row: Row, i: int, item: dict[str, Any], key: str, parse: Callable[[str], T]) -> list[T]:
    out = []
    for text in item.get(key, ()):
        try:
            out.append(parse(text))
        except VersionError as exc:
            row.fail("install", f"entry {i}: {key}: {exc}")
    return out


def _unconfirmed(
    row: Row, i: int, item: dict[str, Any], kind: str, certain: list[ComputeCapability]
) -> tuple[ComputeCapability, ...]:
    """``sm_unconfirmed`` / ``ptx_unconfirmed``: code only some build-script states carry; what every state
    carries belongs in ``sm`` / ``ptx``, so an architecture in both is a contradiction."""
    key = f"{kind}_unconfirmed"
    out = _recipe_versions(row, i, item, key, ComputeCapability.parse)
    both = [str(c) for c in out if c in certain]
    if both:
        row.fail("install", f"entry {i}: {key} repeats {', '.join(both)}, which {kind} states every build carries")
    return tuple(out)


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
            if item.get(key) and not URL.fullmatch(item[key]):
                row.fail("install", f"entry {i}: {key} is not a URL: {item[key]!r}")
        if kind == "pip" and not item.get("requirement"):
            row.fail("install", f"entry {i}: a pip recipe needs 'requirement'")
        if kind == "conda" and not item.get("packages"):
            row.fail("install", f"entry {i}: a conda recipe needs 'packages'")
        companions = tuple((k, item[k]) for k in COMPANIONS if item.get(k))
        sm = _recipe_versions(row, i, item, "sm", ComputeCapability.parse)
        ptx = _recipe_versions(row, i, item, "ptx", ComputeCapability.parse)
        exact = _recipe_versions(row, i, item, "sm_exact", ComputeCapability.parse)
        sm_unconfirmed = _unconfirmed(row, i, item, "sm", sm)
        ptx_unconfirmed = _unconfirmed(row, i, item, "ptx", ptx)
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
                sm_unconfirmed=sm_unconfirmed,
                ptx_unconfirmed=ptx_unconfirmed,
            )
        )
    return tuple(out)


def _pinned_by(row: Row, covers: SpecifierSet) -> tuple[tuple[str, str], ...]:
    """``pinned_by = { "0.1.72" = "0.2.22", "0.1.74" = "" }``: per release the row covers, the release of the
    package whose extras its recipes name (jax) that pins it, "" where none does."""
    from packaging.version import InvalidVersion, Version

    raw = row.data.get("pinned_by")
    if raw is None:
        return ()
    if not isinstance(raw, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in raw.items()):
        row.fail("pinned_by", "expected an inline table of version strings")
    for release, by in raw.items():
        try:
            ok = covers.contains(Version(release), prereleases=True) and (not by or bool(Version(by)))
        except InvalidVersion:
            ok = False
        if not ok:
            row.fail("pinned_by", f'{release!r} = {by!r}: a release the row covers, and a version or ""')
    return tuple(raw.items())


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
            "pinned_by",
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
        pinned_by=_pinned_by(row, covers),
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
            "compute_capability_min_by_cuda",
            "compute_capability_source",
            "compute_capability_note",
            "compute_capability_unstated",
            "compute_capability_basis",
            "os",
            "archives",
            "source",
            "sources",
            "note",
        }
    )
    version = row.parsed("version", CudnnVersion.parse, required=True)
    cuda = row.parsed_list("cuda", CudaVersion.parse, required=True)
    assert version is not None
    archives = []
    raw = row.data.get("archives") or []
    if not isinstance(raw, list):
        row.fail("archives", "expected a list of inline tables")
    for i, a in enumerate(raw, 1):
        if not isinstance(a, dict) or not all(isinstance(a.get(k), str) for k in ("cuda", "os", "file")):
            row.fail("archives", f"entry {i}: needs string keys cuda, os, file")
        archives.append(CudnnArchive(a["cuda"], a["os"], a["file"]))
    floors = _cudnn_floors(row, cuda)
    return CudnnRelease(
        version=version,
        cuda=cuda,
        driver_min_linux=row.parsed("driver_min_linux", DriverVersion.parse),
        compute_capability_min=row.parsed("compute_capability_min", ComputeCapability.parse),
        os=row.texts("os"),
        archives=tuple(archives),
        source=row.source(),
        note=row.text("note"),
        row=row.index,
        line=row.line,
        compute_capability_min_by_cuda=floors,
        compute_capability_source=row.text("compute_capability_source", required=bool(floors)),
        compute_capability_note=row.text("compute_capability_note"),
        compute_capability_unstated=row.text("compute_capability_unstated"),
        compute_capability_basis=row.text("compute_capability_basis") or "support_matrix",
    )


def _cudnn_floors(row: Row, cuda: tuple[CudaVersion, ...]) -> tuple[tuple[int, ComputeCapability], ...]:
    """``compute_capability_min_by_cuda = { "11" = "3.5" }``: each key a CUDA major the row is built for."""
    key = "compute_capability_min_by_cuda"
    raw = row.data.get(key)
    if raw is None:
        return ()
    if not isinstance(raw, dict) or not raw:
        row.fail(key, 'expected a table of CUDA major -> compute capability: { "11" = "3.5" }')
    majors = {c.major for c in cuda}
    out = []
    for major, cc in raw.items():
        if not str(major).isdigit() or int(major) not in majors:
            row.fail(key, f"{major!r} is not a CUDA major of this row ({', '.join(str(m) for m in sorted(majors))})")
        if not isinstance(cc, str):
            row.fail(key, f"{major}: expected a string")
        try:
            out.append((int(major), ComputeCapability.parse(cc)))
        except ValueError as exc:
            row.fail(key, f"{major}: {exc}")
    if row.data.get("compute_capability_unstated"):
        row.fail("compute_capability_unstated", "a row that states its floors cannot also say why it states none")
    basis = row.data.get("compute_capability_basis", "support_matrix")
    if basis not in CUDNN_FLOOR_BASES:
        row.fail("compute_capability_basis", f"expected one of {', '.join(CUDNN_FLOOR_BASES)}")
    source = str(row.data.get("compute_capability_source", ""))
    if not URL.fullmatch(source):
        row.fail("compute_capability_source", "needs the URL of the support matrix that lists these floors")
    if basis == "library" and not source.startswith(("https://pypi.org/", "https://files.pythonhosted.org/")):
        row.fail("compute_capability_source", "a floor read from the library needs the URL of the wheel read")
    return tuple(out)


# where a [[cudnn]] row's floors come from: NVIDIA's support matrix, or the code NVIDIA's library carries
CUDNN_FLOOR_BASES = ("support_matrix", "library")


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


# the image and CUDA-name tables are built by their own modules, imported when a row of theirs is first built (a
# framework or GPU lookup, every first question's, builds none)
def _cuda_image(row: Row) -> CudaImage:
    from .images import build_cuda_image

    return build_cuda_image(row)


def _os_python(row: Row) -> OsPython:
    from .images import build_os_python

    return build_os_python(row)


def _cuda_name(row: Row) -> CudaName:
    from .cuda_names import build

    return build(row)


BUILDERS: dict[str, Callable[[Row], Any]] = {
    "framework": _framework,
    "wheel_pins": _wheel_pins,
    "cuda": _cuda,
    "cuda_family": _cuda_family,
    "cudnn": _cudnn,
    "gpu": _gpu,
    "cuda_image": _cuda_image,
    "os_python": _os_python,
    "cuda_name": _cuda_name,
}
