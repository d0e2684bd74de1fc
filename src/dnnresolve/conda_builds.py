"""The builds a channel makes of a framework itself, from recipes of its own (``OWN_BUILDS``: Anaconda's defaults,
whose tensorflow-gpu 2.4.1 is a CUDA 10.1 build while the wheel is CUDA 11.0; conda-forge's tensorflow and jaxlib):
which exist, and each as the artifact it is. ``check`` judges an environment file's conda line by them
(``check_conda``), ``plan`` an active environment whose framework such a channel installed (``plan_conda``). Pure:
no I/O.

The matrix records them as conda recipes of the release's row naming that channel first and pinning the release
(``tensorflow-gpu==2.4.1``, ``cudatoolkit=10.1``, ``cudnn=7.6``); each brings its CUDA and cuDNN as conda packages.

Which build conda installs (``candidates`` orders them so). conda injects the ``__cuda`` virtual package, the
"maximum version of CUDA supported by the display driver" (``VIRTUAL_SOURCE``), and a build installs only where
``__cuda`` meets what its CUDA packages constrain: ``cudatoolkit`` X.Y constrains ``__cuda >=X.Y`` (conda-forge's
recipe, ``CUDATOOLKIT_SOURCE``; Anaconda's by its repodata hotfix, ``ANACONDA_SOURCE``), so a build before CUDA 12 needs
``__cuda`` of at least its own series (one from 11.2 takes ``cudatoolkit >=X.Y,<X+1``, whose lowest is its own);
conda-forge's CUDA 12 and later builds come with ``cuda-version`` X.Y, which constrains ``__cuda >=X`` only
(``CUDA_VERSION_SOURCE``). A build installs only into an environment of a Python it was made for (its
``python >=3.6,<3.7.0a0`` run requirement, the ``py36`` of its build string), so an environment's Python (a file's
``python=`` pin, the active environment's) drops the builds of others; one whose Pythons are not recorded is kept. Of
the builds left, conda takes the newest version (``CHANNELS_SOURCE``: channel, version, build number), and among
the variants of one version and build number the one whose dependency selects the newest version
(``VARIANTS_SOURCE``), i.e. the newest CUDA; the channels' build numbers are not recorded, so variants of one version
are taken as of one build number (one recipe commit builds all its variants with one number: Anaconda's recorded
tensorflow-base builds are all ``_0``). The classic solver was seen ignoring ``__cuda`` when it was not asked for
(conda/conda issues 9896, 10480); the model follows the solvers that honour it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .compat import CudnnRule
from .machine import InstalledPackage, Runtime
from .matrix import Matrix
from .model import FrameworkRelease, InstallRecipe
from .records import replace
from .solve.checks import evaluate
from .solve.results import Candidate, Check, Status
from .versions import CudaVersion, CudnnVersion, PythonVersion

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

# channels that build frameworks from recipes of their own rather than repackage the framework's binaries (a row's
# conda recipe of such a channel, pinning its release, is one of its builds); the names a file may give Anaconda's
OWN_BUILDS = ("defaults", "conda-forge")
_ANACONDA = ("defaults", "anaconda", "main", "pkgs/main")

Build = tuple[FrameworkRelease, InstallRecipe]

VIRTUAL_SOURCE = "https://docs.conda.io/projects/conda/en/stable/user-guide/tasks/manage-virtual.html"
CUDATOOLKIT_SOURCE = "https://github.com/conda-forge/cudatoolkit-feedstock/blob/0f01f6edfe22e77ac068daa46505711a1481272e/recipe/meta.yaml"
ANACONDA_SOURCE = (
    "https://github.com/AnacondaRecipes/repodata-hotfixes/blob/1734a80b132ea926099394e9d22cbc07c2b34d80/main.py"
)
CUDA_VERSION_SOURCE = "https://github.com/conda-forge/cuda-version-feedstock/blob/d548d47b1bff47e90732995efebc869fb254f9c1/recipe/meta.yaml"
CHANNELS_SOURCE = "https://docs.conda.io/projects/conda/en/latest/user-guide/tasks/manage-channels.html"
VARIANTS_SOURCE = "https://mamba.readthedocs.io/en/latest/advanced_usage/package_resolution.html"


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
    CUDA and cuDNN both conda packages of the environment, the Pythons its recipe names (the channel's, not the
    wheels'; none where the sources name none); its GPU code is not the wheels' (unknown)."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    version = build_version(rec)
    cudnn = [p.split("=", 1)[1] for p in rec.packages if p.startswith("cudnn=")]
    return replace(
        row,
        version=Version(version) if version else row.version,
        covers=SpecifierSet(f"=={version}") if version else row.covers,
        python=tuple(PythonVersion.parse(p) for p in rec.python),
        wheels_any_python=False,
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
    """Each own build judged as itself on ``runtime``: its CUDA and cuDNN conda's, the driver and GPU the machine's;
    a build the driver's ``__cuda`` keeps conda from installing fails a "conda" check. Newest version and CUDA
    first."""
    have = virtual_cuda(runtime, matrix)
    out = []
    for row, rec in found:
        build = as_conda_build(row, rec)
        cuda = CudaVersion.parse(rec.cuda)
        checks = [_python_of(k, build, rec) for k in evaluate(build, cuda, runtime, matrix)]
        floor = cuda_floor(rec)
        if have is not None and have < floor:
            by = "cuda-version" if floor.major >= 12 else "cudatoolkit"
            source = CUDA_VERSION_SOURCE if by == "cuda-version" else CUDATOOLKIT_SOURCE
            if by == "cudatoolkit" and rec.channels[0] == "defaults":
                source = ANACONDA_SOURCE
            reason = (
                f"conda installs no such build here: the {rec.channels[0]} channel's CUDA {cuda} build of "
                f"{conda_name(rec)} {build_version(rec)} comes with {by}, which asks the __cuda virtual package "
                f"for >= {floor}, and driver {runtime.driver} gives __cuda {have} (the newest CUDA it supports)"
            )
            checks.append(Check("conda", Status.FAIL, reason, f"__cuda >= {floor}", f"__cuda {have}", source))
        out.append(Candidate(build, cuda, checks))
    # conda's order: of the builds that fail alike, a requirement's best is the first
    out.sort(key=lambda c: (c.release.version, c.cuda or CudaVersion((0, 0))), reverse=True)
    return _fallback(out, have)


def _fallback(out: list[Candidate], have: CudaVersion | None) -> list[Candidate]:
    """conda's pick of a range where the newest versions have no build it installs here: the newest version with a
    build ``__cuda`` admits (no failed "conda" check) that was made for the environment's Python (no failed "python"
    check; a build whose Pythons are not recorded passes), whose candidates say so (an "ok" conda check); the
    versions above it go, since conda installs none of them. ``out`` itself where the newest has such a build, or
    none has."""
    admitted = [c for c in out if _installable(c)]
    if not admitted or admitted[0].release.version == out[0].release.version:
        return out
    pick = admitted[0].release.version
    dropped = [c for c in out if c.release.version > pick]
    versions = sorted({c.release.version for c in dropped})
    # a version none of whose builds __cuda admits is held by __cuda; the others, by the Python of those it admits
    by_cuda = [v for v in versions if all(c.check("conda") is not None for c in dropped if c.release.version == v)]
    by_python = [c for c in dropped if c.release.version not in by_cuda and c.check("conda") is None]
    held = [k for c in dropped if c.release.version in by_cuda and (k := c.check("conda")) is not None]
    asked = sorted({k.needed for k in held}, key=lambda n: CudaVersion.parse(n.rsplit(" ", 1)[-1]))
    rec = dropped[0].release.install[0]
    wants: list[str] = []
    has: list[str] = []
    why: list[str] = []
    builds: list[str] = []
    if held:
        wants.append(" or ".join(asked))
        has.append(f"__cuda {have}")
        why.append(f"the builds of {_listed(by_cuda)} ask for {' or '.join(asked)}")
        builds.append(f"that the driver's __cuda {have} admits")
    if by_python:
        python = next(k.found for c in by_python if (k := c.check("python")) is not None)
        made = ", ".join(str(p) for p in sorted({p.series for c in by_python for p in c.release.python}))
        mine = sorted({c.release.version for c in by_python})
        partly = any(c.check("conda") is not None for c in dropped if c.release.version in mine)
        wants.append(f"a build for Python {python}")
        has.append(f"Python {python}")
        admitted_by = " that it admits" if partly else ""
        why.append(f"{'those' if held else 'the builds'} of {_listed(mine)}{admitted_by} were made for Python {made}")
        picked = [c for c in out if c.release.version == pick and _installable(c)]
        known = any(c.release.python for c in picked)  # else its Pythons are not recorded, so not ruled out
        builds.append(
            f"made for Python {python}" if known else f"whose Pythons are not recorded (none rules out {python})"
        )
    reason = (
        f"conda installs {conda_name(rec)} {pick}, the newest release allowed with a {rec.channels[0]} build "
        f"{', '.join(builds)}: {'; '.join(why)}"
    )
    source = held[0].source if held else next(k.source for c in by_python if (k := c.check("python")) is not None)
    kept = [c for c in out if c.release.version <= pick]
    for c in kept:
        if c.release.version == pick and _installable(c):
            c.checks.append(Check("conda", Status.OK, reason, "; ".join(wants), ", ".join(has), source))
    return kept


def installed_build(
    found: list[Build], installed: InstalledPackage, runtime: Runtime, matrix: Matrix
) -> Candidate | None:
    """The own build conda installed in the active environment (``installed``; ``found``: the channel's builds of its
    release), judged as itself: the one its build string names, else the one the environment's CUDA takes (conda
    installed it with that ``cudatoolkit``). Without the "conda" check: what ``__cuda`` lets conda install does not
    bear on what is installed already; the driver check says whether it runs. None where no build is that one."""
    from .conda_cuda import pins_series, takes

    tag = installed.build_tag()
    env = runtime.conda_cuda
    mine = [
        (row, rec)
        for row, rec in found
        if (tag.cuda.names_build(CudaVersion.parse(rec.cuda)) if tag.is_cuda and tag.cuda is not None else False)
        or (not tag.kind and env is not None and takes(CudaVersion.parse(rec.cuda), env, pins_series(rec)))
    ]
    if not mine:
        return None
    judged = [
        replace(c, checks=[k for k in c.checks if k.component != "conda"]) for c in candidates(mine, runtime, matrix)
    ]
    return min(judged, key=lambda c: len(c.failures))


def _installable(c: Candidate) -> bool:
    """Whether conda installs this build here at all: ``__cuda`` admits it and it was made for the Python."""
    return not any(k.component in ("conda", "python") and k.status is Status.FAIL for k in c.checks)


def _listed(versions: list[Version]) -> str:
    return ", ".join(str(v) for v in versions)


def _python_of(check: Check, build: FrameworkRelease, rec: InstallRecipe) -> Check:
    """The "python" check said of the channel's builds, not of wheels: conda installs a build made for the
    environment's Python only."""
    if check.component != "python" or check.status is Status.UNKNOWN:
        return check
    what = f"the {rec.channels[0]} channel's CUDA {rec.cuda} build of {conda_name(rec)} {build_version(rec)}"
    if not build.python:
        reason = f"{what}: the Pythons it was made for are not recorded; {check.found} not checked"
        return replace(check, status=Status.OK, reason=reason, source=build.source)
    if check.status is Status.FAIL:
        reason = (
            f"conda installs no such build into an environment of Python {check.found}: {what} was made for "
            f"Python {check.needed} only"
        )
        return replace(check, reason=reason, source=build.source)
    return replace(check, reason=f"{what} was made for Python {check.found}", source=build.source)


def cuda_floor(rec: InstallRecipe) -> CudaVersion:
    """The least ``__cuda`` an own build installs with: its CUDA series before CUDA 12 (``cudatoolkit``'s
    constraint), its major from 12 (``cuda-version``'s)."""
    cuda = CudaVersion.parse(rec.cuda).series
    return CudaVersion((cuda.major, 0)) if cuda.major >= 12 else cuda


def virtual_cuda(runtime: Runtime, matrix: Matrix) -> CudaVersion | None:
    """The ``__cuda`` conda sees on the target: the newest CUDA its driver supports (None: no driver known)."""
    if runtime.driver_cuda is not None:
        return runtime.driver_cuda.series
    if runtime.driver is None:
        return None
    return matrix.driver_table(runtime.os).newest_cuda_for(runtime.driver)


def virtual_cuda_fix(check: Check, runtime: Runtime, matrix: Matrix) -> str:
    """The fix of a failed "conda" check (``candidates``): a driver whose ``__cuda`` admits the build."""
    floor = CudaVersion.parse(check.needed.rsplit(" ", 1)[-1])
    driver = matrix.driver_table(runtime.os).min_driver_for(floor)
    least = f" (>= {driver})" if driver is not None else ""
    return (
        f"a driver that supports CUDA {floor}{least}, so that conda installs this build; or a release with a build "
        f"for the CUDA the driver supports ({check.found})"
    )
