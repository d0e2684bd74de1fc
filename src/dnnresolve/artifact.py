"""What a requirement installs: the release and build pip would pick, from the requirement and its context.

One place answers it for plan, check, doctor and explain's fixes. Pure: the releases an index publishes come
in as data (``published``, recorded from PyPI with their date), never from the network.

- a marker is evaluated for the target (OS, Python): a line it excludes installs nothing;
- a URL, VCS link, local path or editable install names no release to check, except a wheel URL, whose file
  name says name, version and local tag (PEP 427);
- the build: a local tag (``+cu118``, ``+cuda112``), Paddle's post release (``.post116``), or an index line in
  force (``--index-url https://download.pytorch.org/whl/cu118``); none of them: the index's default build;
- the release: the newest the specifier allows among those the index publishes, as pip picks (pre-releases
  and yanked files only when the specifier names them).
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from .pkgname import canonicalize_name
from .records import record, replace
from .specs import Requirement, exact_version, parse_requirement
from .versions import CudaVersion, PythonVersion, parse_build_tag, parse_cuda_tag

if TYPE_CHECKING:
    from .model import FrameworkRelease

PUBLISHED_FILE = "pypi_releases.json"
_INDEX_TAG = re.compile(r"/whl/(cu\d{2,4}|cpu|rocm[\d.]+)/?$")
_PATHLIKE = re.compile(r"^(?:\.{1,2}[/\\]|/|~|[A-Za-z]:[/\\])|[/\\]")
_VCS = re.compile(r"^(?:git|hg|svn|bzr)\+", re.IGNORECASE)
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
_NAMED_URL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\s*(?:\[[^\]]*\])?\s*@")
_ARCHIVE = re.compile(r"\.(?:whl|zip|tar\.gz|tgz|tar\.bz2|tar)$", re.IGNORECASE)


@record(frozen=True)
class Target:
    """The context that decides what a requirement installs: the target machine and the index lines in force."""

    os: str = "linux"
    python: PythonVersion | None = None
    machine: str = ""
    index_urls: tuple[str, ...] = ()


@record(frozen=True)
class Artifact:
    """What one requirement installs on a target, as far as its text and context say."""

    requirement: Requirement  # as written; for a wheel URL, read from the file name
    package: str  # canonical name
    specifier: SpecifierSet  # the releases it allows, local tags and build posts taken off
    cuda: CudaVersion | None = None  # the CUDA build it names (None: the index's default build, or a CPU tag)
    cpu: bool = False  # it names a CPU build
    build_from: str = ""  # what named the build: "local tag +cu118", "post release .post116", "index URL"
    release: Version | None = None  # the release pip picks, where the published list (or the pin) says
    skipped: str = ""  # the marker that excludes it on this target: it installs nothing there
    unchecked: str = ""  # why it names no release to check (a local path, a VCS link, a URL)

    @property
    def build_named(self) -> bool:
        return self.cuda is not None or self.cpu

    @property
    def checkable(self) -> bool:
        return not self.skipped and not self.unchecked


def unnamed_line(text: str) -> str:
    """Why a line pip accepts names no release (``-e .``, a local path, a VCS link, a URL), or "" for a line that
    is a PEP 508 requirement. pip reads a name with a path separator, or one that starts with a dot, as a path."""
    line = text.strip()
    if line.startswith(("-e ", "--editable")):
        return "not checked: an editable install of a local project"
    if _VCS.match(line):
        return "not checked: a VCS checkout, built from its source"
    if _URL.match(line):
        return "not checked: a URL" + (", and its file name names no release" if not _ARCHIVE.search(line) else "")
    head = line.split(";", 1)[0].strip()
    if _NAMED_URL.match(head):  # ``name @ URL`` (PEP 508): the requirement says which (``read`` takes it on)
        return ""
    if _PATHLIKE.search(head) and "@" not in head.split("/")[0]:
        return "not checked: a local path, built from its source"
    if _ARCHIVE.search(head):
        return "not checked: a local archive"
    return ""


def wheel_requirement(req: Requirement) -> Requirement | None:
    """``name @ https://…/torch-2.1.0+cu118-cp311-….whl`` as ``torch==2.1.0+cu118``: a wheel's file name states its
    name and version, local tag included (PEP 427); None for any other URL."""
    if not req.url:
        return None
    from urllib.parse import unquote, urlsplit

    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    name = unquote(urlsplit(req.url).path.rsplit("/", 1)[-1])
    if not name.endswith(".whl"):
        return None
    try:
        wheel_name, version, _, _ = parse_wheel_filename(name)
    except (InvalidWheelFilename, InvalidVersion):
        return None
    if wheel_name != canonicalize_name(req.name):
        return None
    return replace(req, specifier=SpecifierSet(f"=={version}"), url=None)


def marker_applies(req: Requirement, target: Target) -> bool:
    """Whether the requirement's marker holds on the target. Where its Python is unknown, whether it holds for
    some Python of those pip-era releases support (``sys_platform == "win32"`` excludes Linux whatever the Python)."""
    if req.marker is None:
        return True
    pythons = [str(target.python.series)] if target.python is not None else _ANY_PYTHON
    machine = target.machine or "x86_64"
    return any(_evaluate_marker(str(req.marker), python, target.os, machine) for python in pythons)


_ANY_PYTHON = [f"3.{minor}" for minor in range(6, 15)]


@functools.lru_cache(maxsize=256)
def _evaluate_marker(marker: str, python: str, os_name: str, machine: str) -> bool:
    from packaging.markers import Marker

    env = {
        "python_version": python,
        "python_full_version": f"{python}.0",
        "sys_platform": {"windows": "win32", "macos": "darwin"}.get(os_name, "linux"),
        "platform_system": {"windows": "Windows", "macos": "Darwin"}.get(os_name, "Linux"),
        "os_name": "nt" if os_name == "windows" else "posix",
        "platform_machine": machine,
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "extra": "",
    }
    return Marker(marker).evaluate(env)


def split_local(spec: SpecifierSet) -> tuple[SpecifierSet, CudaVersion | None, bool, str]:
    """``==2.1.0+cu118`` -> (``==2.1.0``, CUDA 11.8, not CPU, its label): the local label picks a build."""
    out, cuda, cpu, label = [], None, False, ""
    for s in spec:
        version = s.version
        if "+" in version:
            tag = parse_build_tag(version)
            if tag.is_cuda:
                cuda = tag.cuda
            cpu = cpu or tag.kind == "cpu"
            label = tag.label
            version = version.split("+")[0]
        out.append(f"{s.operator}{version}")
    return SpecifierSet(",".join(out)), cuda, cpu, label


def index_build(
    urls: tuple[str, ...], served: dict[str, tuple[CudaVersion | None, str]]
) -> tuple[CudaVersion | None, bool, str]:
    """(CUDA build, CPU build, why) that the index lines in force select: an index a row's recipe names
    (``served``: its URL -> CUDA, None for a CPU index), or one of PyTorch's per-build indexes."""
    for url in urls:
        found = served.get(url.rstrip("/"))
        if found is not None:
            cuda, named = found
            return cuda, cuda is None, f"index {named}"
    for url in urls if served else ():
        m = _INDEX_TAG.search(url)
        if m and "pytorch" in url:
            tag = m.group(1)
            return (parse_cuda_tag(tag) if tag.startswith("cu") else None), tag == "cpu", f"index {url}"
    return None, False, ""


@functools.lru_cache(maxsize=1)
def _recorded() -> dict[str, Any]:
    # the wheel's data/ beside this module, else the checkout's data/ (importlib.resources would pull zipfile,
    # shutil and lzma into every start; pathlib, urllib.parse and ipaddress: paths are text here)
    here = os.path.dirname(os.path.realpath(__file__))
    path = os.path.join(here, "data", PUBLISHED_FILE)
    if not os.path.isfile(path):
        path = os.path.join(os.path.dirname(os.path.dirname(here)), "data", PUBLISHED_FILE)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    data: dict[str, Any] = json.loads(text)
    return data


def _same_version(a: str, b: str) -> bool:
    try:
        return Version(a) == Version(b)
    except InvalidVersion:
        return a == b


def _published_data() -> dict[str, dict[str, str]]:
    packages: dict[str, dict[str, str]] = _recorded()["packages"]
    return packages


def unresolvable(requirement: str) -> str:
    """Why pip cannot install this exact requirement from PyPI (recorded from pip's resolver), or ""."""
    try:
        req = parse_requirement(requirement)
    except ValueError:
        return ""
    pinned = exact_version(req.specifier)
    if pinned is None:
        return ""
    extras = f"[{','.join(sorted(canonicalize_name(e) for e in req.extras))}]" if req.extras else ""
    for key, why in _recorded().get("unresolvable", {}).items():
        name, _, version = key.partition("==")
        if name == f"{canonicalize_name(req.name)}{extras}" and _same_version(version, pinned):
            return str(why)
    return ""


def recorded_on() -> str:
    """The date PyPI's release lists were recorded (``pypi_releases.json``)."""
    return str(_recorded().get("recorded", ""))


def published(package: str) -> dict[Version, str] | None:
    """The releases PyPI serves of ``package`` (recorded, see ``pypi_releases.json``) with the kinds of their files
    (``l`` a Linux x86_64 wheel, ``w`` a Windows one, ``y`` yanked, "" none left); None where not recorded."""
    parsed = _parsed(canonicalize_name(package))
    return dict(parsed) if parsed is not None else None


@functools.lru_cache(maxsize=512)
def _parsed(package: str) -> tuple[tuple[Version, str], ...] | None:
    # parsed once per package and process: a plan asks for each row the package has (other_releases)
    found = _published_data().get(package)
    if found is None:
        return None
    out = []
    for text, kinds in found.items():
        try:
            out.append((Version(text), kinds))
        except InvalidVersion:
            continue
    return tuple(out)


def may_exist(row: FrameworkRelease, release: Version) -> bool:
    """Whether ``release``, which ``row`` covers, may exist: PyPI's recorded list of the package has it, or no list
    is recorded, or the row's builds come from another index (jaxlib's find-links page, PyTorch's own index), whose
    releases that list does not hold. A pin of a release PyPI never published (``cupy-cuda11x==12.0.7``) is not
    answered by the row around it: pip would find nothing to install."""
    known = published(row.package)
    if known is None or release in known or Version(release.base_version) in known:
        return True
    return any(rec.kind == "pip" and (rec.index_url or rec.find_links) for rec in row.install)


_OS_KIND = {"linux": "l", "windows": "w", "macos": "m"}


def newest_release(package: str, spec: SpecifierSet, os_name: str = "linux") -> Version | None:
    """The release pip picks from PyPI for ``spec`` on this OS: the newest published with a file for it (or a
    pure wheel or sdist), final releases first, yanked ones only when pinned exactly; None where PyPI's list is not
    recorded or no release fits."""
    releases = published(package)
    if releases is None:
        return None
    kind = _OS_KIND.get(os_name, "l")
    pinned = exact_version(spec)
    fits = [
        v
        for v, kinds in releases.items()
        if (kind in kinds or "p" in kinds or "s" in kinds)
        and ("y" not in kinds or pinned is not None)
        and spec.contains(v, prereleases=True)
    ]
    finals = [v for v in fits if not v.is_prerelease]
    chosen = finals or ([v for v in fits if _names_prerelease(spec)] if fits else [])
    return max(chosen) if chosen else None


def _names_prerelease(spec: SpecifierSet) -> bool:
    try:
        return any(Version(s.version.replace(".*", "")).is_prerelease for s in spec)
    except InvalidVersion:
        return False


PostBuilds = Callable[[], dict[int, CudaVersion]]


def read(req: Requirement, target: Target, post_builds: PostBuilds | None = None) -> Artifact:
    """What ``req`` installs on ``target``. ``post_builds``: gives the CUDA build each post number of the package's
    releases names (Paddle's ``.post116`` -> 11.6), from the matrix's recipes; asked only for a post release (it
    builds every row of the package)."""
    name = canonicalize_name(req.name)
    if not marker_applies(req, target):
        return Artifact(req, name, req.specifier, skipped=f"skipped: its marker ({req.marker}) excludes this target")
    if req.url:
        wheel = wheel_requirement(req)
        if wheel is None:
            return Artifact(req, name, req.specifier, unchecked=unnamed_line(req.url) or "not checked: a URL")
        found = read(wheel, target, post_builds)
        return replace(found, requirement=req, build_from=found.build_from or "the wheel's file name")
    spec, cuda, cpu, label = split_local(req.specifier)
    build_from = f"local tag +{label}" if label else ""
    pinned = exact_version(spec)
    release: Version | None = None
    if pinned is not None:
        try:
            release = Version(pinned)
        except InvalidVersion:
            release = None
    if release is not None and release.post is not None and post_builds is not None and not build_from:
        build = post_builds().get(release.post)
        if build is not None:  # Paddle's 2.4.2.post116 is its CUDA 11.6 build of 2.4.2
            cuda, build_from = build, f"post release .post{release.post}"
    if release is None:
        release = newest_release(name, spec, target.os)
    else:  # the release as the index spells it (==2.15 is 2.15.0)
        release = next((v for v in published(name) or () if v == release), release)
    return Artifact(req, name, spec, cuda, cpu, build_from, release)


def with_index(art: Artifact, cuda: CudaVersion | None, cpu: bool, why: str) -> Artifact:
    """The artifact with the build an index line selects, where its requirement named none itself."""
    if art.build_named or not why:
        return art
    return replace(art, cuda=cuda, cpu=cpu, build_from=why)


def parse_line(text: str) -> Requirement | str:
    """A line as ``plan`` or a file gives it: a requirement, or why it names no release to check (raises
    InvalidRequirement for a line that is neither)."""
    why = unnamed_line(text)
    return why if why else parse_requirement(text)
