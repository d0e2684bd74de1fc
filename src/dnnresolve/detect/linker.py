"""Which copy of a shared library the dynamic linker would load first.

For a program without an RPATH, ld.so looks for a soname (``libcudnn.so.5``) in the ``LD_LIBRARY_PATH``
directories in order, then in the ldconfig cache (``/etc/ld.so.cache``, read with ``ldconfig -p``), then
in the default directories. Under ``--root DIR`` the copy's cache is read with this machine's
``ldconfig -p -C DIR/etc/ld.so.cache`` (ldconfig only reads the file; its paths are the copy's).
Frameworks that carry an RPATH to their own pip-installed libraries (torch with nvidia-* wheels) load
those instead, whatever this says.
"""

from __future__ import annotations

import os
import re

from ..records import field, record
from .context import ProbeContext, ProgramResult

LD_CACHE = "/etc/ld.so.cache"
DEFAULT_DIRS = ("/lib64", "/usr/lib64", "/lib", "/usr/lib")
_CACHE_LINE = re.compile(r"^\s*(\S+)\s+\(([^)]*)\)\s+=>\s+(\S+)\s*$")


@record
class LdCache:
    entries: dict[str, list[str]] = field(default_factory=dict)  # soname -> paths, 64-bit ones first
    source: str = ""

    def files_named(self, prefix: str) -> list[str]:
        """Every cached path whose soname starts with ``prefix`` (``libcudnn.so.``)."""
        return [p for name, paths in self.entries.items() if name.startswith(prefix) for p in paths]


def _ldconfig_argv(ctx: ProbeContext) -> tuple[list[str], bool] | None:
    """The command that lists the target's cache, and whether it runs as a target program."""
    if ctx.root is None or ctx.run_programs:
        ldconfig = ctx.which("ldconfig", ("/sbin", "/usr/sbin"))
        if ldconfig and ctx.run_programs:
            return [ldconfig, "-p"], True
    if ctx.root is not None and ctx.is_file(LD_CACHE):
        import shutil  # only here: it costs a start-up 3 ms (it imports bz2 and lzma)

        here = shutil.which("ldconfig", path="/sbin:/usr/sbin:/usr/bin:/bin")
        if here:
            return [here, "-p", "-C", ctx.host(LD_CACHE)], False
    return None


def start(ctx: ProbeContext) -> None:
    cmd = _ldconfig_argv(ctx)
    if cmd and cmd[1]:
        ctx.start(cmd[0])


def read_ld_cache(ctx: ProbeContext) -> LdCache:
    cmd = _ldconfig_argv(ctx)
    if cmd is None:
        return LdCache()
    argv, on_target = cmd
    result: ProgramResult = ctx.run(argv) if on_target else ctx.run_here(argv)
    if not result.ok:
        ctx.note(f"ldconfig -p: {result.why_not()}")
        return LdCache()
    return parse_ldconfig(result.stdout, source=f"ldconfig -p ({LD_CACHE})")


def parse_ldconfig(text: str, source: str = "") -> LdCache:
    """``ldconfig -p`` lines: ``\tlibcudnn.so.8 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.8``."""
    wide: dict[str, list[str]] = {}
    narrow: dict[str, list[str]] = {}
    for line in text.splitlines():
        m = _CACHE_LINE.match(line)
        if not m:
            continue
        soname, flags, path = m.groups()
        # 64-bit entries first: a 64-bit program skips the 32-bit ones
        bucket = wide if "64" in flags else narrow
        if path not in bucket.setdefault(soname, []):
            bucket[soname].append(path)
    cache = LdCache(source=source)
    for soname in [*wide, *(n for n in narrow if n not in wide)]:
        cache.entries[soname] = [*wide.get(soname, []), *narrow.get(soname, [])]
    return cache


@record(frozen=True)
class Resolution:
    path: str  # the file ld.so would open (target path, before resolving symlinks)
    how: str  # "LD_LIBRARY_PATH", "ldconfig cache", "default directory"


def resolve(ctx: ProbeContext, soname: str, cache: LdCache) -> Resolution | None:
    for d in ctx.env_paths("LD_LIBRARY_PATH"):
        candidate = os.path.join(d, soname)
        if ctx.exists(candidate):
            return Resolution(candidate, "LD_LIBRARY_PATH")
    for path in cache.entries.get(soname, []):
        return Resolution(path, "ldconfig cache")
    for d in DEFAULT_DIRS:
        candidate = os.path.join(d, soname)
        if ctx.exists(candidate):
            return Resolution(candidate, "default directory")
    return None


def soname_of(filename: str) -> str | None:
    """``libcudnn.so.5.1.10`` -> ``libcudnn.so.5``; ``libcudnn.so`` (no major) -> None."""
    m = re.fullmatch(r"(lib[\w+-]+\.so\.\d+)(?:\.[\d.]+)?", os.path.basename(filename))
    return m.group(1) if m else None
