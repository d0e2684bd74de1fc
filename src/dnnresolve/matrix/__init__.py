"""The curated compatibility matrix: where it is, its bytes read, and ``load_matrix`` (once per process, from
its compiled form when there is one). The rest of the package: ``queries`` (``Matrix``: what it answers about
framework releases), ``nvidia`` (about CUDA, drivers, cuDNN, GPUs), ``rows`` (its tables, built on demand) and
``parse`` (a matrix file validated, see ``schema``, and put in its compiled form)."""

from __future__ import annotations

import os

from ..errors import MatrixError
from .queries import Matrix as Matrix  # the class every stage imports from here

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


MATRIX_ENV = "DNNRESOLVE_MATRIX"
MATRIX_MAX_BYTES = 64 << 20  # the packaged matrix is under 1 MiB; a bigger file is a mistake, not data


def packaged_matrix_file() -> str:
    """The matrix shipped in the wheel (compiled: ``data/compat_matrix.compiled``), or the source tree's TOML when
    running from a checkout. (A path as text: ``pathlib`` costs a start-up 0.2x a bare interpreter's.)"""
    here = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # the dnnresolve package
    shipped = os.path.join(here, "data", "compat_matrix.compiled")
    if os.path.isfile(shipped):
        return shipped
    return os.path.join(os.path.dirname(os.path.dirname(here)), "data", "compat_matrix.toml")


def packaged_matrix_path() -> Path:
    """``packaged_matrix_file()`` as a Path."""
    from pathlib import Path

    return Path(packaged_matrix_file())


def is_compiled(path: str | os.PathLike[str]) -> bool:
    return os.fspath(path).endswith(".compiled")


def packaged_identity() -> tuple[str, str]:
    """The packaged matrix's (content key, sha256): recorded in the wheel's compiled matrix, else hashed."""
    p = packaged_matrix_file()
    if is_compiled(p):
        from ..compiled import open_shipped

        try:
            c = open_shipped(p, "matrix")
        except OSError as exc:
            raise MatrixError(str(exc), str(p)) from None
        return c.source_key, str(c.meta.get("sha256", ""))
    import hashlib

    data, key = keyed_bytes(p)
    return key, hashlib.sha256(data).hexdigest()


def default_matrix_path() -> str:
    env = os.environ.get(MATRIX_ENV)
    return env if env else packaged_matrix_file()


_CACHE: dict[str, Matrix] = {}


def load_matrix(path: str | os.PathLike[str] | None = None, data: bytes | None = None) -> Matrix:
    """Load (once per process) and validate the matrix at ``path``, by default the packaged one: from its
    compiled form when there is one for these bytes (see ``compiled``), else parsed, validated and compiled.
    ``data``: the file's bytes, when the caller has read them already."""
    from .. import compiled

    p = os.fspath(path) if path is not None else default_matrix_path()
    key = os.path.normpath(p)  # (the same file however its path is spelled, as Path compared them)
    if key in _CACHE:
        return _CACHE[key]
    if is_compiled(p) and data is None:  # what the wheel ships: the validated rows themselves
        from ..compiled import open_shipped

        try:
            _CACHE[key] = Matrix.from_rows(str(p), open_shipped(p, "matrix"))
        except OSError as exc:
            raise MatrixError(f"cannot read the compatibility matrix: {exc}", str(p)) from exc
        return _CACHE[key]
    data, content = keyed_bytes(p, data)
    rows = compiled.load("matrix", p, content)
    if rows is not None:
        matrix = Matrix.from_rows(str(p), rows)
    else:
        from .parse import compiled_form, decode, validate

        matrix, raw = validate(decode(data, str(p)), str(p))
        compiled.store("matrix", content, *compiled_form(matrix, raw))
    _CACHE[key] = matrix
    return matrix


def keyed_bytes(p: str | os.PathLike[str], data: bytes | None = None) -> tuple[bytes, str]:
    """A matrix file's bytes (``data`` when already read) and their content key (``compiled.source_key``)."""
    from ..compiled import source_key

    data = read_matrix_bytes(p) if data is None else data
    return data, source_key(data)


def read_matrix_bytes(p: str | os.PathLike[str]) -> bytes:
    """A matrix file's bytes: a regular file (a FIFO is refused, not waited on), at most ``MATRIX_MAX_BYTES``."""
    from ..readfile import read_regular

    try:
        data = read_regular(p, MATRIX_MAX_BYTES + 1)
    except FileNotFoundError as exc:
        raise MatrixError("compatibility matrix not found (is the package installed correctly?)", str(p)) from exc
    except OSError as exc:
        raise MatrixError(f"cannot read the compatibility matrix: {exc.strerror or exc}", str(p)) from exc
    if len(data) > MATRIX_MAX_BYTES:
        raise MatrixError(f"larger than {MATRIX_MAX_BYTES >> 20} MiB: not a compatibility matrix", str(p))
    return data
