"""What an answer was read from: the files, directories and programs a command consulted, each kept with a
signature that changes when the thing does.

The answer cache (``answer_cache.py``) replays a command's output only while every signature taken during
the run that produced it still holds. So whatever decides an answer is read through here: detection's
``ProbeContext``, the matrix and catalog loaders. Nothing is kept unless ``begin()`` was called (the command
line's launcher does); otherwise each call is a plain ``os.stat``.

Signatures, by kind:

- ``s``: ``os.stat`` (links followed): type and mode, inode, device, size, modification and change times; or
  None when absent. A directory's times change when an entry is added, removed or renamed in it.
- ``l``: the same from ``os.lstat`` (a symbolic link itself, as ``realpath`` and a glob's literal parts see it).
- ``c``: the bytes of a kernel file under /proc or /sys (its times say nothing about its content).
- ``d``: the sorted names in a kernel directory.

Depends on the standard library only: the launcher imports it before anything else.
"""

from __future__ import annotations

import os
import stat as _stat
import time

TYPE_CHECKING = False  # typing itself costs the launcher milliseconds; mypy reads this block
if TYPE_CHECKING:
    from typing import Union

    Signature = Union[tuple[int, ...], bytes, tuple[str, ...], None]

_KERNEL = ("/proc/", "/sys/")
_CONTENT_LIMIT = 1 << 16
# A file changed within this many seconds of the recording may change again within the same tick of the
# file system's clock and keep its times ("racily clean", as git calls it): such an answer is not kept.
RACY_NS = 2_000_000_000


class Recording:
    """Everything one command consulted, in the order first seen."""

    def __init__(self) -> None:
        self.deps: dict[tuple[str, str], Signature] = {}
        self.problems: list[str] = []
        self.until: float = float("inf")
        self.cacheable = False  # the command said its answer depends only on what is recorded

    def add(self, kind: str, path: str, sig: Signature) -> None:
        self.deps.setdefault((kind, path), sig)


_current: Recording | None = None


def begin() -> None:
    global _current
    _current = Recording()


def finish() -> Recording | None:
    """The recording since ``begin()``, and stop recording."""
    global _current
    rec, _current = _current, None
    return rec


def recording() -> bool:
    return _current is not None


def cacheable() -> None:
    """The running command's answer depends only on its arguments, its environment and what is recorded."""
    if _current is not None:
        _current.cacheable = True


def keeping() -> bool:
    """Whether the running command has said its answer may be kept (``cacheable``)."""
    return _current is not None and _current.cacheable


def forbid(reason: str) -> None:
    """This run's answer must not be replayed (a program timed out, the input came from standard input)."""
    if _current is not None:
        _current.problems.append(reason)


def valid_until(when: float) -> None:
    """The answer holds until ``when`` (seconds since the epoch) at most: text that names an age, say."""
    if _current is not None:
        _current.until = min(_current.until, when)


def is_kernel(path: str) -> bool:
    """A file of the kernel's (/proc, /sys): known by its content, not its times."""
    return path.startswith(_KERNEL)


def _stat_signature(st: os.stat_result | None) -> tuple[int, ...] | None:
    if st is None:
        return None
    return (st.st_mode, st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def stat(path: str) -> os.stat_result | None:
    """``os.stat(path)``, None when it fails; recorded."""
    return _recorded("s", path)


def lstat(path: str) -> os.stat_result | None:
    """``os.lstat(path)``, None when it fails; recorded."""
    return _recorded("l", path)


def _recorded(kind: str, path: str) -> os.stat_result | None:
    try:
        st: os.stat_result | None = os.lstat(path) if kind == "l" else os.stat(path)
    except (OSError, ValueError):
        st = None
    if _current is not None:
        _record_stat(kind, path, st)
    return st


def _record_stat(kind: str, path: str, st: os.stat_result | None) -> None:
    assert _current is not None
    if is_kernel(path) and st is not None:
        if _stat.S_ISDIR(st.st_mode):
            _current.add("d", path, signature("d", path))
            return
        if _stat.S_ISREG(st.st_mode):
            _current.add("c", path, signature("c", path))
            return
    _current.add(kind, path, _stat_signature(st))


def watch(path: str) -> None:
    """Record ``path`` as something the answer depends on (as it is now, absent included)."""
    if _current is not None:
        stat(path)


def signature(kind: str, path: str) -> Signature:
    """The signature of ``path`` now, by kind (see the module's docstring)."""
    try:
        if kind == "s":
            return _stat_signature(os.stat(path))
        if kind == "l":
            return _stat_signature(os.lstat(path))
        if kind == "c":
            with open(path, "rb") as f:
                return f.read(_CONTENT_LIMIT)
        if kind == "d":
            return tuple(sorted(os.listdir(path)))
    except (OSError, ValueError):
        return None
    raise ValueError(f"unknown signature kind {kind!r}")


def racy(rec: Recording, now_ns: int | None = None) -> str | None:
    """The first file of ``rec`` changed too recently to trust its times, or None."""
    limit = (time.time_ns() if now_ns is None else now_ns) - RACY_NS
    for (kind, path), sig in rec.deps.items():
        times = sig[4:6] if kind in ("s", "l") and isinstance(sig, tuple) else ()
        if any(isinstance(t, int) and t > limit for t in times):
            return path
    return None
