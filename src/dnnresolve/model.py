"""Plain data: the matrix's rows and what a requirement means against them (the machine's side is
machine.py). No I/O here."""

from __future__ import annotations

import contextlib

from .compat import CudnnRule
from .pkgname import canonicalize_name
from .records import record, replace
from .specs import InvalidRequirement, exact_version, parse_requirement
from .versions import (
    ComputeCapability,
    CudaVersion,
    CudnnVersion,
    DriverVersion,
    PythonVersion,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # packaging loads where a release is compared, not with every command that imports the model
    from typing import Any

    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

# ---------------------------------------------------------------- matrix rows

COMPANIONS = ("torchvision", "torchaudio")  # the packages an install recipe may pin beside its framework


@record(frozen=True)
class InstallRecipe:
    """One way to install a framework release: a pip requirement, conda packages, or a manual step."""

    kind: str  # "pip", "conda", "manual"
    cuda: str = ""  # the CUDA variant this recipe gives ("" = CPU build)
    requirement: str = ""
    index_url: str = ""
    extra_index_url: str = ""
    find_links: str = ""
    packages: tuple[str, ...] = ()
    channels: tuple[str, ...] = ()
    python: tuple[str, ...] = ()
    url: str = ""
    note: str = ""
    companions: tuple[tuple[str, str], ...] = ()  # ("torchvision", "0.16.0"), ...
    sm: tuple[ComputeCapability, ...] = ()  # architectures this variant's binaries carry, when stated
    ptx: tuple[ComputeCapability, ...] = ()  # architectures it carries PTX for (JIT-compiled for newer GPUs)
    sm_exact: tuple[ComputeCapability, ...] = ()  # arch-specific code (sm_90a): runs on that capability only
    cudnn: tuple[CudnnVersion, ...] = ()  # the cuDNN series this variant was built against, when stated
    # code only some states of the build scripts carry, where they changed the day the release was built and no
    # source says which state built it (``sm`` / ``ptx`` then hold what every state carries)
    sm_unconfirmed: tuple[ComputeCapability, ...] = ()
    ptx_unconfirmed: tuple[ComputeCapability, ...] = ()

    @property
    def extras(self) -> frozenset[str]:
        """The extras its pip requirement names (``jax[cuda12_local]``: the form that loads the system's CUDA)."""
        return extras_of(self.requirement) if self.kind == "pip" else frozenset()

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind, "cuda": self.cuda}
        for key in ("requirement", "index_url", "extra_index_url", "find_links", "url", "note"):
            if getattr(self, key):
                d[key] = getattr(self, key)
        for key in ("packages", "channels", "python"):
            if getattr(self, key):
                d[key] = list(getattr(self, key))
        if self.companions:
            d["companions"] = dict(self.companions)
        if self.sm:
            d["sm"] = [str(s) for s in self.sm]
        if self.ptx:
            d["ptx"] = [str(s) for s in self.ptx]
        for key in ("sm_exact", "sm_unconfirmed", "ptx_unconfirmed"):
            if getattr(self, key):
                d[key] = [str(s) for s in getattr(self, key)]
        if self.cudnn:
            d["cudnn"] = [str(c) for c in self.cudnn]
        return d


@record(frozen=True)
class FrameworkRelease:
    """A framework release on one set of operating systems, as the matrix states it."""

    package: str
    version: Version
    covers: SpecifierSet
    os: tuple[str, ...]
    python: tuple[PythonVersion, ...]
    cuda: tuple[CudaVersion, ...] = ()
    cuda_default: CudaVersion | None = None
    cudnn: tuple[CudnnVersion, ...] = ()
    cudnn_rule: CudnnRule | None = None
    cudnn_optional: bool = False  # only some features load cuDNN (CuPy's cupy.cudnn): a mismatch warns, none is fine
    compute_capability_min: ComputeCapability | None = None
    sm: tuple[ComputeCapability, ...] = ()  # the plain PyPI wheel's (cuda_default's) SASS architectures
    ptx: tuple[ComputeCapability, ...] = ()  # and its PTX, which the driver compiles for newer GPUs
    sm_exact: tuple[ComputeCapability, ...] = ()  # and its arch-specific code (sm_100a), for that capability only
    aliases: tuple[str, ...] = ()
    compiler: str = ""
    build_tool: str = ""
    on_pypi: bool = True  # False: PyPI no longer serves its files, so no plain ``pip install`` gets it
    wheels_any_python: bool = False  # its wheels are tagged for any CPython (py2.py3); ``python`` is what it states
    system_cuda: bool = False  # its wheels bring cuDNN (cudnn_rule bundled) but load CUDA from the system (MXNet < 1.8)
    builds_each_release: bool = False  # every release it covers has the builds its steps pin (Paddle's .postNNN)
    # per release it covers, the release of the package whose extras its steps name that pins it (jaxlib 0.1.72 is
    # installed as jax[cuda111]==0.2.22); "" where no release of it does
    pinned_by: tuple[tuple[str, str], ...] = ()
    install: tuple[InstallRecipe, ...] = ()
    source: str = ""
    sources: tuple[str, ...] = ()
    note: str = ""
    row: int = 0  # 1-based index among [[framework]] tables, for messages
    line: int = 0  # line of its [[framework]] header in the TOML file
    form: frozenset[str] | None = None  # the extras a requirement chose its install by (with_extras), if any

    @property
    def names(self) -> tuple[str, ...]:
        return (self.package, *self.aliases)

    def matches(self, version: Version) -> bool:
        return self.covers.contains(version, prereleases=True)

    def through(self, requirement: str, version: Version | None = None) -> str | None:
        """A step's requirement as it installs this row's release (or ``version``): another package's extra left
        unpinned (``jax[cuda111]`` of a jaxlib row) is pinned to the release of it that pins this one
        (``pinned_by``), None where none does; any other requirement as it is."""
        if not self.pinned_by:
            return requirement
        try:
            req = parse_requirement(requirement)
        except InvalidRequirement:
            return requirement
        if req.specifier or req.url or canonicalize_name(req.name) in {canonicalize_name(n) for n in self.names}:
            return requirement
        by = dict(self.pinned_by).get(str(self.version if version is None else version))
        if by is None:  # a release the row does not list: pinned to its own number, as any other row's step
            return requirement
        return f"{requirement}=={by}" if by else None

    def for_version(self, version: Version) -> FrameworkRelease:
        """This row as the answer for ``version``, a release it covers (a row stands for a stretch of releases whose
        pages state the same facts): the same facts, with every pip step that pins the framework pinning ``version``
        instead, so that a plan installs exactly the release asked (``tensorflow[and-cuda]==2.19.1`` of the 2.19
        row becomes ``==2.19.0`` for 2.19.0). A step keeps its build: the local tag (``jaxlib==0.1.65+cuda110`` ->
        ``0.1.61+cuda110``) and Paddle's build post (``2.4.2.post116`` -> ``2.4.1.post116``). Companions tied to the
        row's release (``torchvision==0.16.0``) are left for pip to match."""
        from packaging.specifiers import SpecifierSet
        from packaging.version import InvalidVersion, Version

        if not self.matches(version) and not self.matches(Version(version.base_version)):
            return self
        names = {canonicalize_name(n) for n in self.names}
        install = []
        changed = False
        dropped: set[str] = set()
        for rec in self.install:
            if rec.kind == "pip" and self.through(rec.requirement, version) is None:
                dropped.add(rec.cuda)  # no release of the package whose extra it names pins this one
                changed = True
                continue
            try:
                req = parse_requirement(rec.requirement) if rec.kind == "pip" and "==" in rec.requirement else None
            except InvalidRequirement:
                req = None
            text = exact_version(req.specifier) if req is not None and canonicalize_name(req.name) in names else None
            if req is None or text is None:
                install.append(rec)
                continue
            base, _, local = text.partition("+")
            try:
                pinned = Version(base)
            except InvalidVersion:
                install.append(rec)
                continue
            # a post the row's steps use to name builds (Paddle's .post112) is not a release of the plain step;
            # elsewhere a post release is one (mxnet-cu90 1.5.1.post0, tensorflow 2.15.0.post1): pinned as is
            build_post = version.post is not None and self.version.post is None and self._posts_name_builds
            release = version.base_version if build_post else str(version)
            if pinned.post is not None and self.version.post is None:  # a build post (Paddle's .post116: CUDA 11.6)
                if version.post is None and version != self.version and not self.builds_each_release:
                    dropped.add(rec.cuda)  # which builds another release had is not known
                    changed = True
                    continue
                wanted = f"{Version(version.base_version)}.post{pinned.post}"
            else:
                wanted = release
            wanted += f"+{local}" if local else ""
            if Version(wanted) == Version(text):  # (1.0 is 1.0.0: the step keeps the spelling of its page)
                install.append(rec)
                continue
            changed = True
            pin = replace(req, specifier=SpecifierSet(f"=={wanted}"))
            install.append(replace(rec, requirement=str(pin), companions=()))
        kept = {rec.cuda for rec in install if rec.kind == "pip"}
        gone = dropped - kept
        cuda = tuple(c for c in self.cuda if not any(_same_cuda(g, c) for g in gone if g))
        if version == self.version and not changed:
            return self
        default = self.cuda_default if self.cuda_default in cuda else None
        return replace(self, version=version, install=tuple(install), cuda=cuda, cuda_default=default)

    @property
    def _posts_name_builds(self) -> bool:
        """Whether the row's pip steps pin post releases to name CUDA builds (Paddle's ``2.4.2.post116`` beside
        ``2.4.2`` for CUDA 10.2), not a re-upload of the same build (mxnet-cu90's ``1.5.1.post0``)."""
        from packaging.version import InvalidVersion, Version

        plain: set[str] = set()
        posts: set[str] = set()
        for rec in self.install:
            if rec.kind != "pip" or not rec.cuda or "==" not in rec.requirement:
                continue
            text = rec.requirement.split("==", 1)[1].split(";")[0].split("+")[0].strip()
            with contextlib.suppress(InvalidVersion):
                (posts if Version(text).post is not None else plain).add(rec.cuda)
        return len(posts) > 1 or bool(posts - plain)

    def with_extras(self, extras: frozenset[str]) -> FrameworkRelease:
        """This row as the answer for a requirement that names ``extras``: when pip recipes of the row name the
        same extras, only they remain, with the CUDA variants they install (``jax[cuda12-local]==0.7.2``: the
        CUDA 12 build that loads the system's CUDA and cuDNN, not ``jax[cuda13]``). Extras no recipe names (an
        optional feature, ``torch[opt-einsum]``) leave the row as it is."""
        wanted = frozenset(canonicalize_name(e) for e in extras)
        if not wanted:
            return self
        return self._in_form(wanted) or self

    def without_extras(self) -> FrameworkRelease | None:
        """This row as a requirement without extras installs it, when a pip recipe of the row is that plain form
        (``onnxruntime-gpu==1.23.2`` beside ``onnxruntime-gpu[cuda,cudnn]==1.23.2``), else None."""
        return self._in_form(frozenset())

    def _in_form(self, wanted: frozenset[str]) -> FrameworkRelease | None:
        kept = tuple(rec for rec in self.install if rec.kind == "pip" and rec.cuda and rec.extras == wanted)
        if not kept:
            return None
        cuda = tuple(c for c in self.cuda if any(_recipe_cuda_is(rec, c) for rec in kept))
        default = self.cuda_default if self.cuda_default in cuda else None
        return replace(self, install=kept, cuda=cuda, cuda_default=default, form=wanted)

    def as_conda(self) -> FrameworkRelease:
        """This row as a conda line installs it: its conda recipes first, so that a CUDA variant's GPU code is the
        conda package's where that recipe states it (PyTorch's conda builds came from another build script than
        its wheels), else the wheel's as before."""
        return replace(self, install=tuple(sorted(self.install, key=lambda rec: rec.kind != "conda")))

    @property
    def runs_without_extras(self) -> bool:
        """Whether a requirement naming the package without extras installs something that runs. False where the
        row's CPU build itself is an extra and no pip recipe names the bare package: jax before 0.4.30 (its
        CPU build is ``jax[cpu]``; a plain ``jax`` brings no jaxlib, and ``import jax`` fails)."""
        cpu = self.recipe(None)
        if cpu is None or not cpu.extras:
            return True
        return any(rec.kind == "pip" and not rec.extras and _names(rec, self.package) for rec in self.install)

    @property
    def is_gpu(self) -> bool:
        return bool(self.cuda)

    def recipe(self, cuda: CudaVersion | None, kind: str = "pip") -> InstallRecipe | None:
        """The recipe for this variant; one with an extra that brings the CUDA wheels (and-cuda, cuda12) first."""
        matches = [rec for rec in self.install if rec.kind == kind and _recipe_cuda_is(rec, cuda)]
        matches.sort(key=lambda rec: (not _names(rec, self.package), "[" not in rec.requirement))
        return matches[0] if matches else None

    def cudnn_for(self, cuda: CudaVersion | None) -> tuple[CudnnVersion, ...]:
        """The cuDNN series the ``cuda`` build was made with: its install recipes' when they state them (the
        builds of one release can differ: Paddle's CUDA 11.2 build uses cuDNN 8.2, its 12.0 build 8.9), else
        the release's list."""
        if cuda is not None:
            stated = {
                c: None
                for recipe in self.install
                if recipe.cudnn and recipe.cuda and _same_cuda(recipe.cuda, cuda)
                for c in recipe.cudnn
            }
            if stated:
                return tuple(stated)
        return self.cudnn


@record(frozen=True)
class WheelPins:
    """The nvidia-* requirements a pip-era release's metadata states (per extra and platform)."""

    package: str
    version: Version
    extra: str
    platform: str
    requires: tuple[str, ...]
    python: str = ""
    source: str = ""
    row: int = 0
    line: int = 0

    @property
    def extras(self) -> frozenset[str]:
        """The extras these pins come with ("cuda,cudnn": both), normalized."""
        return frozenset(canonicalize_name(e) for e in self.extra.split(",") if e.strip())


@record(frozen=True)
class CudaRelease:
    version: CudaVersion
    driver_min_linux: DriverVersion
    driver_min_windows: DriverVersion | None = None
    label: str = ""
    compute_capability_min: ComputeCapability | None = None
    compute_capability_max: ComputeCapability | None = None
    source: str = ""
    note: str = ""
    row: int = 0
    line: int = 0


@record(frozen=True)
class CudaFamily:
    major: int
    driver_min_linux: DriverVersion
    driver_min_windows: DriverVersion | None = None
    source: str = ""
    note: str = ""
    row: int = 0
    line: int = 0


@record(frozen=True)
class CudnnArchive:
    cuda: str
    os: str
    file: str


@record(frozen=True)
class CudnnRelease:
    version: CudnnVersion
    cuda: tuple[CudaVersion, ...]
    driver_min_linux: DriverVersion | None = None
    compute_capability_min: ComputeCapability | None = None
    os: tuple[str, ...] = ()
    archives: tuple[CudnnArchive, ...] = ()
    source: str = ""
    note: str = ""
    row: int = 0
    line: int = 0
    # the oldest GPU NVIDIA's support matrix lists, per CUDA major of the package (it moved: cuDNN 8.5 for CUDA 11.x
    # lists Kepler, 8.9 for 11.x starts at Maxwell), the page that says so, or why the row states none
    compute_capability_min_by_cuda: tuple[tuple[int, ComputeCapability], ...] = ()
    compute_capability_source: str = ""
    compute_capability_note: str = ""
    compute_capability_unstated: str = ""
    # "support_matrix": the page lists the floors; "library": no page was found, and they are the oldest
    # architecture NVIDIA's own library (its PyPI wheel) carries code for
    compute_capability_basis: str = "support_matrix"

    def floor(self, cuda_major: int) -> ComputeCapability | None:
        """The oldest compute capability the package for that CUDA major supports; the row's overall minimum where
        no per-major floor is stated; None when the matrix does not say."""
        stated = dict(self.compute_capability_min_by_cuda)
        return stated.get(cuda_major, self.compute_capability_min)

    def supports_cuda(self, cuda: CudaVersion) -> bool:
        for c in self.cuda:
            if c.is_major_only and c.major == cuda.major:
                return True
            if c.series == cuda.series:
                return True
        return False


@record(frozen=True)
class GpuModel:
    name: str
    compute_capability: ComputeCapability
    architecture: str
    aliases: tuple[str, ...] = ()
    source: str = ""
    row: int = 0
    line: int = 0


# ---------------------------------------------------------------- the runtime


def extras_of(requirement: str) -> frozenset[str]:
    """The extras a pip requirement names, normalized (PEP 685: ``cuda12_local`` and ``cuda12-local`` are one)."""
    try:
        return frozenset(canonicalize_name(e) for e in parse_requirement(requirement).extras)
    except InvalidRequirement:
        return frozenset()


def _names(rec: InstallRecipe, package: str) -> bool:
    """A pip recipe whose requirement names ``package`` itself (not an alias: ``jaxlib==0.3.25+cuda11.cudnn82``)."""
    try:
        return canonicalize_name(parse_requirement(rec.requirement).name) == package
    except InvalidRequirement:
        return False


def _recipe_cuda_is(rec: InstallRecipe, cuda: CudaVersion | None) -> bool:
    if cuda is None:
        return rec.cuda == ""
    return rec.cuda == str(cuda.series) or (bool(rec.cuda) and CudaVersion.parse(rec.cuda).series == cuda.series)


def _same_cuda(text: str, cuda: CudaVersion) -> bool:
    """A recipe's CUDA ("11.2", or "12.x"/"12" for a whole major) names the build ``cuda``."""
    major, _, minor = text.partition(".")
    if not minor or minor == "x":
        return major == str(cuda.major)
    return text == f"{cuda.major}.{cuda.minor}" or text.startswith(f"{cuda.major}.{cuda.minor}.")
