"""Which compatibility matrix a command uses: an explicit file, a cached update, or the packaged one.

The cache (written by ``dnnresolve update``) lives in the user cache directory (``cachedir``: private, checked,
never followed through a symlink). It holds ``matrix-<sha>.toml``, its compiled form (``compiled``) and
``matrix.json``: url, sha256, fetched_at, the file's name, and the content keys of the file and of the packaged
matrix at fetch time. Replacing ``matrix.json`` is the one step that commits an update, so a crash never leaves a
half-written cache in use.

Rule: ``--matrix FILE`` (or ``$DNNRESOLVE_MATRIX``) wins; ``--offline`` means the packaged matrix; otherwise a
valid cache wins. Valid: the metadata parses, the file's content is what was fetched, the file passes the
schema, and the packaged matrix is the same one as when the cache was fetched (after an upgrade of dnnresolve
the packaged matrix may be the newer one, so the cache is set aside until the next ``update``).
"""

from __future__ import annotations

import json
import os

from . import __version__, cachedir
from .errors import MatrixError, UserError
from .matrix import MATRIX_ENV, MATRIX_MAX_BYTES, keyed_bytes, packaged_identity, packaged_matrix_file
from .records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

META_NAME = "matrix.json"
META_MAX_BYTES = 1 << 20


def cache_dir(create: bool = False) -> str | None:
    """The user cache directory, checked (see ``cachedir``); None when there is no usable one."""
    return cachedir.directory(create=create)


def sha256_bytes(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | os.PathLike[str]) -> str:
    with open(path, "rb") as f:
        return sha256_bytes(f.read())


@record(frozen=True)
class CachedMatrix:
    path: str
    url: str
    sha256: str
    fetched_at: datetime
    packaged_sha256: str
    source_key: str = ""  # the file's content key (``compiled.source_key``) when it was fetched
    packaged_key: str = ""  # the packaged matrix's content key then

    def age_days(self, now: datetime | None = None) -> float:
        from datetime import datetime, timezone

        now = now or datetime.now(timezone.utc)
        return max(0.0, (now - self.fetched_at).total_seconds() / 86400)


@record(frozen=True)
class MatrixSource:
    """The matrix a command reads, and how to describe it to the user."""

    path: str
    origin: str  # "packaged" | "cache" | "file"
    description: str
    age_days: float | None = None  # days since the cached copy was fetched; None for other origins
    url: str | None = None
    note: str = ""  # why a cached update was set aside, if it was

    def record(self) -> dict[str, Any]:
        """For JSON output: ``"matrix": {...}``."""
        return {
            "path": str(self.path),
            "origin": self.origin,
            "age_days": None if self.age_days is None else round(self.age_days, 1),
            "url": self.url,
            "note": self.note or None,
        }


def read_cache(directory: str | os.PathLike[str] | None = None) -> tuple[CachedMatrix | None, str]:
    """The cached matrix if there is a usable one, else (None, why not; "" when there is no cache)."""
    directory = os.fspath(directory) if directory is not None else cache_dir()
    if directory is None:
        return None, ""
    meta_path = os.path.join(directory, META_NAME)
    if not os.path.lexists(meta_path):
        return None, ""
    raw = cachedir.read_entry(meta_path, META_MAX_BYTES)
    if raw is None:
        return None, f"cached update ignored: {meta_path} is not a private file of this user's (--debug says why)"
    try:
        meta = json.loads(raw.decode("utf-8"))
        entry = CachedMatrix(
            path=os.path.join(directory, os.path.basename(str(meta["file"]))),
            url=str(meta["url"]),
            sha256=str(meta["sha256"]).lower(),
            fetched_at=_parse_time(str(meta["fetched_at"])),
            packaged_sha256=str(meta.get("packaged_sha256", "")),
            source_key=str(meta.get("source_key") or ""),
            packaged_key=str(meta.get("packaged_key") or ""),
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return None, f"cached update ignored: unreadable {meta_path} ({exc})"
    data = cachedir.read_entry(entry.path, MATRIX_MAX_BYTES)
    if data is None:
        return None, f"cached update ignored: {entry.path} is missing or not a private file of this user's"
    if not entry.source_key or keyed_bytes(entry.path, data)[1] != entry.source_key:
        return None, f"cached update ignored: {entry.path} does not match its recorded sha256 (it changed since)"
    from .matrix import load_matrix

    try:
        load_matrix(entry.path, data)
    except MatrixError as exc:
        return None, f"cached update ignored: {exc}"
    return entry, ""


def write_cache(
    data: bytes,
    url: str,
    fetched_at: datetime,
    packaged_sha256: str,
    directory: str | os.PathLike[str] | None = None,
) -> CachedMatrix:
    """Store an already verified matrix and its compiled form. Each file is written whole under a temporary
    name and renamed into place; the metadata last."""
    from . import compiled
    from .matrix.parse import compile_matrix

    directory = os.fspath(directory) if directory is not None else cache_dir(create=True)
    if directory is None:
        raise UserError("cannot write the matrix cache: no private cache directory (run with --debug for why)")
    sha = sha256_bytes(data)
    name = f"matrix-{sha[:16]}.toml"
    key = compiled.source_key(data)
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        target = cachedir.write_entry(directory, name, data)
        compiled.store("matrix", key, *compile_matrix(data, str(target)))
        meta = {
            "url": url,
            "sha256": sha,
            "fetched_at": fetched_at.astimezone(_utc()).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "file": name,
            "packaged_sha256": packaged_sha256,
            "dnnresolve": __version__,
            "source_key": key,
            "packaged_key": packaged_identity()[0],
        }
        cachedir.write_entry(directory, META_NAME, (json.dumps(meta, indent=2) + "\n").encode("utf-8"))
    except OSError as exc:
        raise UserError(f"cannot write the matrix cache: {exc}", str(directory)) from exc
    _remove_stale(directory, keep=name)
    return CachedMatrix(os.path.join(directory, name), url, sha, fetched_at, packaged_sha256, key)


def clear_cache(directory: str | os.PathLike[str] | None = None) -> bool:
    """Remove a cached update (metadata first, so a crash halfway leaves no cache in use). True if one existed."""
    directory = os.fspath(directory) if directory is not None else cache_dir()
    if directory is None:
        return False
    meta = os.path.join(directory, META_NAME)
    existed = os.path.lexists(meta)
    cachedir.remove(meta)
    _remove_stale(directory, keep=None)
    return existed


def resolve_source(offline: bool, explicit: str | None, now: datetime | None = None) -> MatrixSource:
    """The matrix to use, per the rule in this module's docstring."""
    if explicit:
        return MatrixSource(explicit, "file", f"file {explicit} (--matrix)")
    env = os.environ.get(MATRIX_ENV)
    if env:
        return MatrixSource(env, "file", f"file {env} (${MATRIX_ENV})")
    packaged = packaged_matrix_file()
    packaged_desc = f"packaged with dnnresolve {__version__}"
    if offline:
        return MatrixSource(packaged, "packaged", packaged_desc + " (--offline)")
    entry, problem = read_cache()
    if entry is not None:
        try:
            packaged_key = packaged_identity()[0]
        except MatrixError:
            packaged_key = ""
        if entry.packaged_key and packaged_key and entry.packaged_key != packaged_key:
            problem = (
                "cached update ignored: dnnresolve's packaged matrix changed since it was fetched "
                "(run 'dnnresolve update' to refresh it)"
            )
        elif entry.source_key == packaged_key:
            return MatrixSource(packaged, "packaged", packaged_desc)
        else:
            age = entry.age_days(now)
            desc = f"cached update from {entry.url}, fetched {entry.fetched_at:%Y-%m-%d} ({_age_words(age)})"
            return MatrixSource(entry.path, "cache", desc, age_days=age, url=entry.url)
    return MatrixSource(packaged, "packaged", packaged_desc, note=problem)


def choose_matrix(offline: bool, explicit: str | None) -> tuple[str, str]:
    """(path, description) of the newest valid matrix: see ``resolve_source``."""
    source = resolve_source(offline, explicit)
    return source.path, source.description


def _age_words(days: float) -> str:
    if days < 1:
        return "today"
    n = int(days)
    return f"{n} day{'s' if n != 1 else ''} ago"


def _parse_time(text: str) -> datetime:
    from datetime import datetime

    value = datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")
    return value.replace(tzinfo=_utc())


def _utc() -> Any:
    from datetime import timezone

    return timezone.utc


def _remove_stale(directory: str, keep: str | None) -> None:
    cachedir.prune(directory, "matrix-", 0, protect=frozenset({keep} if keep else ()))
