"""Which compatibility matrix a command uses: an explicit file, a cached update, or the packaged one.

The cache (written by ``dnnresolve update``) lives in ``platformdirs.user_cache_dir("dnnresolve")``, or in
``$DNNRESOLVE_CACHE_DIR``. It holds ``matrix-<sha>.toml`` and ``matrix.json``: url, sha256, fetched_at, the
file's name and the sha256 of the packaged matrix at fetch time. Replacing ``matrix.json`` is the one step
that commits an update, so a crash never leaves a half-written cache in use.

Rule: ``--matrix FILE`` (or ``$DNNRESOLVE_MATRIX``) wins; ``--offline`` means the packaged matrix; otherwise a
valid cache wins. Valid: the metadata parses, the file's sha256 matches it, the file passes the schema, and
the packaged matrix is the same one as when the cache was fetched (after an upgrade of dnnresolve the
packaged matrix may be the newer one, so the cache is set aside until the next ``update``).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import __version__
from .errors import MatrixError, UserError
from .matrix import MATRIX_ENV, packaged_matrix_path
from .records import record

if TYPE_CHECKING:
    from datetime import datetime

META_NAME = "matrix.json"


def cache_dir() -> Path:
    """$DNNRESOLVE_CACHE_DIR, else the user cache directory (``matrix_cache.user_cache_dir``)."""
    from .matrix_cache import user_cache_dir

    return user_cache_dir()


def _file_key(path: Path) -> str:
    from .matrix_cache import file_key

    return file_key(path) or ""


def sha256_bytes(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    return sha256_bytes(path.read_bytes())


@record(frozen=True)
class CachedMatrix:
    path: Path
    url: str
    sha256: str
    fetched_at: datetime
    packaged_sha256: str
    packaged_key: str = ""  # the packaged matrix's file identity when ``packaged_sha256`` was taken

    def age_days(self, now: datetime | None = None) -> float:
        from datetime import datetime, timezone

        now = now or datetime.now(timezone.utc)
        return max(0.0, (now - self.fetched_at).total_seconds() / 86400)


@record(frozen=True)
class MatrixSource:
    """The matrix a command reads, and how to describe it to the user."""

    path: Path
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


def read_cache(directory: Path | None = None) -> tuple[CachedMatrix | None, str]:
    """The cached matrix if there is a usable one, else (None, why not; "" when there is no cache)."""
    directory = directory or cache_dir()
    meta_path = directory / META_NAME
    if not meta_path.exists():
        return None, ""
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        entry = CachedMatrix(
            path=directory / Path(str(meta["file"])).name,
            url=str(meta["url"]),
            sha256=str(meta["sha256"]).lower(),
            fetched_at=_parse_time(str(meta["fetched_at"])),
            packaged_sha256=str(meta.get("packaged_sha256", "")),
            packaged_key=str(meta.get("packaged_key") or ""),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return None, f"cached update ignored: unreadable {meta_path} ({exc})"
    recorded = meta.get("file_key")
    try:
        unchanged = bool(recorded) and recorded == _file_key(entry.path)
        actual = entry.sha256 if unchanged else sha256_file(entry.path)
    except OSError:
        return None, f"cached update ignored: {entry.path} is missing"
    if actual != entry.sha256:
        return None, f"cached update ignored: {entry.path} does not match its recorded sha256"
    from .matrix import load_matrix

    try:
        load_matrix(entry.path)
    except MatrixError as exc:
        return None, f"cached update ignored: {exc}"
    return entry, ""


def write_cache(
    data: bytes, url: str, fetched_at: datetime, packaged_sha256: str, directory: Path | None = None
) -> CachedMatrix:
    """Store an already verified matrix. Each file is written to a temporary name and renamed into place."""
    directory = directory or cache_dir()
    sha = sha256_bytes(data)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        name = f"matrix-{sha[:16]}.toml"
        _atomic_write(directory / name, data)
        meta = {
            "url": url,
            "sha256": sha,
            "fetched_at": fetched_at.astimezone(_utc()).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "file": name,
            "packaged_sha256": packaged_sha256,
            "dnnresolve": __version__,
            # the files' identities when their hashes were known: a start-up need not hash them again
            "file_key": _file_key(directory / name),
            "packaged_key": _file_key(packaged_matrix_path()),
        }
        _atomic_write(directory / META_NAME, (json.dumps(meta, indent=2) + "\n").encode("utf-8"))
    except OSError as exc:
        raise UserError(f"cannot write the matrix cache: {exc}", str(directory)) from exc
    _remove_stale(directory, keep=name)
    return CachedMatrix(directory / name, url, sha, fetched_at, packaged_sha256)


def clear_cache(directory: Path | None = None) -> bool:
    """Remove a cached update (metadata first, so a crash halfway leaves no cache in use). True if one existed."""
    directory = directory or cache_dir()
    meta = directory / META_NAME
    existed = meta.exists()
    with contextlib.suppress(OSError):
        meta.unlink()
    _remove_stale(directory, keep=None)
    return existed


def resolve_source(offline: bool, explicit: str | None, now: datetime | None = None) -> MatrixSource:
    """The matrix to use, per the rule in this module's docstring."""
    if explicit:
        return MatrixSource(Path(explicit), "file", f"file {explicit} (--matrix)")
    env = os.environ.get(MATRIX_ENV)
    if env:
        return MatrixSource(Path(env), "file", f"file {env} (${MATRIX_ENV})")
    packaged = packaged_matrix_path()
    packaged_desc = f"packaged with dnnresolve {__version__}"
    if offline:
        return MatrixSource(packaged, "packaged", packaged_desc + " (--offline)")
    entry, problem = read_cache()
    if entry is not None:
        try:
            same_file = bool(entry.packaged_key) and entry.packaged_key == _file_key(packaged)
            packaged_sha = entry.packaged_sha256 if same_file else sha256_file(packaged)
        except OSError:
            packaged_sha = ""
        if entry.packaged_sha256 and packaged_sha and entry.packaged_sha256 != packaged_sha:
            problem = (
                "cached update ignored: dnnresolve's packaged matrix changed since it was fetched "
                "(run 'dnnresolve update' to refresh it)"
            )
        elif entry.sha256 == packaged_sha:
            return MatrixSource(packaged, "packaged", packaged_desc)
        else:
            age = entry.age_days(now)
            desc = f"cached update from {entry.url}, fetched {entry.fetched_at:%Y-%m-%d} ({_age_words(age)})"
            return MatrixSource(entry.path, "cache", desc, age_days=age, url=entry.url)
    return MatrixSource(packaged, "packaged", packaged_desc, note=problem)


def choose_matrix(offline: bool, explicit: str | None) -> tuple[Path, str]:
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


def _atomic_write(target: Path, data: bytes) -> None:
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix="-" + target.name)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _remove_stale(directory: Path, keep: str | None) -> None:
    for old in directory.glob("matrix-*.toml"):
        if old.name != keep:
            with contextlib.suppress(OSError):
                old.unlink()
