"""A cache of the validated matrix, so that a command does not parse and validate 500 kB of TOML each time.

The cache file is keyed by the matrix file's identity (its path, size, modification time in nanoseconds and
inode, the way Python keys its own bytecode caches, so that a start-up need not read and hash the file),
the dnnresolve version and the Python version. It holds the rows that passed validation as plain dicts in
``marshal`` format, split per table and per framework package, so that a command unmarshals only what it
asks for. It lives in ``<user cache>/parsed/`` (``$DNNRESOLVE_CACHE_DIR`` when set). Failing to read or write
it never fails a command: the matrix is then parsed from its TOML as before.
"""

from __future__ import annotations

import marshal
import os
import sys
from pathlib import Path
from typing import Any

from . import __version__
from .cachedir import user_cache_path
from .errors import UserError

NO_CACHE_ENV = "DNNRESOLVE_NO_MATRIX_CACHE"  # "1": always parse the TOML (benchmarks, debugging)
FORMAT = 4


def user_cache_dir() -> Path:
    """Where dnnresolve caches files (see ``cachedir``)."""
    return Path(user_cache_path())


def file_digest(data: bytes) -> str:
    from hashlib import sha256

    return sha256(data).hexdigest()


def file_key(path: Path) -> str | None:
    """The matrix file's identity: a new key whenever the file is replaced or written. None if not a file."""
    import zlib

    try:
        st = os.stat(path)
    except OSError:
        return None
    where = zlib.crc32(os.path.abspath(path).encode("utf-8", "surrogateescape"))
    return f"{where:08x}{st.st_size:x}{st.st_mtime_ns:x}{st.st_ino:x}"


def cache_file(digest: str) -> Path:
    tag = f"{sys.implementation.cache_tag}-{__version__}-f{FORMAT}"
    return user_cache_dir() / "parsed" / f"matrix-{digest[:48]}-{tag}.marshal"


_MAGIC = b"DNRM"


class CachedRows:
    """A cache file's index (package names, GPU name keys, where each blob lies) read at once; each table's
    or package's rows (a ``marshal`` blob) read from the file only when a query first needs them."""

    def __init__(self, path: Path, header: dict[str, Any], start: int) -> None:
        self.path = path
        self.names: list[str] = header["names"]
        self.gpu_keys: dict[str, int] = header["gpu_keys"]
        self._index: dict[str, tuple[int, int]] = header["index"]
        self._start = start

    def _blob(self, key: str) -> bytes | None:
        where = self._index.get(key)
        if where is None:
            return None
        with open(self.path, "rb") as f:
            f.seek(self._start + where[0])
            blob = f.read(where[1])
        if len(blob) != where[1]:
            raise OSError(f"{self.path}: cut short")
        return blob

    def table(self, table: str) -> bytes:
        blob = self._blob(f"tables/{table}")
        if blob is None:
            raise OSError(f"{self.path}: no table {table}")
        return blob

    def package(self, table: str, name: str) -> bytes | None:
        return self._blob(f"packages/{table}/{name}")


def read(digest: str) -> CachedRows | None:
    """The cached rows for the matrix file whose ``file_key`` is ``digest``, or None."""
    if os.environ.get(NO_CACHE_ENV) == "1":
        return None
    path = cache_file(digest)
    try:
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) != 8 or head[:4] != _MAGIC:
                return None
            size = int.from_bytes(head[4:], "little")
            header = marshal.loads(f.read(size))
    except (OSError, EOFError, ValueError, TypeError, UserError):
        return None
    if not isinstance(header, dict) or header.get("digest") != digest:
        return None
    try:
        return CachedRows(path, header, 8 + size)
    except (KeyError, TypeError):
        return None


def write(digest: str, data: dict[str, Any]) -> None:
    """Store ``data`` (names, gpu_keys, and marshal blobs by table and by package) atomically; errors are
    swallowed."""
    if os.environ.get(NO_CACHE_ENV) == "1":
        return
    blobs: list[bytes] = []
    index: dict[str, tuple[int, int]] = {}
    offset = 0
    items = [(f"tables/{t}", b) for t, b in data["tables"].items()]
    items += [(f"packages/{t}/{n}", b) for t, d in data["packages"].items() for n, b in d.items()]
    for key, blob in items:
        index[key] = (offset, len(blob))
        blobs.append(blob)
        offset += len(blob)
    header = marshal.dumps({"digest": digest, "names": data["names"], "gpu_keys": data["gpu_keys"], "index": index})
    try:
        path = cache_file(digest)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            with open(tmp, "wb") as f:
                f.write(_MAGIC + len(header).to_bytes(4, "little") + header)
                f.writelines(blobs)
            os.replace(tmp, path)
        finally:
            if tmp.exists():
                tmp.unlink()
        for old in path.parent.glob("matrix-*.marshal"):
            if old != path and old.stat().st_mtime < path.stat().st_mtime - 86400 * 30:
                old.unlink()  # a stale entry for a matrix or version not seen for a month
    except (OSError, ValueError, UserError):
        return
