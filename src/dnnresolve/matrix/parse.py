"""A matrix file parsed and validated (see ``schema``: errors name the file, the line, the row and the field), and
put in its compiled form (see ``compiled``)."""

from __future__ import annotations

import re

from ..errors import MatrixError
from .nvidia import gpu_key
from .queries import Matrix, conda_names_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..model import FrameworkRelease


def parse_matrix(text: str, path: str = "compat_matrix.toml") -> Matrix:
    """Validate and build a Matrix from TOML text. Raises MatrixError naming file, line, row and field."""
    return validate(text, path)[0]


def validate(text: str, path: str) -> tuple[Matrix, dict[str, list[tuple[int, int, Any]]]]:
    """The built matrix, and its rows as plain data: table -> [(row index, header line, the row's dict)]."""
    from ..schema import TABLES, iter_rows, toml_loads
    from ..schema_tables import BUILDERS

    try:
        doc = toml_loads(text)
    except Exception as exc:  # tomllib.TOMLDecodeError, whose message holds "(at line N, column M)"
        m = re.search(r"line (\d+)", str(exc))
        raise MatrixError(f"not valid TOML: {exc}", path, int(m.group(1)) if m else None) from exc
    built: dict[str, list[Any]] = {t: [] for t in TABLES}
    raw: dict[str, list[tuple[int, int, Any]]] = {t: [] for t in TABLES}
    for table, row in iter_rows(doc, path, text):
        built[table].append(BUILDERS[table](row))
        raw[table].append((row.index, row.line, row.data))
    matrix = Matrix(
        path=path,
        frameworks=built["framework"],
        wheel_pins=built["wheel_pins"],
        cuda=built["cuda"],
        cuda_families=built["cuda_family"],
        cudnn=built["cudnn"],
        gpus=built["gpu"],
        cuda_images=built["cuda_image"],
        os_pythons=built["os_python"],
        cuda_names=built["cuda_name"],
    )
    _check_overlaps(matrix)
    return matrix, raw


def compiled_form(
    matrix: Matrix, raw: dict[str, list[tuple[int, int, Any]]]
) -> tuple[dict[str, bytes], dict[str, Any]]:
    """What a compiled matrix holds (see ``compiled``): blobs of each table, of each package's framework and
    wheel_pins rows, of each framework and GPU row; and, read at once, the package names and the GPU name keys."""
    from ..compiled import dumps

    per_package: dict[str, dict[str, list[tuple[int, int, Any]]]] = {"framework": {}, "wheel_pins": {}}
    for f, r in zip(matrix.frameworks, raw["framework"]):
        for name in f.names:
            per_package["framework"].setdefault(name, []).append(r)
    for p, r in zip(matrix.wheel_pins, raw["wheel_pins"]):
        per_package["wheel_pins"].setdefault(p.package, []).append(r)
    gpu_keys: dict[str, int] = {}
    for position, g in enumerate(matrix.gpus):
        for n in (g.name, *g.aliases):
            gpu_keys.setdefault(gpu_key(n), position)
    blobs = {f"tables/{t}": dumps(rows) for t, rows in raw.items()}
    for t, d in per_package.items():
        blobs.update({f"packages/{t}/{n}": dumps(rows) for n, rows in d.items()})
    # a lookup reads one package's (index, version, covers, os) and then only the rows it returns
    for n, rows in per_package["framework"].items():
        index = [(i, d["version"], d.get("covers", ""), d["os"]) for i, _, d in rows]
        blobs[f"packages/framework_index/{n}"] = dumps(index)
    blobs.update({f"packages/framework_row/{i}": dumps((i, line, d)) for i, line, d in raw["framework"]})
    # a GPU looked up by name reads its own row, not the table (unmarshalling it all was a third of a first lookup)
    blobs.update({f"packages/gpu_row/{at}": dumps(row) for at, row in enumerate(raw["gpu"])})
    naming: dict[str, dict[str, list[int]]] = {"cuda": {}, "cudnn": {}}  # value -> the rows that list it
    for i, _, d in raw["framework"]:
        for key, rows_of in naming.items():
            for text in dict.fromkeys(d.get(key, ())):
                rows_of.setdefault(text, []).append(i)
    meta = {"names": matrix.packages(), "gpu_keys": gpu_keys, "naming": naming}
    return blobs, {**meta, "conda_names": conda_names_of(matrix.frameworks)}


def _check_overlaps(matrix: Matrix) -> None:
    frameworks = set(matrix.packages())
    named: dict[str, int] = {}
    for entry in matrix.cuda_names:  # a name answers in one way only
        for n in entry.names:
            if n in frameworks or n in named:
                what = "a framework's" if n in frameworks else f"row {named[n]}'s too"
                raise MatrixError(f"[[cuda_name]] row {entry.row}: {n!r} is {what}", matrix.path, entry.line)
            named[n] = entry.row
    seen: dict[tuple[str, str, str], FrameworkRelease] = {}
    for f in matrix.frameworks:
        for o in f.os:
            key = (f.package, str(f.version), o)
            if key in seen:
                other = seen[key]
                raise MatrixError(
                    f"[[framework]] row {f.row} ({f.package} {f.version}): duplicates row {other.row} "
                    f"(line {other.line}) for os {o!r}",
                    matrix.path,
                    f.line,
                )
            seen[key] = f


def compile_matrix(data: bytes, path: str) -> tuple[dict[str, bytes], dict[str, Any]]:
    """The compiled form of a matrix file's bytes (for the wheel's build and for ``update``); MatrixError if invalid.
    Its meta records the file's sha256 (what ``update`` compares a download with)."""
    import hashlib

    blobs, meta = compiled_form(*validate(decode(data, path), path))
    meta["sha256"] = hashlib.sha256(data).hexdigest()
    return blobs, meta


def decode(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise MatrixError(f"not valid UTF-8 (byte 0x{data[exc.start]:02x})", path, line) from exc
