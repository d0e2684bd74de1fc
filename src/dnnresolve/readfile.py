"""Bounded reads of files dnnresolve did not write: only a regular file is read (a FIFO, socket or device is refused
as it is opened, with ``O_NONBLOCK``, never waited on), and never more than asked for."""

from __future__ import annotations

import os
import stat


class NotRegular(OSError):
    """The path is a directory, a FIFO, a socket or a device; ``kind`` says which."""

    def __init__(self, kind: str) -> None:
        super().__init__(f"not a regular file (a {kind}); not read")
        self.kind = kind


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "socket" if stat.S_ISSOCK(mode) else "special file"


def open_regular(path: str | os.PathLike[str], nofollow: bool = False) -> tuple[int, os.stat_result]:
    """An open descriptor of the regular file at ``path`` and its status; with ``nofollow`` a symlink in its place
    is refused (ELOOP). Raises OSError (NotRegular for what is not a regular file)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if nofollow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(_kind(st.st_mode))
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def read_fd(fd: int, limit: int) -> bytes:
    """At most ``limit`` bytes from ``fd``, from where it stands."""
    chunks, left = [], limit
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 22))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_regular(path: str | os.PathLike[str], limit: int, nofollow: bool = False) -> bytes:
    """At most ``limit`` bytes of the regular file at ``path`` (ask for one more than allowed to tell a bigger
    file). Raises OSError (NotRegular for what is not a regular file)."""
    fd, _ = open_regular(path, nofollow)
    try:
        return read_fd(fd, limit)
    finally:
        os.close(fd)
