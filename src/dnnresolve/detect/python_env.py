"""The target Python: version, implementation, platform, glibc, and what is installed in it.

The target interpreter is the active virtual environment's (``VIRTUAL_ENV``), else the active conda
env's (``CONDA_PREFIX``), else ``python3`` / ``python`` on PATH. It is asked, with a timeout, for its
facts and its site-packages directories; the packages themselves are read from their metadata with
``importlib.metadata`` (never imported). Under ``--root`` nothing runs: the site-packages directories
are found by their layout and the version comes from ``pyvenv.cfg`` or the ``pythonX.Y`` directory name.
"""

from __future__ import annotations

import json
import os
import re
import sys

from ..pkgname import canonicalize_name
from ..records import field, record
from ..versions import PythonVersion, VersionError
from .context import ProbeContext

# Runs in the target interpreter, which may be old: Python 2.7 syntax, standard library only. The C library
# comes from confstr (instant); platform.libc_ver() reads the whole interpreter binary, so only as a fallback.
_FACTS_SCRIPT = (
    "import json, os, platform, sys\n"
    "site = [p for p in sys.path if p.endswith(('site-packages', 'dist-packages'))]\n"
    "try:\n    libc = os.confstr('CS_GNU_LIBC_VERSION').split(' ', 1)\n"
    "except (AttributeError, ValueError, OSError):\n    libc = list(platform.libc_ver())\n"
    "print(json.dumps({'version': platform.python_version(), 'implementation': platform.python_implementation(),"
    " 'machine': platform.machine(), 'libc': libc, 'executable': sys.executable,"
    " 'site': site}))\n"
)
_IMPLEMENTATIONS = {"cpython": "CPython", "pypy": "PyPy", "ironpython": "IronPython", "jython": "Jython"}


@record(frozen=True)
class Distribution:
    name: str  # canonical: "nvidia-cudnn-cu12"
    version: str
    location: str  # the site-packages directory, as a target path
    requires_nvidia: bool = False  # it depends on nvidia-* wheels (torch, tensorflow[and-cuda], jax plugins)


@record
class PythonReport:
    executable: str = ""
    version: PythonVersion | None = None
    version_from: str = ""
    implementation: str = ""
    machine: str = ""
    glibc: str = ""
    site_dirs: list[str] = field(default_factory=list)  # target paths
    distributions: list[Distribution] = field(default_factory=list)

    def find(self, name: str) -> list[Distribution]:
        key = canonicalize_name(name)
        return [d for d in self.distributions if d.name == key]


def interpreter(ctx: ProbeContext) -> str | None:
    for prefix_var in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        prefix = ctx.env.get(prefix_var, "")
        if prefix.startswith("/"):
            for name in ("python", "python3"):
                candidate = os.path.join(prefix, "bin", name)
                if ctx.is_program(candidate):
                    return candidate
    return ctx.which("python3") or ctx.which("python")


def start(ctx: ProbeContext) -> None:
    exe = interpreter(ctx)
    if exe and ctx.run_programs and not _is_this_environment(ctx, exe):
        ctx.start([exe, "-c", _FACTS_SCRIPT])


def probe(ctx: ProbeContext) -> PythonReport:
    report = PythonReport()
    exe = interpreter(ctx)
    if exe and ctx.run_programs and _is_this_environment(ctx, exe):
        _read_facts(ctx, report, exe, _facts_here())
    elif exe and ctx.run_programs:
        result = ctx.run([exe, "-c", _FACTS_SCRIPT])
        if result.ok:
            _read_facts(ctx, report, exe, result.stdout)
        else:
            ctx.note(f"python ({exe}): {result.why_not()}")
    if not report.site_dirs:
        _from_files(ctx, report)
    report.distributions = _distributions(ctx, report.site_dirs)
    return report


def _is_this_environment(ctx: ProbeContext, exe: str) -> bool:
    """Whether ``exe`` is this very interpreter in this very environment (an activated virtual environment
    running dnnresolve): its facts are then read here, without starting it. Only on the real machine."""
    if ctx.root is not None:
        return False
    return _same_file(os.path.dirname(exe), os.path.dirname(sys.executable)) and _same_file(exe, sys.executable)


def _same_file(a: str, b: str) -> bool:
    """``os.path.samefile`` (links followed: another interpreter put in its place is another file), False
    when either is missing."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def _facts_here() -> str:
    """What ``_FACTS_SCRIPT`` prints, for the running interpreter."""
    try:
        libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (AttributeError, ValueError, OSError):
        libc = ""
    impl = sys.implementation.name
    facts = {
        "version": sys.version.split()[0],  # what platform.python_version() reads: "3.13.0rc1"
        "implementation": _IMPLEMENTATIONS.get(impl, impl),
        "machine": os.uname().machine if hasattr(os, "uname") else "",
        "libc": libc.split(" ", 1) if libc else [],
        "executable": sys.executable,
        "site": [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))],
    }
    return json.dumps(facts)


def _read_facts(ctx: ProbeContext, report: PythonReport, exe: str, stdout: str) -> None:
    try:
        facts = json.loads(stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        ctx.note(f"python ({exe}): unreadable answer")
        return
    report.executable = str(facts.get("executable") or exe)
    try:
        report.version = PythonVersion.parse(str(facts.get("version", "")))
        report.version_from = exe
    except VersionError:
        ctx.note(f"python ({exe}): unreadable version {facts.get('version')!r}")
    report.implementation = str(facts.get("implementation", ""))
    report.machine = str(facts.get("machine", ""))
    libc = facts.get("libc") or []
    if len(libc) == 2 and libc[0] == "glibc":
        report.glibc = str(libc[1])
    report.site_dirs = [str(p) for p in facts.get("site", []) if isinstance(p, str) and ctx.is_dir(p)]


def _from_files(ctx: ProbeContext, report: PythonReport) -> None:
    prefixes = [p for p in (ctx.env.get("VIRTUAL_ENV", ""), ctx.env.get("CONDA_PREFIX", "")) if p.startswith("/")]
    for prefix in prefixes:
        dirs = ctx.glob(f"{prefix}/lib/python*/site-packages")
        if dirs:
            report.site_dirs = dirs
            report.executable = report.executable or f"{prefix}/bin/python"
            _version_from_layout(ctx, report, prefix, dirs[-1])
            break
    if not report.site_dirs:
        dirs = [
            *ctx.glob("/usr/local/lib/python3*/dist-packages"),
            *ctx.glob("/usr/local/lib/python3*/site-packages"),
            *ctx.glob("/usr/lib/python3/dist-packages"),
            *ctx.glob("/usr/lib/python3*/site-packages"),
            *ctx.glob("/usr/lib64/python3*/site-packages"),
        ]
        report.site_dirs = dirs
        if dirs and report.version is None:
            _version_from_layout(ctx, report, "", dirs[0])
    if report.site_dirs and not report.glibc:
        libc = ctx.glob("/lib*/libc-*.so") + ctx.glob("/lib/*-linux-gnu/libc-*.so")
        m = re.search(r"libc-(\d+\.\d+)\.so$", libc[0]) if libc else None
        if m:
            report.glibc = m.group(1)


def _version_from_layout(ctx: ProbeContext, report: PythonReport, prefix: str, site_dir: str) -> None:
    if report.version is not None:
        return
    if prefix:
        for record in ctx.glob(f"{prefix}/conda-meta/python-3*.json"):
            m = re.search(r"/python-(\d+\.\d+\.\d+)-", record)
            if m:
                report.version = PythonVersion.parse(m.group(1))
                report.version_from = record
                return
        cfg = ctx.read_text(f"{prefix}/pyvenv.cfg") or ""
        m = re.search(r"^\s*version(?:_info)?\s*=\s*(\d+\.\d+(?:\.\d+)?)", cfg, re.MULTILINE)
        if m:
            report.version = PythonVersion.parse(m.group(1))
            report.version_from = f"{prefix}/pyvenv.cfg"
            return
    m = re.search(r"/python(\d\.\d+)/", site_dir + "/")
    if m:
        report.version = PythonVersion.parse(m.group(1))
        report.version_from = site_dir


def metadata_dir(entry: str) -> tuple[str, str] | None:
    """(canonical name, version) of a ``NAME-VERSION.dist-info`` (or ``.egg-info``) directory's name."""
    m = _META_DIR.match(entry)
    return (canonicalize_name(m.group("name")), m.group("version")) if m else None


_META_DIR = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._]*?)-(?P<version>[0-9][^-]*?)(?:-py\d[\d.]*)?\.(?:dist|egg)-info$"
)
_NVIDIA_REQUIRES = re.compile(r"^Requires-Dist:\s*nvidia[-_.]", re.MULTILINE | re.IGNORECASE)
_METADATA_LIMIT = 1 << 20


def _distributions(ctx: ProbeContext, site_dirs: list[str]) -> list[Distribution]:
    """Installed distributions from their metadata directories' names (``torch-2.1.0+cu118.dist-info``), as
    PEP 376 and the wheel spec name them; only the METADATA text is searched for nvidia-* requirements, so a
    site-packages of hundreds of packages is read in milliseconds, not parsed as e-mail."""
    found: dict[str, Distribution] = {}
    for site in site_dirs:
        host = ctx.host(site)
        try:
            entries = sorted(os.listdir(host))
        except OSError as exc:
            ctx.note(f"{site}: {exc}")
            continue
        for entry in entries:
            named = metadata_dir(entry)
            if named is None:
                continue
            key, version = named
            if key in found:  # the first on sys.path wins, as at import
                continue
            meta = os.path.join(host, entry, "METADATA" if entry.endswith(".dist-info") else "PKG-INFO")
            found[key] = Distribution(key, version, site, _requires_nvidia_text(meta))
    return sorted(found.values(), key=lambda d: d.name)


def _requires_nvidia_text(path: str) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read(_METADATA_LIMIT)
    except OSError:
        return False
    head = text.split("\n\n", 1)[0]  # the headers; the long description follows the first blank line
    return _NVIDIA_REQUIRES.search(head) is not None
