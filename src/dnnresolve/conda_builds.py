"""The builds a channel makes of a framework itself, from recipes of its own (``OWN_BUILDS``: Anaconda's defaults,
whose tensorflow-gpu 2.4.1 is a CUDA 10.1 build while the wheel is CUDA 11.0; conda-forge's tensorflow and jaxlib):
which exist, and each as the artifact it is. ``check`` judges an environment file's conda line by them
(``check_conda``), ``plan`` an active environment whose framework such a channel installed (``plan_conda``). Pure:
no I/O.

The matrix records them as conda recipes of the release's row naming that channel first and pinning the release
(``tensorflow-gpu==2.4.1``, ``cudatoolkit=10.1``, ``cudnn=7.6``); each brings its CUDA and cuDNN as conda packages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .compat import CudnnRule
from .machine import Runtime
from .matrix import Matrix
from .model import FrameworkRelease, InstallRecipe
from .records import replace
from .solve.checks import evaluate
from .solve.results import Candidate
from .versions import CudaVersion, CudnnVersion

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet

# channels that build frameworks from recipes of their own rather than repackage the framework's binaries (a row's
# conda recipe of such a channel, pinning its release, is one of its builds); the names a file may give Anaconda's
OWN_BUILDS = ("defaults", "conda-forge")
_ANACONDA = ("defaults", "anaconda", "main", "pkgs/main")

Build = tuple[FrameworkRelease, InstallRecipe]


def channel_name(name: str) -> str:
    """A channel as the matrix's recipes name it: ``https://repo.anaconda.com/pkgs/main/linux-64`` and ``pkgs/main``
    -> defaults, ``https://conda.anaconda.org/conda-forge/`` (or a mirror's URL of it) -> conda-forge."""
    name = name.lower().rstrip("/")
    if "://" in name:
        parts = [p for p in name.split("://", 1)[1].split("/")[1:] if p and p not in _SUBDIRS]  # after the host
        name = parts[-1] if parts else ""
    return "defaults" if name in _ANACONDA else name


_SUBDIRS = ("linux-64", "linux-aarch64", "linux-ppc64le", "osx-64", "osx-arm64", "win-64", "noarch")


def is_own_build(rec: InstallRecipe) -> bool:
    """Whether a recipe is one of a channel's own builds of a release (``OWN_BUILDS``; it pins the release)."""
    return (
        rec.kind == "conda"
        and bool(rec.cuda)
        and bool(rec.channels)
        and rec.channels[0] in OWN_BUILDS
        and bool(rec.packages)
        and "==" in rec.packages[0]
    )


def conda_name(rec: InstallRecipe) -> str:
    """The conda package an own build installs (``tensorflow-gpu``)."""
    return rec.packages[0].partition("==")[0].lower()


def build_version(rec: InstallRecipe) -> str:
    return rec.packages[0].partition("==")[2]


def by_channel(matrix: Matrix, package: str, spec: SpecifierSet, name: str = "") -> dict[str, list[Build]]:
    """The own builds of ``package`` at releases ``spec`` allows, per channel; ``name``: only those of that conda
    package (a conda line names one)."""
    found: dict[str, list[Build]] = {}
    for row in matrix.find(package, spec):
        for rec in row.install:
            if not is_own_build(rec) or (name and conda_name(rec) != name.lower()):
                continue
            if spec.contains(build_version(rec), prereleases=True):
                found.setdefault(rec.channels[0], []).append((row, rec))
    return found


def as_conda_build(row: FrameworkRelease, rec: InstallRecipe) -> FrameworkRelease:
    """A row as one of a channel's own builds: that release, that CUDA, the cuDNN its recipe names (``cudnn=7.6``),
    CUDA and cuDNN both conda packages of the environment; its GPU code and Pythons are not the wheels' (unknown)."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    version = build_version(rec)
    cudnn = [p.split("=", 1)[1] for p in rec.packages if p.startswith("cudnn=")]
    return replace(
        row,
        version=Version(version) if version else row.version,
        covers=SpecifierSet(f"=={version}") if version else row.covers,
        python=(),  # the channel's Pythons of it are not recorded: not the wheels'
        cuda=(CudaVersion.parse(rec.cuda),),
        cuda_default=None,
        cudnn=tuple(CudnnVersion.parse(c) for c in cudnn) or row.cudnn,
        cudnn_rule=CudnnRule.BUNDLED,
        system_cuda=False,
        sm=(),
        ptx=(),
        sm_exact=(),
        install=(rec,),
        source=rec.url or row.source,
    )


def candidates(found: list[Build], runtime: Runtime, matrix: Matrix) -> list[Candidate]:
    """Each own build judged as itself on ``runtime``: its CUDA and cuDNN conda's, the driver and GPU the machine's."""
    out = []
    for row, rec in found:
        build = as_conda_build(row, rec)
        cuda = CudaVersion.parse(rec.cuda)
        out.append(Candidate(build, cuda, evaluate(build, cuda, runtime, matrix)))
    return out
