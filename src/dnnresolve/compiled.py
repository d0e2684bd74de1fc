"""Data compiled once and keyed by its content: the matrix's validated rows, the error catalog (in the wheel its
validated records, in the user cache its document) and the vocabulary's document.

Parsing and validating the matrix's TOML takes a quarter of a second; its compiled form is read in milliseconds,
one table or package at a time. A compiled file is ``MAGIC``, the header's size (4 bytes, little-endian), the
header (``marshal``: kind, format, ``source_key``, ``meta``, and where each blob lies) and the blobs.

``source_key`` is a BLAKE2b digest of the source file's bytes; times never enter a key. Two places hold
compiled files:

- the wheel ships ``dnnresolve/data/<name>.compiled`` in place of each TOML (``hatch_build.py`` compiles them when
  the wheel is built, with the code it ships, and records the source's ``source_key`` and sha256): an installed
  dnnresolve reads no TOML and hashes nothing to answer;
- any other source (a checkout's data, ``--matrix FILE``, a matrix ``update`` fetched) is compiled on first use
  (``update`` compiles when it installs) into ``<user cache>/compiled/``, named by a digest of the source's
  key, ``FORMAT`` and the code that validates it, so that an edited schema in a checkout compiles anew.

The user cache is read and written through ``cachedir`` (private, no symlinks or FIFOs, size-bounded).
"""

from __future__ import annotations

import marshal
import os

from . import cachedir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, BinaryIO

FORMAT = 3
MAGIC = b"DNRC"
MARSHAL_VERSION = 4  # what every Python 3 since 3.4 reads
SUFFIX = ".compiled"
# The modules whose code decides what a compiled file holds: a change to any of them is a new cache key.
COMPILERS = (
    "compiled.py",
    "matrix/__init__.py",
    "matrix/nvidia.py",
    "matrix/parse.py",
    "matrix/queries.py",
    "matrix/rows.py",
    "schema.py",
    "schema_tables.py",
    "images.py",
    "cuda_names.py",
    "model.py",
    "versions.py",
    "compat.py",
    "records.py",
    "pkgname.py",
    "errors.py",
    "specs.py",
    "cachedir.py",
    "readfile.py",  # the catalog reads the vocabulary (its runtime texts) while it is validated
    "lazyre.py",  # the module-level regexes of those above
    "explain/__init__.py",
    "explain/catalog.py",
    "explain/datafile.py",
    "explain/decoders.py",
    "explain/decoded.py",
    "explain/library_decoders.py",
    "explain/vocabulary.py",
)
_PACKAGE = os.path.dirname(os.path.realpath(__file__))


def _blake2b(data: bytes) -> Any:
    try:
        from _blake2 import blake2b  # hashlib.blake2b, without importing hashlib's OpenSSL (4 ms of start-up)
    except ImportError:  # an interpreter built without it
        from hashlib import blake2b
    return blake2b(data, digest_size=20)


def source_key(data: bytes) -> str:
    """The digest that names a source file's content."""
    return str(_blake2b(data).hexdigest())


_code_digest: str | None = None


def code_digest() -> str:
    """A digest of the code that compiles (``COMPILERS``), read from this installation's files."""
    global _code_digest
    if _code_digest is None:
        h = _blake2b(f"{FORMAT}".encode())
        for name in COMPILERS:
            try:
                with open(os.path.join(_PACKAGE, name), "rb") as f:
                    h.update(f.read())
            except OSError:
                h.update(b"\0missing\0" + name.encode())
        _code_digest = str(h.hexdigest())
    return _code_digest


class Compiled:
    """An open compiled file: its ``meta`` read at once, each blob read when first asked for."""

    def __init__(self, f: BinaryIO, header: dict[str, Any], start: int, where: str) -> None:
        self._f = f
        self._index: dict[str, tuple[int, int]] = header["index"]
        self.meta: dict[str, Any] = header["meta"]
        self.source_key: str = header["source_key"]
        self._start = start
        self.where = where

    def blob(self, name: str) -> bytes | None:
        at = self._index.get(name)
        if at is None:
            return None
        self._f.seek(self._start + at[0])
        data = self._f.read(at[1])
        if len(data) != at[1]:
            raise OSError(f"{self.where}: cut short")
        return data

    def load(self, name: str) -> Any:
        """A blob unmarshalled (None when absent)."""
        data = self.blob(name)
        return None if data is None else marshal.loads(data)


def build(kind: str, key: str, blobs: dict[str, bytes], meta: dict[str, Any]) -> bytes:
    """A compiled file's bytes, for the source whose ``source_key`` is ``key``."""
    index: dict[str, tuple[int, int]] = {}
    offset = 0
    for name, blob in blobs.items():
        index[name] = (offset, len(blob))
        offset += len(blob)
    header = {"kind": kind, "format": FORMAT, "source_key": key, "meta": meta, "index": index}
    head = marshal.dumps(header, MARSHAL_VERSION)
    return b"".join([MAGIC, len(head).to_bytes(4, "little"), head, *blobs.values()])


def dumps(value: Any) -> bytes:
    return marshal.dumps(value, MARSHAL_VERSION)


def _open(path: str | os.PathLike[str], kind: str, key: str | None, private: bool) -> Compiled | None:
    """The compiled file at ``path`` if it is one of ``kind`` for ``key`` (any key when None); a user-cache file
    (``private``) must also be a regular file of this user's that only they may write, opened without following
    a symlink."""
    from .readfile import open_regular

    try:
        fd, st = open_regular(path, nofollow=private)
    except FileNotFoundError:
        return None
    except OSError as exc:
        cachedir.debug(f"compiled file {path} not used: {exc.strerror or exc}")
        return None
    f = os.fdopen(fd, "rb")
    try:
        why = cachedir._owned_privately(st) if private else ""
        if not why and st.st_size > cachedir.MAX_ENTRY:
            why = "too large"
        if why:
            cachedir.debug(f"compiled file {path} not used: {why}")
            f.close()
            return None
        head = f.read(8)
        size = int.from_bytes(head[4:8], "little")
        header = marshal.loads(f.read(size)) if head[:4] == MAGIC and size < st.st_size else None
        if (
            not isinstance(header, dict)
            or header.get("kind") != kind
            or header.get("format") != FORMAT
            or (key is not None and header.get("source_key") != key)
            or not isinstance(header.get("index"), dict)
            or not isinstance(header.get("meta"), dict)
        ):
            f.close()
            return None
        return Compiled(f, header, 8 + size, str(path))
    except (OSError, EOFError, ValueError, TypeError):
        f.close()
        return None


SHIPPED = (("matrix", "compat_matrix"), ("catalog", "error_catalog"), ("vocabulary", "nvidia_vocabulary"))


SHIPPED_AS_IS = ("pypi_releases.json",)  # artifact.py's PyPI release lists


def compile_shipped(data_dir: Path, out_dir: Path) -> list[Path]:
    """Compile ``data_dir``'s matrix and catalog into ``out_dir/<name>.compiled`` (the wheel's build step); a file
    that fails validation raises its MatrixError."""
    from .explain.catalog import compile_catalog
    from .explain.vocabulary import compile_vocabulary
    from .matrix.parse import compile_matrix

    compilers = {"matrix": compile_matrix, "catalog": compile_catalog, "vocabulary": compile_vocabulary}
    made = []
    for name in SHIPPED_AS_IS:  # read as they are (JSON: nothing to compile away)
        target = out_dir / name
        target.write_bytes((data_dir / name).read_bytes())
        made.append(target)
    for kind, name in SHIPPED:
        source = data_dir / f"{name}.toml"
        data = source.read_bytes()
        blobs, meta = compilers[kind](data, str(source))
        target = out_dir / f"{name}{SUFFIX}"
        target.write_bytes(build(kind, source_key(data), blobs, meta))
        made.append(target)
    return made


def open_shipped(path: str | os.PathLike[str], kind: str) -> Compiled:
    """A compiled file the wheel ships (``*.compiled``): its content is the data itself. OSError if unusable."""
    found = _open(path, kind, None, private=False)
    if found is None:
        raise OSError(f"{path}: not a compiled {kind} of this dnnresolve (reinstall it)")
    return found


def _entry_name(kind: str, key: str) -> str:
    digest = _blake2b(f"{kind}\0{key}\0{code_digest()}".encode()).hexdigest()
    return f"{kind}-{digest}.bin"


def load(kind: str, source: str | os.PathLike[str], key: str) -> Compiled | None:
    """The compiled form of ``source`` whose bytes have ``key``, from the user cache."""
    if os.environ.get(NO_CACHE_ENV) == "1":
        return None
    directory = cachedir.directory("compiled", create=False)
    if directory is None:
        return None
    return _open(os.path.join(directory, _entry_name(kind, key)), kind, key, private=True)


KEEP = 16  # compiled entries kept in the user cache (each matrix edit or update is a new one)


def store(kind: str, key: str, blobs: dict[str, bytes], meta: dict[str, Any]) -> None:
    """Keep the compiled form of the source whose bytes have ``key`` in the user cache; failing to is not an error
    (the next run compiles again)."""
    if os.environ.get(NO_CACHE_ENV) == "1":
        return
    directory = cachedir.directory("compiled", create=True)
    if directory is None:
        return
    name = _entry_name(kind, key)
    try:
        cachedir.write_entry(directory, name, build(kind, key, blobs, meta))
    except OSError as exc:
        cachedir.debug(f"compiled file not kept in {directory}: {exc.strerror or exc}")
        return
    cachedir.prune(directory, f"{kind}-", KEEP - 1, protect=frozenset({name}))


NO_CACHE_ENV = "DNNRESOLVE_NO_MATRIX_CACHE"  # "1": never read or write the user cache's compiled files
