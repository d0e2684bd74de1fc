"""[[cuda_name]] rows: names users pin that carry CUDA without being a framework release (the nvidia-* wheels,
jax's CUDA plugins, conda's cudatoolkit / pytorch-cuda / cuda-version), and what a pinned version of one is.

A pin of such a name answers as a release of its own, made from its row: the CUDA its name or version says, no
system CUDA or cuDNN to load (it brings them, or pins them), any Python. Its driver is what that CUDA needs.
"""

from __future__ import annotations

from .compat import CudnnRule
from .model import FrameworkRelease, InstallRecipe
from .pkgname import canonicalize_name
from .records import record, replace
from .versions import CudaVersion, CudnnVersion, VersionError

TYPE_CHECKING = False
if TYPE_CHECKING:  # packaging loads when a release is looked up
    from typing import Any

    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    from .matrix import Matrix
    from .schema import Row

ECOSYSTEMS = frozenset({"pypi", "conda"})
VERSION_IS = frozenset({"cuda", "cudnn", "nccl", "library", "framework"})
KEYS = frozenset(
    {"names", "ecosystem", "provides", "version_is", "cuda", "os", "framework", "extra", "channels", "source",
     "sources", "note"}
)  # fmt: skip


@record(frozen=True)
class CudaName:
    """One row of the table: names with the same facts (the CUDA libraries of one CUDA major, say)."""

    names: tuple[str, ...]
    ecosystem: str  # "pypi" or "conda"
    provides: str  # what it brings: "cudnn", "nccl", "cuda-runtime", "cuda-libraries", "cuda-pin", "jax-plugin"
    version_is: str  # what its version number is: the CUDA release, the cuDNN, NCCL, its own, its framework's
    cuda: CudaVersion | None = None  # the CUDA major its name says (-cu12), when it does
    os: tuple[str, ...] = ()
    framework: str = ""  # version_is "framework": the package whose releases it belongs to
    extra: str = ""  # and the extra of that package that installs it
    channels: tuple[str, ...] = ()  # conda: where it comes from
    source: str = ""
    sources: tuple[str, ...] = ()
    note: str = ""
    row: int = 0
    line: int = 0


def build(row: Row) -> CudaName:
    row.check_keys(KEYS)
    names = tuple(canonicalize_name(n) for n in row.texts("names", required=True))
    if not names:
        row.fail("names", "needs at least one name")
    ecosystem = row.text("ecosystem", required=True)
    if ecosystem not in ECOSYSTEMS:
        row.fail("ecosystem", f"expected one of {', '.join(sorted(ECOSYSTEMS))}, got {ecosystem!r}")
    version_is = row.text("version_is", required=True)
    if version_is not in VERSION_IS:
        row.fail("version_is", f"expected one of {', '.join(sorted(VERSION_IS))}, got {version_is!r}")
    cuda = row.parsed("cuda", CudaVersion.parse)
    framework = canonicalize_name(row.text("framework"))
    if (version_is == "framework") != bool(framework):
        row.fail("framework", "names the package exactly when version_is is 'framework'")
    if version_is != "cuda" and cuda is None:
        row.fail("cuda", "needed unless the version is the CUDA release")
    os_names = row.texts("os", required=True)
    for o in os_names:
        if o not in ("linux", "windows", "macos"):
            row.fail("os", f"unknown operating system {o!r}")
    return CudaName(
        names=names,
        ecosystem=ecosystem,
        provides=row.text("provides", required=True),
        version_is=version_is,
        cuda=cuda,
        os=os_names,
        framework=framework,
        extra=row.text("extra"),
        channels=row.texts("channels"),
        source=row.source(),
        sources=row.texts("sources"),
        note=row.text("note"),
        row=row.index,
        line=row.line,
    )


def asked_version(spec: SpecifierSet) -> Version | None:
    """The version a specifier pins: ``==9.1.0.70``, conda's ``==11.3.*`` (11.3), else None."""
    from packaging.version import InvalidVersion, Version

    items = list(spec)
    if len(items) != 1 or items[0].operator not in ("==", "==="):
        return None
    text = items[0].version.split("+")[0]
    text = text[:-2] if text.endswith(".*") else text
    try:
        return Version(text)
    except InvalidVersion:
        return None


def cuda_of(entry: CudaName, version: Version | None) -> CudaVersion | None:
    """The CUDA a release of ``entry`` is for: the series its version names (cudatoolkit 11.3.1: 11.3), else the
    major its name says."""
    if entry.version_is == "cuda" and version is not None and len(version.release) >= 2:
        try:
            return CudaVersion.parse(f"{version.release[0]}.{version.release[1]}")
        except VersionError:
            return None
    return entry.cuda


def releases(entry: CudaName, name: str, spec: SpecifierSet, matrix: Matrix) -> list[FrameworkRelease]:
    """What a requirement of ``name`` (one of ``entry``'s names) with ``spec`` installs, as releases to judge: the
    framework's own rows in the form that brings the plugin (jax-cuda12-plugin==0.4.30 is jax[cuda12]==0.4.30),
    else one release made of the row, for a pinned version."""
    if entry.version_is == "framework":
        rows = matrix.find(entry.framework, spec)
        out = []
        for r in rows:
            r = r.with_extras(frozenset({entry.extra})) if entry.extra else r
            kept = tuple(c for c in r.cuda if entry.cuda is None or c.major == entry.cuda.major)
            if kept:
                out.append(replace(r, cuda=kept, cuda_default=r.cuda_default if r.cuda_default in kept else None))
        return out
    from packaging.specifiers import SpecifierSet

    version = asked_version(spec)
    cuda = cuda_of(entry, version)
    if version is None or cuda is None:
        return []
    cudnn: tuple[CudnnVersion, ...] = ()
    if entry.version_is == "cudnn":
        minor = version.release[1] if len(version.release) > 1 else 0
        try:
            cudnn = (CudnnVersion.parse(f"{version.release[0]}.{minor}"),)
        except VersionError:
            cudnn = ()
    if entry.ecosystem == "pypi":
        recipe = InstallRecipe(kind="pip", cuda=str(cuda), requirement=f"{name}=={version}")
    else:
        recipe = InstallRecipe(kind="conda", cuda=str(cuda), packages=(f"{name}={version}",), channels=entry.channels)
    return [
        FrameworkRelease(
            package=name,
            version=version,
            covers=SpecifierSet(f"=={version}"),
            os=entry.os,
            python=(),
            cuda=(cuda,),
            cudnn=cudnn,
            # it brings what it is (or pins it): nothing to load from the system, and no GPU code of its own
            cudnn_rule=CudnnRule.BUNDLED,
            install=(recipe,),
            on_pypi=entry.ecosystem == "pypi",  # (a conda package: no pip install of it)
            source=entry.source,
            sources=entry.sources,
            note=f"{name} {version} is {what_it_is(entry, name, version)}. {entry.note}".strip(),
            row=entry.row,
            line=entry.line,
        )
    ]


def what_it_is(entry: CudaName, name: str, version: Version | None) -> str:
    """``cuDNN 9.1.0 for CUDA 12`` and the like: what a release of ``name`` is, in words."""
    cuda = cuda_of(entry, version)
    for_cuda = f"for CUDA {cuda}" if cuda is not None else "for a CUDA its version names"
    v = str(version) if version is not None else ""
    if entry.version_is == "cudnn":
        return f"cuDNN {'.'.join(map(str, version.release[:3]))} {for_cuda}" if version else f"cuDNN {for_cuda}"
    if entry.version_is == "nccl":
        return f"NCCL {v} {for_cuda}".replace("  ", " ")
    if entry.version_is == "cuda":
        kind = {"cuda-pin": "a pin of the CUDA release", "cuda-toolkit": "the CUDA toolkit"}.get(
            entry.provides, "the CUDA runtime"
        )
        return f"{kind} {cuda}" if cuda is not None else f"{kind} its version names"
    if entry.version_is == "framework":
        return f"the CUDA {entry.cuda} plugin of {entry.framework} {v}".replace("  ", " ").strip()
    return f"{entry.provides} {v} {for_cuda}".replace("  ", " ")


def name_record(entry: CudaName, name: str, spec: SpecifierSet, matrix: Matrix) -> dict[str, Any]:
    """The ``names`` entry of ``matrix --json`` for a query of ``name``: the row, and what the asked version is."""
    version = asked_version(spec)
    cuda = cuda_of(entry, version)
    linux = windows = None
    if cuda is not None:
        linux = matrix.driver_table("linux").min_driver_for(cuda)
        windows = matrix.driver_table("windows").min_driver_for(cuda)
    return {
        "name": name,
        "names": list(entry.names),
        "ecosystem": entry.ecosystem,
        "provides": entry.provides,
        "version_is": entry.version_is,
        "cuda": str(entry.cuda) if entry.cuda is not None else None,
        "framework": entry.framework or None,
        "extra": entry.extra or None,
        "os": list(entry.os),
        "channels": list(entry.channels),
        "asked": {
            "version": str(version) if version is not None else None,
            "is": what_it_is(entry, name, version),
            "cuda": str(cuda) if cuda is not None else None,
            "driver_min_linux": str(linux) if linux else None,
            "driver_min_windows": str(windows) if windows else None,
        },
        "source": entry.source,
        "sources": list(entry.sources),
        "note": entry.note or None,
        "matrix_line": entry.line,
    }
