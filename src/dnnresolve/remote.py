"""`dnnresolve update`: fetch a newer compatibility matrix, verify it, and cache it.

Order of checks, all before anything is written (and all within one deadline, ``net.Deadline``): the URL is
https (plain http only to this machine); the
published checksum (URL + ".sha256") is fetched; the matrix is fetched whole; its sha256 must equal the
published one; it must be UTF-8 and pass the schema (``matrix.parse.parse_matrix``). Only then is it written to
the cache (see ``matrix_source``). A failed or partial download therefore never replaces a good cache.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import unquote, urlsplit

from .credentials import redact
from .errors import MatrixError
from .net import Deadline, NetworkError, check_url, get
from .records import field, record

# Placeholder until the project has its public home: the raw file of data/compat_matrix.toml on the main branch.
DEFAULT_UPDATE_URL = "https://raw.githubusercontent.com/dnnresolve/dnnresolve/main/data/compat_matrix.toml"
UPDATE_URL_ENV = "DNNRESOLVE_UPDATE_URL"
CHECKSUM_SUFFIX = ".sha256"


@record(frozen=True)
class UpdateResult:
    status: str  # "updated" | "current" (packaged is the newest) | "unchanged" (the cache already holds it)
    url: str  # redacted
    sha256: str
    path: str | None  # the cached file, when there is one
    fetched_at: datetime
    rows: dict[str, int] = field(default_factory=dict)
    removed_cache: bool = False

    def record(self) -> dict[str, object]:
        return {
            "status": self.status,
            "url": self.url,
            "sha256": self.sha256,
            "path": str(self.path) if self.path else None,
            "fetched_at": self.fetched_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "rows": self.rows,
            "removed_cache": self.removed_cache,
        }


def update_url(explicit: str | None) -> str:
    return explicit or os.environ.get(UPDATE_URL_ENV) or DEFAULT_UPDATE_URL


_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")
_BSD = re.compile(r"^SHA256\s*\((?P<name>.+)\)\s*=\s*(?P<hex>[0-9a-fA-F]{64})$")


def parse_checksum(text: str, filename: str) -> str:
    """The sha256 for ``filename`` from a checksum file: ``HEX  name``, ``HEX *name``, bare ``HEX`` or
    BSD ``SHA256 (name) = HEX``. With several entries, the one naming ``filename``."""
    entries: list[tuple[str, str | None]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _BSD.match(line)
        if m:
            entries.append((m.group("hex").lower(), m.group("name").strip()))
            continue
        parts = line.split(None, 1)
        if not _HEX64.match(parts[0]):
            raise ValueError(f"not a sha256 checksum line: {line[:80]!r}")
        name = parts[1].strip().lstrip("*").strip() if len(parts) > 1 else None
        entries.append((parts[0].lower(), name or None))
    if not entries:
        raise ValueError("the checksum file is empty")
    if len(entries) == 1:
        return entries[0][0]
    named = [h for h, n in entries if n is not None and Path(n).name == filename]
    if len(named) == 1:
        return named[0]
    raise ValueError(f"the checksum file does not list {filename!r} exactly once")


def update_matrix(
    url: str,
    cache_directory: Path | None = None,
    now: datetime | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> UpdateResult:
    """Fetch, verify, validate and cache the matrix at ``url``. Raises NetworkError / MatrixError."""
    from .matrix import packaged_identity
    from .matrix.parse import parse_matrix
    from .matrix_source import clear_cache, read_cache, sha256_bytes, write_cache

    check_url(url)
    deadline = Deadline.start(what="the update")  # both files together: a trickling server cannot hold us
    shown = redact(url)
    filename = unquote(Path(urlsplit(url).path).name) or "compat_matrix.toml"
    checksum_url = _sibling(url, CHECKSUM_SUFFIX)

    checksum_text = get(checksum_url, deadline=deadline).body
    try:
        expected = parse_checksum(checksum_text.decode("utf-8", errors="replace"), filename)
    except ValueError as exc:
        raise NetworkError(f"bad checksum file at {redact(checksum_url)}: {exc}") from None

    data = get(url, on_progress=on_progress, deadline=deadline).body
    actual = sha256_bytes(data)
    if actual != expected:
        raise NetworkError(
            f"checksum mismatch for {shown}: got sha256 {actual[:16]}..., published {expected[:16]}... "
            f"({len(data)} bytes received; incomplete or altered download); the cache was not changed"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MatrixError(
            f"the downloaded matrix is not UTF-8 text ({exc}); the cache was not changed", shown
        ) from None
    try:
        matrix = parse_matrix(text, shown)
    except MatrixError as exc:
        raise MatrixError(
            f"the downloaded matrix is not valid: {exc.message}; the cache was not changed", exc.file, exc.line
        ) from None

    rows = {
        "framework": len(matrix.frameworks),
        "wheel_pins": len(matrix.wheel_pins),
        "cuda": len(matrix.cuda),
        "cuda_family": len(matrix.cuda_families),
        "cudnn": len(matrix.cudnn),
        "gpu": len(matrix.gpus),
    }
    fetched_at = (now or datetime.now(timezone.utc)).replace(microsecond=0)
    packaged_sha = packaged_identity()[1]
    if actual == packaged_sha:
        removed = clear_cache(cache_directory)
        return UpdateResult("current", shown, actual, None, fetched_at, rows, removed_cache=removed)
    if cache_directory is None:
        cached, _ = read_cache()
    else:
        cached, _ = read_cache(cache_directory)
    if cached is not None and cached.sha256 == actual and cached.packaged_sha256 == packaged_sha:
        return UpdateResult("unchanged", shown, actual, cached.path, cached.fetched_at, rows)
    entry = write_cache(data, shown, fetched_at, packaged_sha, cache_directory)
    return UpdateResult("updated", shown, actual, entry.path, fetched_at, rows)


def _sibling(url: str, suffix: str) -> str:
    """``url`` with ``suffix`` added to its path (before any query string)."""
    parts = urlsplit(url)
    return parts._replace(path=parts.path + suffix).geturl()
