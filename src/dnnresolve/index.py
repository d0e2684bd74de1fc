"""Does a package index really carry a wheel for this release, Python and platform? (`plan --verify`)

Reads a project page of a simple repository: PEP 691 JSON (``application/vnd.pypi.simple.v1+json``) when
the server offers it, else PEP 503 HTML (PyPI, ``download.pytorch.org/whl/<variant>/<project>/``, private
mirrors); or a flat find-links page of links (``pip install -f URL``). Wheel file names are read with
``packaging.utils.parse_wheel_filename`` and matched against the tags a target Python and platform accept
(``packaging.tags``, the same ordering pip uses). Network or format trouble gives ``None`` and a note,
never an exception.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import PurePosixPath
from urllib.parse import unquote, urljoin, urlsplit

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag, compatible_tags, cpython_tags, mac_platforms
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

from .credentials import redact
from .net import Deadline, HttpStatusError, NetworkError
from .records import field, record

SIMPLE_ACCEPT = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"
JSON_CONTENT_TYPE = "application/vnd.pypi.simple.v1+json"


@record(frozen=True)
class WheelCheck:
    """``exists``: True (a compatible wheel is listed), False (the page says there is none), None (unknown)."""

    exists: bool | None
    note: str
    page: str  # the page read, credentials redacted
    matches: tuple[str, ...] = field(default_factory=tuple)  # compatible wheel file names


@record(frozen=True)
class ListedFile:
    filename: str
    url: str
    yanked: bool = False


def wheel_exists(
    index_url: str,
    project: str,
    version: str,
    python: str | None,
    platform: str | None,
    find_links: bool = False,
) -> bool | None:
    """True / False / None (could not tell): see ``check_wheel`` for the note that explains it."""
    return check_wheel(index_url, project, version, python, platform, find_links).exists


def check_wheel(
    index_url: str,
    project: str,
    version: str,
    python: str | None,
    platform: str | None,
    find_links: bool = False,
    deadline: Deadline | None = None,
) -> WheelCheck:
    """Look for a wheel of ``project==version`` for ``python`` ("3.11" or "cp311") and ``platform``
    ("manylinux_2_17_x86_64", "linux_x86_64", "win_amd64", "macosx_11_0_arm64"); None means any.
    ``index_url`` is a simple-repository root (``.../simple``), or with ``find_links`` a flat page of links.
    ``deadline``: when the request must be over (shared by several checks; default: its own)."""
    name = canonicalize_name(project)
    page = index_url if find_links else index_url.rstrip("/") + "/" + name + "/"
    shown = redact(page)
    try:
        wanted = SpecifierSet("==" + version)
        accepts = TagFilter.for_target(python, platform)
    except (InvalidSpecifier, ValueError) as exc:
        return WheelCheck(None, f"cannot check: {exc}", shown)
    try:
        files = list_files(page, deadline)
    except HttpStatusError as exc:
        if exc.status == 404 and not find_links:
            return WheelCheck(False, f"{project} is not on the index {redact(index_url)} (HTTP 404)", shown)
        return WheelCheck(None, f"could not read the index: {exc}", shown)
    except NetworkError as exc:
        return WheelCheck(None, f"could not read the index: {exc}", shown)
    except ValueError as exc:
        return WheelCheck(None, f"could not read the index page {shown}: {exc}", shown)

    releases: list[tuple[ListedFile, frozenset[Tag]]] = []
    sdists = 0
    for f in files:
        if not f.filename.endswith(".whl"):
            sdists += _is_sdist_of(f.filename, name, wanted)
            continue
        try:
            wheel_name, wheel_version, _, tags = parse_wheel_filename(f.filename)
        except InvalidWheelFilename:
            continue
        if wheel_name == name and wanted.contains(wheel_version, prereleases=True):
            releases.append((f, tags))
    if not releases:
        what = "only a source distribution" if sdists else "no files"
        return WheelCheck(False, f"{shown} lists {what} for {project}=={version}", shown)
    matches = [f for f, tags in releases if any(accepts.accepts(t) for t in tags)]
    if not matches:
        seen = sorted({str(t) for _, tags in releases for t in tags})
        listed = ", ".join(seen[:8]) + (", ..." if len(seen) > 8 else "")
        return WheelCheck(
            False, f"{project}=={version} has wheels, but none for {accepts.describe()} (listed: {listed})", shown
        )
    yanked = [f.filename for f in matches if f.yanked]
    note = f"{len(matches)} wheel(s) for {accepts.describe()}"
    if yanked and len(yanked) == len(matches):
        note += " (all yanked: pip installs them only when pinned with ==)"
    return WheelCheck(True, note, shown, tuple(f.filename for f in matches))


def list_files(page_url: str, deadline: Deadline | None = None) -> list[ListedFile]:
    """The files a simple-repository project page or a find-links page lists."""
    from .net import get

    fetched = get(page_url, accept=SIMPLE_ACCEPT, allow_http=True, deadline=deadline)
    content_type = fetched.content_type.split(";")[0].strip().lower()
    if content_type == JSON_CONTENT_TYPE:
        return _files_from_json(fetched.body)
    return _files_from_html(fetched.body.decode("utf-8", errors="replace"), fetched.url)


def _files_from_json(body: bytes) -> list[ListedFile]:
    try:
        doc = json.loads(body)
        entries = doc["files"]
        return [ListedFile(str(e["filename"]), str(e.get("url", "")), bool(e.get("yanked", False))) for e in entries]
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"not a PEP 691 project page ({exc.__class__.__name__}: {exc})") from None


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.base: str | None = None
        self.anchors: list[tuple[str, bool, list[str]]] = []  # (href, yanked, text parts)
        self._open: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "base" and values.get("href"):
            self.base = values["href"]
        elif tag == "a" and values.get("href"):
            self._open = []
            self.anchors.append((str(values["href"]), "data-yanked" in values, self._open))

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self._open = None

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._open.append(data)


def _files_from_html(text: str, page_url: str) -> list[ListedFile]:
    parser = _Anchors()
    parser.feed(text)
    base = urljoin(page_url, parser.base) if parser.base else page_url
    out = []
    for href, yanked, parts in parser.anchors:
        try:
            url = urljoin(base, href)
            filename = unquote(PurePosixPath(urlsplit(url).path).name) or "".join(parts).strip()
        except ValueError:  # a malformed link is not a file we could install either
            continue
        if filename:
            out.append(ListedFile(filename, url, yanked))
    return out


def _is_sdist_of(filename: str, name: str, wanted: SpecifierSet) -> int:
    m = re.match(r"^(.+)-([^-]+)\.(tar\.gz|zip|tar\.bz2)$", filename)
    if not m or canonicalize_name(m.group(1)) != name:
        return 0
    try:
        return int(wanted.contains(m.group(2), prereleases=True))
    except ValueError:
        return 0


# ------------------------------------------------------------------ tags


@record(frozen=True)
class TagFilter:
    """The wheel tags a target accepts. ``platforms`` None: any platform; ``python`` None: any Python."""

    python: tuple[int, int] | None
    platforms: tuple[str, ...] | None
    label: str
    _keys: frozenset[tuple[str, str, str]] = frozenset()

    @classmethod
    def for_target(cls, python: str | None, platform: str | None) -> TagFilter:
        version = parse_python(python) if python else None
        platforms = tuple(expand_platform(platform)) if platform else None
        keys: set[tuple[str, str, str]] = set()
        if version is not None:
            plats = list(platforms) if platforms else ["*"]
            interpreter = f"cp{version[0]}{version[1]}"
            for t in (*cpython_tags(version, platforms=plats), *compatible_tags(version, interpreter, plats)):
                keys.add((t.interpreter, t.abi, t.platform))
        label = " / ".join(x for x in (f"Python {version[0]}.{version[1]}" if version else "", platform or "") if x)
        return cls(version, platforms, label or "any Python and platform", frozenset(keys))

    def accepts(self, tag: Tag) -> bool:
        if self.platforms is not None and tag.platform != "any" and tag.platform not in self.platforms:
            return False
        if self.python is None:
            return True
        platform = tag.platform if (self.platforms is not None or tag.platform == "any") else "*"
        return (tag.interpreter, tag.abi, platform) in self._keys

    def describe(self) -> str:
        return self.label


def parse_python(text: str) -> tuple[int, int]:
    """ "3.11", "311", "cp311", "py311" -> (3, 11)."""
    s = text.strip().lower()
    m = re.fullmatch(r"(?:cp|py)?(\d)\.?(\d{1,2})", s)
    if not m:
        raise ValueError(f"not a Python version: {text!r} (expected e.g. 3.11 or cp311)")
    return int(m.group(1)), int(m.group(2))


_LEGACY_MANYLINUX = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}


def expand_platform(platform: str) -> list[str]:
    """Every platform tag a machine described by ``platform`` accepts, most specific first.

    manylinux_2_17_x86_64: glibc 2.17 runs manylinux_2_5 .. manylinux_2_17 wheels (and their legacy names
    manylinux1/2010/2014) and plain linux_x86_64 ones (the tag of older download.pytorch.org wheels);
    macosx_11_0_arm64: what ``packaging.tags.mac_platforms`` lists; others: the tag itself."""
    p = platform.strip().lower().replace("-", "_").replace(".", "_")
    for legacy, (major, minor) in _LEGACY_MANYLINUX.items():
        if p.startswith(legacy + "_"):
            p = f"manylinux_{major}_{minor}_" + p[len(legacy) + 1 :]
    m = re.fullmatch(r"manylinux_(\d+)_(\d+)_(\w+)", p)
    if m:
        major, minor, arch = int(m.group(1)), int(m.group(2)), m.group(3)
        out = []
        for glibc_minor in range(minor, -1, -1):
            out.append(f"manylinux_{major}_{glibc_minor}_{arch}")
            for legacy, version in _LEGACY_MANYLINUX.items():
                if version == (major, glibc_minor):
                    out.append(f"{legacy}_{arch}")
        return [*out, f"linux_{arch}"]
    m = re.fullmatch(r"musllinux_(\d+)_(\d+)_(\w+)", p)
    if m:
        major, minor, arch = int(m.group(1)), int(m.group(2)), m.group(3)
        return [*(f"musllinux_{major}_{n}_{arch}" for n in range(minor, -1, -1)), f"linux_{arch}"]
    m = re.fullmatch(r"macosx_(\d+)_(\d+)_(\w+)", p)
    if m:
        return list(mac_platforms((int(m.group(1)), int(m.group(2))), m.group(3)))
    if not re.fullmatch(r"[a-z0-9_]+", p):
        raise ValueError(f"not a platform tag: {platform!r} (expected e.g. manylinux_2_17_x86_64 or win_amd64)")
    return [p]
