"""Where dnnresolve keeps files between runs, and the only way it reads and writes them there.

The directory is ``$DNNRESOLVE_CACHE_DIR``, else the platform's user cache directory (on Linux
``$XDG_CACHE_HOME`` or ``~/.cache``, then ``/dnnresolve``, as platformdirs answers). With no usable home (``HOME``
empty or relative) there is no cache, rather than one at the root of the file system.

A cache is input another user must not be able to write, so:

- directories are created 0700; a directory (or entry) that is not owned by this user, or that group or others
  may write, is not used (``--debug`` says why);
- entries are opened with ``O_NOFOLLOW`` and ``O_NONBLOCK`` (a symlink or a FIFO put in place of one is refused,
  never followed or waited on), must be regular files and at most ``max_bytes`` long;
- entries are written to a fresh ``mkstemp`` file (``O_EXCL``, mode 0600) and renamed into place with
  ``os.replace``, so a planted symlink is never written through and a reader never sees half an entry.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys

CACHE_DIR_ENV = "DNNRESOLVE_CACHE_DIR"
MAX_ENTRY = 64 << 20  # the biggest entry: a compiled matrix is a few MB

_debug = False


def set_debug(enabled: bool) -> None:
    """Say under ``--debug`` why a cache directory or entry was not used."""
    global _debug
    _debug = enabled


def debug(message: str) -> None:
    if _debug:
        sys.stderr.write(f"dnnresolve: debug: {message}\n")


def user_cache_path() -> str | None:
    """The cache directory's path (absolute), or None when there is no usable one."""
    env = os.environ.get(CACHE_DIR_ENV)
    if env:
        return os.path.abspath(env)
    if sys.platform.startswith("linux"):
        xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
        if xdg and os.path.isabs(xdg):
            return os.path.join(xdg, "dnnresolve")
        home = os.path.expanduser("~")
        if not home or not os.path.isabs(home) or home == "/":
            debug("no cache: no usable home directory (HOME is empty, relative or /)")
            return None
        return os.path.join(home, ".cache", "dnnresolve")
    import platformdirs

    path = str(platformdirs.user_cache_dir("dnnresolve"))
    return path if os.path.isabs(path) else None


def _owned_privately(st: os.stat_result) -> str:
    """Why a file or directory with this status may not be trusted ("" when it may)."""
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        return f"owned by uid {st.st_uid}, not by this user"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"writable by group or others (mode {stat.S_IMODE(st.st_mode):o})"
    return ""


def directory(*parts: str, create: bool) -> str | None:
    """``<cache>/<parts...>``, checked (and made 0700 when ``create``), or None when it is absent or untrusted."""
    root = user_cache_path()
    if root is None:
        return None
    path = os.path.join(root, *parts)
    if create:
        try:
            _make_private(path)
        except OSError as exc:
            debug(f"cache {path} not used: cannot create it ({exc.strerror or exc})")
            return None
    for each in [root, *(os.path.join(root, *parts[: i + 1]) for i in range(len(parts)))]:
        try:
            st = os.stat(each)
        except OSError:
            return None
        if not stat.S_ISDIR(st.st_mode):
            debug(f"cache {each} not used: not a directory")
            return None
        why = _owned_privately(st)
        if why:
            debug(f"cache {each} not used: {why}")
            return None
    return path


def _make_private(path: str) -> None:
    """``os.makedirs``, every directory it creates made 0700 (``makedirs`` gives its mode to the last one only)."""
    missing = []
    while not os.path.isdir(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    for each in reversed(missing):
        try:
            os.mkdir(each, 0o700)
        except FileExistsError:
            if not os.path.isdir(each):
                raise


def read_entry(path: str | os.PathLike[str], max_bytes: int = MAX_ENTRY) -> bytes | None:
    """An entry's bytes, or None when it is absent, not a regular file of this user's that only they may write,
    bigger than ``max_bytes``, or unreadable. A symlink in its place is not followed."""
    from .readfile import open_regular, read_fd

    try:
        fd, st = open_regular(path, nofollow=True)
    except FileNotFoundError:
        return None
    except OSError as exc:  # ELOOP: a symlink in its place; NotRegular: a FIFO...
        debug(f"cache entry {path} not used: {exc.strerror or exc}")
        return None
    try:
        why = _owned_privately(st) or (f"larger than {max_bytes} bytes" if st.st_size > max_bytes else "")
        if why:
            debug(f"cache entry {path} not used: {why}")
            return None
        data = read_fd(fd, max_bytes + 1)
    except OSError as exc:
        debug(f"cache entry {path} not used: {exc.strerror or exc}")
        return None
    finally:
        os.close(fd)
    return data if len(data) <= max_bytes else None


def write_entry(directory: str | os.PathLike[str], name: str, data: bytes) -> str:
    """Write ``directory/name`` whole: a new private temporary file, renamed over the old entry. Raises OSError."""
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix="-" + name)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        target = os.path.join(directory, name)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target


def remove(path: str | os.PathLike[str]) -> None:
    """Unlink an entry (a symlink itself, never its target); absent or not removable is fine."""
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            os.unlink(path)
    except OSError:
        pass


def prune(directory: str | os.PathLike[str], prefix: str, keep: int, protect: frozenset[str] = frozenset()) -> None:
    """Keep the ``keep`` newest entries whose name starts with ``prefix`` (and any in ``protect``); the rest go.
    Dangling symlinks, FIFOs and other strays under that prefix go too, whatever their age."""
    entries: list[tuple[float, str]] = []
    try:
        with os.scandir(directory) as it:
            for e in it:
                if not e.name.startswith(prefix) or e.name in protect:
                    continue
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):
                    entries.append((st.st_mtime, e.name))
                elif not stat.S_ISDIR(st.st_mode):
                    remove(e.path)
    except OSError:
        return
    entries.sort(reverse=True)
    for _, name in entries[keep:]:
        remove(os.path.join(directory, name))
