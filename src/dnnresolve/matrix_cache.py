"""A cache of the validated matrix, so that a command does not parse and validate 500 kB of TOML each time.

The cache file is keyed by the matrix file's sha256, the dnnresolve version and the Python version, and holds
the rows that passed validation as plain dicts in ``marshal`` format, split per table and per framework
package so that a command unmarshals only what it asks for. It lives in ``<user cache>/parsed/``
(``$DNNRESOLVE_CACHE_DIR`` when set). Failing to read or write it never fails a command: the matrix is then
parsed from its TOML as before.
"""

from __future__ import annotations

import marshal
import os
import sys
from pathlib import Path
from typing import Any

from . import __version__
from .errors import UserError

CACHE_DIR_ENV = "DNNRESOLVE_CACHE_DIR"
NO_CACHE_ENV = "DNNRESOLVE_NO_MATRIX_CACHE"  # "1": always parse the TOML (benchmarks, debugging)
FORMAT = 1


def user_cache_dir() -> Path:
    """Where dnnresolve caches files: $DNNRESOLVE_CACHE_DIR, else the platform's user cache directory.

    On Linux this is what platformdirs answers ($XDG_CACHE_HOME or ~/.cache, then /dnnresolve), computed
    without importing platformdirs, which a start-up cannot afford.
    """
    env = os.environ.get(CACHE_DIR_ENV)
    if env:
        return Path(env)
    if sys.platform.startswith("linux"):
        xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
        base = Path(xdg) if xdg and os.path.isabs(xdg) else Path(os.path.expanduser("~")) / ".cache"
        return base / "dnnresolve"
    import platformdirs

    return Path(platformdirs.user_cache_dir("dnnresolve"))


def file_digest(data: bytes) -> str:
    from hashlib import sha256

    return sha256(data).hexdigest()


def cache_file(digest: str) -> Path:
    tag = f"{sys.implementation.cache_tag}-{__version__}-f{FORMAT}"
    return user_cache_dir() / "parsed" / f"matrix-{digest[:24]}-{tag}.marshal"


def read(digest: str) -> dict[str, Any] | None:
    """The cached rows for the matrix whose bytes hash to ``digest``, or None."""
    if os.environ.get(NO_CACHE_ENV) == "1":
        return None
    try:
        with open(cache_file(digest), "rb") as f:
            data = marshal.load(f)
    except (OSError, EOFError, ValueError, TypeError, UserError):
        return None
    if not isinstance(data, dict) or data.get("digest") != digest:
        return None
    return data


def write(digest: str, data: dict[str, Any]) -> None:
    """Store ``data`` (plain dicts, lists, strings, numbers, bytes) atomically; errors are swallowed."""
    if os.environ.get(NO_CACHE_ENV) == "1":
        return
    try:
        path = cache_file(digest)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            with open(tmp, "wb") as f:
                marshal.dump({**data, "digest": digest}, f)
            os.replace(tmp, path)
        finally:
            if tmp.exists():
                tmp.unlink()
        for old in path.parent.glob("matrix-*.marshal"):
            if old != path and old.stat().st_mtime < path.stat().st_mtime - 86400 * 30:
                old.unlink()  # a stale entry for a matrix or version not seen for a month
    except (OSError, ValueError, UserError):
        return
