"""What the catalog and the vocabulary share, below both: the kinds, the error for a malformed data file, reading
one (bounded, as UTF-8 TOML), and how their regexes compile. The catalog loads the decoders and the vocabulary;
both load this, and this loads neither, so there is no cycle among them."""

from __future__ import annotations

import os
import re

from ..errors import MatrixError
from ..schema import toml_loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

KINDS = (
    "cudnn_version_mismatch",
    "cuda_version_mismatch",
    "driver_too_old",
    "missing_library",
    "arch_unsupported",
    "init_failure",
    "no_cuda_build",
    "other",
)


class CatalogError(MatrixError):
    """The error catalog (or the vocabulary) file is malformed."""


CATALOG_MAX_BYTES = 16 << 20


def _read_bytes(p: str | os.PathLike[str]) -> bytes:
    from ..readfile import read_regular

    try:
        data = read_regular(p, CATALOG_MAX_BYTES + 1)
    except OSError as exc:
        raise CatalogError(f"cannot read the error catalog: {exc.strerror or exc}", str(p)) from exc
    if len(data) > CATALOG_MAX_BYTES:
        raise CatalogError(f"larger than {CATALOG_MAX_BYTES >> 20} MiB: not an error catalog", str(p))
    return data


def _read(p: str | os.PathLike[str]) -> str:
    try:
        return _read_bytes(p).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CatalogError(f"cannot read the error catalog: {exc}", str(p)) from exc


def _toml(text: str, path: str) -> dict[str, Any]:
    try:
        return toml_loads(text)
    except Exception as exc:  # tomllib.TOMLDecodeError
        m = re.search(r"line (\d+)", str(exc))
        raise CatalogError(f"not valid TOML: {exc}", path, int(m.group(1)) if m else None) from exc


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """Compile a catalog regex; a literal space also matches the line break of a wrapped message, and letters
    match in any case (a title, a shouted log line)."""
    out: list[str] = []
    in_class = False
    escaped = False
    for ch in pattern:
        if escaped:
            out.append(ch)
            escaped = False
        elif ch == "\\":
            out.append(ch)
            escaped = True
        elif in_class:
            out.append(ch)
            if ch == "]":
                in_class = False
        elif ch == "[":
            out.append(ch)
            in_class = True
        elif ch == " ":
            out.append("[ \\n]")
        else:
            out.append(ch)
    return re.compile("".join(out), re.IGNORECASE)
