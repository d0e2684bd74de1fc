"""Which copy of a shared library the dynamic linker would load first.

For a program without an RPATH, ld.so looks for a soname (``libcudnn.so.5``) in the ``LD_LIBRARY_PATH``
directories in order, then in the ldconfig cache (``/etc/ld.so.cache``), then in the default directories.
The cache is read as the file it is (glibc's format, ``parse_ld_cache``; the tests hold it equal to what
``ldconfig -p`` prints for caches this machine's ldconfig writes in each of its formats); a cache in a format
this reader does not know is listed by ``ldconfig -p`` instead (under ``--root DIR``, this machine's
``ldconfig -p -C DIR/etc/ld.so.cache``: ldconfig only reads the file; its paths are the copy's).
Frameworks that carry an RPATH to their own pip-installed libraries (torch with nvidia-* wheels) load
those instead, whatever this says.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from ..records import field, record
from .context import ProbeContext, ProgramResult

LD_CACHE = "/etc/ld.so.cache"
DEFAULT_DIRS = ("/lib64", "/usr/lib64", "/lib", "/usr/lib")
_CACHE_LINE = r"^\s*(\S+)\s+\(([^)]*)\)\s+=>\s+(\S+)\s*$"  # `ldconfig -p`: read only without the cache file


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
    """Start ``ldconfig -p`` early, only where the cache file cannot be read here."""
    if _readable(ctx.read_bytes(LD_CACHE, limit=len(_NEW) + _OLD_HEADER + 16)):
        return
    cmd = _ldconfig_argv(ctx)
    if cmd and cmd[1]:
        ctx.start(cmd[0])


def read_ld_cache(ctx: ProbeContext) -> LdCache:
    data = ctx.read_bytes(LD_CACHE, limit=MAX_CACHE)
    if data is not None:
        cache = parse_ld_cache(data, source=LD_CACHE)
        if cache is not None:
            return cache
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
    line = re.compile(_CACHE_LINE)
    found = (m.groups() for m in map(line.match, text.splitlines()) if m)
    return _ordered(((soname, path, "64" in flags) for soname, flags, path in found), source)


def _ordered(entries: Iterable[tuple[str, str, bool]], source: str) -> LdCache:
    """(soname, path, 64-bit) in the cache's order, as ld.so of a 64-bit program takes them: its own entries
    first (it skips the 32-bit ones), each path once."""
    wide: dict[str, list[str]] = {}
    narrow: dict[str, list[str]] = {}
    for soname, path, is_wide in entries:
        bucket = wide if is_wide else narrow
        if path not in bucket.setdefault(soname, []):
            bucket[soname].append(path)
    cache = LdCache(source=source)
    for soname in [*wide, *(n for n in narrow if n not in wide)]:
        cache.entries[soname] = [*wide.get(soname, []), *narrow.get(soname, [])]
    return cache


# glibc's cache (elf/dl-cache.h): an optional old-format part ("ld.so-1.7.0", a count, 12-byte entries), then the
# new format: "glibc-ld.so.cache" "1.1", nlibs, len_strings, a flags byte (2: little-endian, 3: big), 24-byte
# entries (flags, key, value, osversion, hwcap) and their strings, offsets counted from the new header.
_OLD = b"ld.so-1.7.0"
_OLD_HEADER = 16
_NEW = b"glibc-ld.so.cache1.1"
_NEW_HEADER = 48
MAX_CACHE = 64 << 20
# The FLAG_REQUIRED_MASK values `ldconfig -p` names with a "64" (x86-64, AArch64, 64bit, IA-64, N64): ld.so of a
# 64-bit program reads these and skips the others.
_WIDE = frozenset({0x0100, 0x0200, 0x0300, 0x0400, 0x0500, 0x0700, 0x0A00, 0x0E00})


def _new_part(data: bytes) -> int | None:
    """Where the new-format header starts, or None for a file that has none."""
    if data.startswith(_NEW):
        return 0
    if data.startswith(_OLD) and len(data) >= _OLD_HEADER:
        nlibs = int.from_bytes(data[12:16], "little")
        start = (_OLD_HEADER + nlibs * 12 + 7) & ~7
        return start if data.startswith(_NEW, start) else None
    return None


def _readable(head: bytes | None) -> bool:
    return bool(head) and (head or b"").startswith((_NEW, _OLD))


def parse_ld_cache(data: bytes, source: str = "") -> LdCache | None:
    """The soname -> paths of a glibc ``ld.so.cache``, 64-bit entries first (as ``parse_ldconfig`` reads
    ``ldconfig -p``); None when ``data`` is not a cache in a format this reader knows."""
    import struct

    start = _new_part(data)
    if start is None or len(data) < start + _NEW_HEADER:
        return None
    order = ">" if data[start + 28] == 3 else "<"
    nlibs, _ = struct.unpack_from(order + "II", data, start + 20)
    if start + _NEW_HEADER + nlibs * 24 > len(data):
        return None

    def text(offset: int) -> str | None:
        at = start + offset
        end = data.find(b"\0", at)
        return data[at:end].decode("utf-8", "surrogateescape") if 0 <= at < len(data) and end > 0 else None

    entries = []
    for flags, key, value, _, _ in struct.iter_unpack(
        order + "iIIIQ", data[start + _NEW_HEADER : start + _NEW_HEADER + nlibs * 24]
    ):
        soname, path = text(key), text(value)
        if not soname or not path:
            return None
        entries.append((soname, path, flags & 0xFF00 in _WIDE))
    return _ordered(entries, source)


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
