"""A TOML file that every run of a command reads (the error catalog) kept parsed, in ``marshal`` format.

``explain`` paid for importing a TOML parser and parsing 40 kB on every start. The parsed document is
cached beside the matrix cache (``<user cache>/parsed/``), keyed like it by the file's identity (path, size,
modification time, inode), the dnnresolve version and the Python version, and only after the document
passed validation. ``DNNRESOLVE_NO_MATRIX_CACHE=1`` turns it off as well. A cache that cannot be read or
written is ignored: the file is then parsed as before.
"""

from __future__ import annotations

import marshal
import os
import sys
from pathlib import Path
from typing import Any

from . import __version__
from .matrix_cache import NO_CACHE_ENV, file_key, user_cache_dir

__all__ = ["read_document", "write_document"]

_MAGIC = b"DNRD"


def _cache_path(name: str, key: str) -> Path:
    tag = f"{sys.implementation.cache_tag}-{__version__}"
    return user_cache_dir() / "parsed" / f"{name}-{key[:48]}-{tag}.marshal"


def read_document(name: str, source: Path) -> dict[str, Any] | None:
    """The parsed document cached for ``source`` as it is now, or None."""
    if os.environ.get(NO_CACHE_ENV) == "1":
        return None
    key = file_key(source)
    if key is None:
        return None
    try:
        data = _cache_path(name, key).read_bytes()
        if data[:4] != _MAGIC:
            return None
        stored_key, doc = marshal.loads(data[4:])
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return doc if stored_key == key and isinstance(doc, dict) else None


def write_document(name: str, source: Path, doc: dict[str, Any]) -> None:
    """Cache ``doc``, the validated parse of ``source``, atomically; errors are swallowed."""
    if os.environ.get(NO_CACHE_ENV) == "1":
        return
    key = file_key(source)
    if key is None:
        return
    try:
        blob = _MAGIC + marshal.dumps((key, doc))
        path = _cache_path(name, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_bytes(blob)
            os.replace(tmp, path)
        finally:
            if tmp.exists():
                tmp.unlink()
        for old in path.parent.glob(f"{name}-*.marshal"):
            if old != path and old.stat().st_mtime < path.stat().st_mtime - 86400 * 30:
                old.unlink()  # an entry for a file or version not seen for a month
    except (OSError, ValueError):
        return
