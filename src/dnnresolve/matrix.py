"""The curated compatibility matrix: loaded once, validated (see ``schema``), queried."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator

from .errors import MatrixError
from .pkgname import canonicalize_name

TYPE_CHECKING = False
if TYPE_CHECKING:  # packaging loads when a release is looked up, not with every command that loads the matrix
    from pathlib import Path
    from typing import Any

    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    from .compat import DriverTable
    from .compiled import Compiled
    from .cuda_names import CudaName
    from .images import CudaImage, OsPython
    from .model import CudaFamily, CudaRelease, CudnnRelease, FrameworkRelease, GpuModel, WheelPins
    from .suggest import GpuGuess
    from .versions import CudaVersion, CudnnVersion, DriverVersion

MATRIX_ENV = "DNNRESOLVE_MATRIX"
MATRIX_MAX_BYTES = 64 << 20  # the packaged matrix is under 1 MiB; a bigger file is a mistake, not data


def packaged_matrix_file() -> str:
    """The matrix shipped in the wheel (compiled: ``data/compat_matrix.compiled``), or the source tree's TOML when
    running from a checkout. (A path as text: ``pathlib`` costs a start-up 0.2x a bare interpreter's.)"""
    here = os.path.dirname(os.path.realpath(__file__))
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
        from .compiled import open_shipped

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


def gpu_key(name: str) -> str:
    """A GPU name reduced to what identifies it: no brand prefixes, case or extra spaces."""
    s = " ".join(name.lower().split())  # (string methods: a start-up looks one name up)
    if s.startswith("nvidia "):
        s = s[len("nvidia ") :]
    for brand in ("tesla ", "geforce ", "quadro "):  # "titan" stays: it is part of the model's name
        if s.startswith(brand) and len(s) > len(brand):
            return s[len(brand) :]
    return s


_TABLE_OF = {
    "frameworks": "framework",
    "wheel_pins": "wheel_pins",
    "cuda": "cuda",
    "cuda_families": "cuda_family",
    "cudnn": "cudnn",
    "gpus": "gpu",
    "cuda_images": "cuda_image",
    "os_pythons": "os_python",
    "cuda_names": "cuda_name",
}


class Matrix:
    """The validated matrix, with the queries the solver and commands need.

    Built either from model objects, or (``Matrix.from_rows``) from rows that already passed validation, as
    the matrix cache holds them: then each table, and each package's framework and wheel_pins rows, becomes
    model objects only when a query first needs it.
    """

    def __init__(
        self,
        path: str,
        frameworks: list[FrameworkRelease] | None = None,
        wheel_pins: list[WheelPins] | None = None,
        cuda: list[CudaRelease] | None = None,
        cuda_families: list[CudaFamily] | None = None,
        cudnn: list[CudnnRelease] | None = None,
        gpus: list[GpuModel] | None = None,
        cuda_images: list[CudaImage] | None = None,
        os_pythons: list[OsPython] | None = None,
        cuda_names: list[CudaName] | None = None,
    ) -> None:
        self.path = path
        self._rows: Compiled | None = None
        self._built: dict[str, list[Any]] = {}
        given = (frameworks, wheel_pins, cuda, cuda_families, cudnn, gpus, cuda_images, os_pythons, cuda_names)
        for attr, value in zip(_TABLE_OF, given):
            self._built[attr] = list(value or [])
        self._by_package: dict[tuple[str, str], list[Any]] = {}
        self._index: dict[str, dict[str, list[Any]]] = {}  # built tables by package name (see _package_rows)
        self._covered: dict[tuple[tuple[str, ...], str], list[WheelPins]] = {}
        self._one_built: dict[tuple[str, int], Any] = {}
        self._plain: dict[tuple[str, str], list[Any]] = {}  # cached rows, unmarshalled once
        self._driver_tables: dict[str, DriverTable] = {}
        self._names: list[str] | None = None
        self._conda_names: dict[str, str] | None = None
        self._cuda_rows: dict[CudaVersion, CudaRelease | None] = {}
        self._cuda_name_index: dict[str, CudaName] | None = None

    @classmethod
    def from_rows(cls, path: str, rows: Compiled) -> Matrix:
        """A matrix over validated rows (see ``cached_rows``), built into model objects on demand."""
        m = cls(path)
        m._built = {}
        m._rows = rows
        return m

    @property
    def _cached(self) -> Compiled:
        assert self._rows is not None, "a matrix built from objects has every table built"
        return self._rows

    def _table(self, attr: str) -> list[Any]:
        built = self._built.get(attr)
        if built is None:
            table = _TABLE_OF[attr]
            built = [self._one(table, i, line, d) for i, line, d in self._raw(table)]
            self._built[attr] = built
        return built

    def _raw(self, table: str, package: str | None = None) -> list[Any]:
        """Cached rows as plain data (validated when the cache was written): a whole table, or one package's
        rows of it; each blob is read and unmarshalled once."""
        import marshal

        key = (table, package or "")
        if key not in self._plain:
            blob = self._cached.blob(f"tables/{table}" if package is None else f"packages/{table}/{package}")
            self._plain[key] = marshal.loads(blob) if blob is not None else []
        return self._plain[key]

    def _one(self, table: str, i: int, line: int, d: dict[str, Any]) -> Any:
        """One cached row built (once) into its model object."""
        key = (table, i)
        if key not in self._one_built:
            from .schema import BUILDERS, Row

            self._one_built[key] = BUILDERS[table](Row(self.path, table, i, line, d, trusted=True))
        return self._one_built[key]

    def _package_rows(self, attr: str, name: str) -> list[Any]:
        """Rows of ``attr`` (frameworks or wheel_pins) that name the canonical package ``name``."""
        if attr in self._built:
            index = self._index.get(attr)
            if index is None:  # once per table, not a scan of every row per question
                index = self._index[attr] = {}
                for row in self._built[attr]:
                    for n in row.names if attr == "frameworks" else (row.package,):
                        rows = index.setdefault(n, [])
                        if not rows or rows[-1] is not row:  # (a row naming itself twice is listed once)
                            rows.append(row)
            return index.get(name, [])
        key = (attr, name)
        if key not in self._by_package:
            table = _TABLE_OF[attr]
            self._by_package[key] = [self._one(table, *row) for row in self._raw(table, name)]
        return self._by_package[key]

    @property
    def frameworks(self) -> list[FrameworkRelease]:
        return self._table("frameworks")

    @property
    def wheel_pins(self) -> list[WheelPins]:
        return self._table("wheel_pins")

    @property
    def cuda(self) -> list[CudaRelease]:
        return self._table("cuda")

    @property
    def cuda_families(self) -> list[CudaFamily]:
        return self._table("cuda_families")

    @property
    def cudnn(self) -> list[CudnnRelease]:
        return self._table("cudnn")

    @property
    def gpus(self) -> list[GpuModel]:
        return self._table("gpus")

    @property
    def cuda_images(self) -> list[CudaImage]:
        return self._table("cuda_images")

    @property
    def os_pythons(self) -> list[OsPython]:
        return self._table("os_pythons")

    @property
    def cuda_names(self) -> list[CudaName]:
        return self._table("cuda_names")

    def cuda_name(self, package: str) -> CudaName | None:
        """The [[cuda_name]] row that names ``package`` (a name that carries CUDA without being a framework
        release: nvidia-cudnn-cu12, cudatoolkit, jax-cuda12-plugin), if any; the small table is read once."""
        if self._cuda_name_index is None:
            self._cuda_name_index = {n: row for row in self.cuda_names for n in row.names}
        return self._cuda_name_index.get(canonicalize_name(package))

    def knows(self, package: str) -> bool:
        """Whether a requirement of ``package`` has an answer here: a framework's name, or a [[cuda_name]]'s."""
        name = canonicalize_name(package)
        return name in self.packages() or self.cuda_name(name) is not None

    def wheel_pins_of(self, package: str) -> list[WheelPins]:
        """The wheel_pins rows of one package (canonical name)."""
        return self._package_rows("wheel_pins", canonicalize_name(package))

    def wheel_pins_covered(self, names: tuple[str, ...], covers: SpecifierSet) -> list[WheelPins]:
        """The wheel_pins rows of the packages ``names`` whose version ``covers`` contains (a framework row's
        releases), in the order of ``names`` then the file; worked out once per distinct (names, covers)."""
        key = (names, str(covers))
        found = self._covered.get(key)
        if found is None:
            found = self._covered[key] = [
                p for n in names for p in self.wheel_pins_of(n) if covers.contains(p.version, prereleases=True)
            ]
        return found

    # ------------------------------------------------------------ frameworks
    def packages(self) -> list[str]:
        """Every package name and alias the matrix knows, in file order (computed once)."""
        if self._names is None:
            if "frameworks" not in self._built:
                self._names = list(self._cached.meta["names"])
            else:
                seen: dict[str, None] = {}
                for f in self.frameworks:
                    for n in f.names:
                        seen.setdefault(n, None)
                self._names = list(seen)
        return list(self._names)

    def conda_names(self) -> dict[str, str]:
        """The matrix package each conda package name installs (``pytorch`` -> torch, ``cupy`` -> the cupy rows'),
        from the rows' conda recipes (computed once; a compiled matrix holds it)."""
        if self._conda_names is None:
            if "frameworks" not in self._built and "conda_names" in self._cached.meta:
                self._conda_names = dict(self._cached.meta["conda_names"])
            else:
                self._conda_names = conda_names_of(self.frameworks)
        return dict(self._conda_names)

    def releases(self, package: str, os_name: str | None = None) -> list[FrameworkRelease]:
        """Rows for a package (or an alias), oldest first."""
        name = canonicalize_name(package)
        rows = [f for f in self._package_rows("frameworks", name) if os_name is None or os_name in f.os]
        return sorted(rows, key=lambda f: (f.version, f.os))

    def find(self, package: str, spec: SpecifierSet | str = "", os_name: str | None = None) -> list[FrameworkRelease]:
        """Rows whose release satisfies ``spec`` or whose covered releases include the pinned version."""
        from packaging.specifiers import SpecifierSet

        specifier = SpecifierSet(spec) if isinstance(spec, str) else spec
        pinned = _pinned_version(specifier)
        name = canonicalize_name(package)
        entry = self.cuda_name(name) if name not in self.packages() else None
        if entry is not None:
            from .cuda_names import releases

            return [r for r in releases(entry, name, specifier, self) if os_name is None or os_name in r.os]
        if "frameworks" not in self._built and ("frameworks", name) not in self._by_package:
            return self._find_unbuilt(name, specifier, pinned, os_name)
        rows = self.releases(package, os_name)
        out = []
        for f in rows:
            if (pinned is not None and f.matches(pinned)) or (
                pinned is None and specifier.contains(f.version, prereleases=True)
            ):
                out.append(f)
        return out

    def _find_unbuilt(
        self, name: str, specifier: SpecifierSet, pinned: Version | None, os_name: str | None
    ) -> list[FrameworkRelease]:
        """``find`` over cached rows: only the rows that match become model objects."""
        from packaging.specifiers import SpecifierSet
        from packaging.version import Version

        out = []
        for i, version_text, covers, oses in self._raw("framework_index", name):
            if os_name is not None and os_name not in oses:
                continue
            version = Version(version_text)
            if pinned is not None:
                if covers and _surely_outside(covers, pinned):
                    continue
                hit = SpecifierSet(covers).contains(pinned, prereleases=True) if covers else pinned == version
            else:
                hit = specifier.contains(version, prereleases=True)
            if hit:
                out.append(self._framework_row(i))
        return sorted(out, key=lambda f: (f.version, f.os))

    def _framework_row(self, i: int) -> FrameworkRelease:
        """The framework row with index ``i``, read alone from the cache and built (once)."""
        import marshal

        built: FrameworkRelease | None = self._one_built.get(("framework", i))
        if built is None:
            blob = self._cached.blob(f"packages/framework_row/{i}")
            if blob is None:
                raise MatrixError(f"matrix cache: row {i} missing", self.path)
            _, line, d = marshal.loads(blob)
            built = self._one("framework", i, line, d)
        return built

    def pins_for(self, package: str, version: Version, extra: str = "") -> list[WheelPins]:
        name = canonicalize_name(package)
        return [p for p in self._package_rows("wheel_pins", name) if p.version == version and p.extra == extra]

    def using_cuda(self, cuda: CudaVersion) -> list[FrameworkRelease]:
        if "frameworks" not in self._built:
            from .versions import CudaVersion

            return self._rows_naming("cuda", lambda t: _same_series(CudaVersion.parse(t), cuda))
        return [f for f in self.frameworks if any(_same_series(c, cuda) for c in f.cuda)]

    def using_cudnn(self, cudnn: CudnnVersion) -> list[FrameworkRelease]:
        if "frameworks" not in self._built:
            from .versions import CudnnVersion

            return self._rows_naming("cudnn", lambda t: CudnnVersion.parse(t).series == cudnn.series)
        return [f for f in self.frameworks if any(c.series == cudnn.series for c in f.cudnn)]

    def _rows_naming(self, key: str, wanted: Callable[[str], bool]) -> list[FrameworkRelease]:
        """Framework rows (compiled, unbuilt) whose ``key`` list holds a value ``wanted`` accepts, built: each
        distinct value is judged once, through the compiled index of which rows name it."""
        naming: dict[str, list[int]] = self._cached.meta["naming"][key]
        rows = sorted({i for text, indices in naming.items() if wanted(text) for i in indices})
        return [self._framework_row(i) for i in rows]

    # ------------------------------------------------------------ NVIDIA
    def driver_table(self, os_name: str = "linux") -> DriverTable:
        """The toolkit -> minimum driver table for one OS (built once: the solver asks for every row)."""
        if os_name not in self._driver_tables:
            self._driver_tables[os_name] = self._make_driver_table(os_name)
        return self._driver_tables[os_name]

    def _make_driver_table(self, os_name: str) -> DriverTable:
        from .compat import DriverTable

        if "cuda" not in self._built and self._rows is not None:
            return DriverTable(self._toolkit_drivers(os_name), self._family_drivers(os_name))
        if os_name == "windows":
            toolkits = tuple((c.version, c.driver_min_windows) for c in self.cuda if c.driver_min_windows)
            families = tuple((f.major, f.driver_min_windows) for f in self.cuda_families if f.driver_min_windows)
        else:
            toolkits = tuple((c.version, c.driver_min_linux) for c in self.cuda)
            families = tuple((f.major, f.driver_min_linux) for f in self.cuda_families)
        return DriverTable(toolkits, families)

    def _toolkit_drivers(self, os_name: str) -> tuple[tuple[CudaVersion, DriverVersion], ...]:
        """(toolkit, minimum driver) from the cached CUDA rows, without building them."""
        from .versions import CudaVersion, DriverVersion

        key = "driver_min_windows" if os_name == "windows" else "driver_min_linux"
        return tuple(
            (CudaVersion.parse(d["version"]), DriverVersion.parse(d[key]))
            for _, _, d in self._raw("cuda")
            if d.get(key)
        )

    def _family_drivers(self, os_name: str) -> tuple[tuple[int, DriverVersion], ...]:
        if os_name == "windows":
            return tuple((f.major, f.driver_min_windows) for f in self.cuda_families if f.driver_min_windows)
        return tuple((f.major, f.driver_min_linux) for f in self.cuda_families)

    def cuda_release(self, cuda: CudaVersion) -> CudaRelease | None:
        """The first release of ``cuda``'s series (of its major for ``12``); only that row is built."""
        if cuda not in self._cuda_rows:
            found: CudaRelease | None = None
            if "cuda" in self._built or self._rows is None:
                rows = [c for c in self.cuda if _same_series(c.version, cuda)]
                found = min(rows, key=lambda c: c.version) if rows else None
            else:
                from .versions import CudaVersion

                raw = [(CudaVersion.parse(row[2]["version"]), row) for row in self._raw("cuda")]
                matching = [pair for pair in raw if _same_series(pair[0], cuda)]
                if matching:
                    found = self._one("cuda", *min(matching, key=lambda pair: pair[0])[1])
            self._cuda_rows[cuda] = found
        return self._cuda_rows[cuda]

    def cudnn_releases(self, series: CudnnVersion | None = None) -> list[CudnnRelease]:
        """The cuDNN releases (of one series), oldest first."""
        if series is not None and "cudnn" not in self._built and self._rows is not None:
            from .versions import CudnnVersion

            rows = [
                self._one("cudnn", i, line, d)
                for i, line, d in self._raw("cudnn")
                if CudnnVersion.parse(d["version"]).series == series.series
            ]
        else:
            rows = self.cudnn if series is None else [c for c in self.cudnn if c.version.series == series.series]
        return sorted(rows, key=lambda c: c.version)

    def cudnn_newest_first(self, accept: Callable[[CudnnVersion], bool] | None = None) -> Iterator[CudnnRelease]:
        """The cuDNN releases whose version ``accept`` takes (all without it), newest first, each built only when
        the caller gets that far."""
        if "cudnn" in self._built or self._rows is None:
            rows = reversed(sorted(self.cudnn, key=lambda c: c.version))
            yield from (c for c in rows if accept is None or accept(c.version))
            return
        from .versions import CudnnVersion

        raw = sorted(((CudnnVersion.parse(row[2]["version"]), row) for row in self._raw("cudnn")), key=lambda x: x[0])
        for version, (i, line, d) in reversed(raw):
            if accept is None or accept(version):
                yield self._one("cudnn", i, line, d)

    def gpu(self, name: str) -> GpuModel | None:
        """The GPU model for a name as nvidia-smi prints it, without its brand prefix, or an alias."""
        key = gpu_key(name)
        if not key:
            return None
        if "gpus" not in self._built and self._rows is not None:
            return self._gpu_unbuilt(key)
        index = self._gpu_index()
        if key in index:
            return index[key]
        # "A100-SXM4-40GB" when only "A100" is listed: the longest listed name that starts it.
        best: GpuModel | None = None
        best_len = 0
        for k, g in index.items():
            if (key.startswith(k + "-") or key.startswith(k + " ")) and len(k) > best_len:
                best, best_len = g, len(k)
        return best

    def gpu_typed(self, name: str) -> tuple[GpuModel | None, GpuGuess | None]:
        """A GPU name as a person types it (``--gpu 4090``): a name or alias the table spells so at once (the
        guess is None), else as ``suggest.guess_gpu`` reads it against the whole table, with the guess that
        says which rows it meant or which names to offer instead."""
        from .suggest import GpuRow, guess_gpu
        from .versions import ComputeCapability

        key = gpu_key(name)
        if "gpus" in self._built or self._rows is None:
            index = self._gpu_index()
            if key in index:
                return index[key], None
            gpus = self.gpus
            guess = guess_gpu(
                name, [GpuRow(i, g.name, (g.name, *g.aliases), str(g.compute_capability)) for i, g in enumerate(gpus)]
            )
            return (gpus[guess.found.position] if guess.found is not None else None), guess
        raw = self._raw("gpu")
        position = self._cached.meta["gpu_keys"].get(key)
        typed = None
        if position is None:  # the table read as plain rows: only the GPU found becomes a model object
            rows = [
                GpuRow(
                    at,
                    d["name"],
                    (d["name"], *d.get("aliases", ())),
                    str(ComputeCapability.parse(d["compute_capability"])),
                )
                for at, (_, _, d) in enumerate(raw)
            ]
            typed = guess_gpu(name, rows)
            if typed.found is None:
                return None, typed
            position = typed.found.position
        i, line, d = raw[position]
        found: GpuModel = self._one("gpu", i, line, d)
        return found, typed

    def _gpu_unbuilt(self, key: str) -> GpuModel | None:
        """``gpu`` over the cached key index: only the GPU found becomes a model object."""

        keys = self._cached.meta["gpu_keys"]
        position = keys.get(key)
        if position is None:
            best_len = 0
            for k, at in keys.items():
                if (key.startswith(k + "-") or key.startswith(k + " ")) and len(k) > best_len:
                    position, best_len = at, len(k)
        if position is None:
            return None
        i, line, d = self._raw("gpu")[position]
        gpu: GpuModel = self._one("gpu", i, line, d)
        return gpu

    def _gpu_index(self) -> dict[str, GpuModel]:
        index: dict[str, GpuModel] = {}
        for g in self.gpus:
            for n in (g.name, *g.aliases):
                index.setdefault(gpu_key(n), g)
        return index


def _same_series(a: CudaVersion, b: CudaVersion) -> bool:
    if a.is_major_only or b.is_major_only:
        return a.major == b.major
    return a.series == b.series


def _surely_outside(covers: str, pinned: Version) -> bool:
    """A quick no for a row's ``covers`` ("==1.0.*", "==2.1.0", ">=0.8.0,<0.11") that cannot contain ``pinned``,
    so that a lookup parses few specifier sets; False means "ask packaging", never "inside"."""
    from packaging.version import InvalidVersion, Version

    for clause in covers.split(","):
        clause = clause.strip()
        op = clause[:2] if clause[:2] in ("==", ">=", "<=") else clause[:1]
        text = clause[len(op) :].strip()
        if op not in ("==", ">=", "<") or not text or not all(c.isdigit() or c == "." for c in text.rstrip("*")):
            continue
        if op == "==" and text.endswith(".*"):
            prefix = tuple(int(n) for n in text[:-2].split("."))
            release = pinned.release + (0,) * len(prefix)
            if pinned.epoch == 0 and release[: len(prefix)] != prefix:
                return True
            continue
        try:
            bound = Version(text)
        except InvalidVersion:
            continue
        if (op == "==" and pinned.public != str(bound) and Version(pinned.public) != bound) or (
            op == ">=" and pinned < bound
        ):
            return True
        if op == "<" and pinned >= bound:
            return True
    return False


def _pinned_version(spec: SpecifierSet) -> Version | None:
    from packaging.version import InvalidVersion, Version

    items = list(spec)
    if len(items) == 1 and items[0].operator in ("==", "===") and "*" not in items[0].version:
        try:
            return Version(items[0].version.split("+")[0])
        except InvalidVersion:
            return None
    return None


def parse_matrix(text: str, path: str = "compat_matrix.toml") -> Matrix:
    """Validate and build a Matrix from TOML text. Raises MatrixError naming file, line, row and field."""
    return _validate(text, path)[0]


def _validate(text: str, path: str) -> tuple[Matrix, dict[str, list[tuple[int, int, Any]]]]:
    """The built matrix, and its rows as plain data: table -> [(row index, header line, the row's dict)]."""
    from .schema import BUILDERS, TABLES, iter_rows, toml_loads

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
    wheel_pins rows, of each framework row; and, read at once, the package names and the GPU name keys."""
    from .compiled import dumps

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
    naming: dict[str, dict[str, list[int]]] = {"cuda": {}, "cudnn": {}}  # value -> the rows that list it
    for i, _, d in raw["framework"]:
        for key, rows_of in naming.items():
            for text in dict.fromkeys(d.get(key, ())):
                rows_of.setdefault(text, []).append(i)
    meta = {"names": matrix.packages(), "gpu_keys": gpu_keys, "naming": naming}
    return blobs, {**meta, "conda_names": conda_names_of(matrix.frameworks)}


_CONDA_ENVIRONMENT = re.compile(r"cudatoolkit|cudnn|cuda|cuda-.*|cuda\d+|pytorch-cuda|cpuonly|python|pip")


def conda_names_of(frameworks: list[FrameworkRelease]) -> dict[str, str]:
    """conda name -> matrix package: the first package of each conda recipe that sets up no environment (a
    recipe may bring only CUDA and cuDNN, as TensorFlow's on Windows); the first row to name it wins."""
    names: dict[str, str] = {}
    for row in frameworks:
        for recipe in row.install:
            if recipe.kind != "conda":
                continue
            for spec in recipe.packages:
                name = re.split(r"[=<>! ]", spec, maxsplit=1)[0].lower()
                if not _CONDA_ENVIRONMENT.fullmatch(name):
                    names.setdefault(name, row.package)
                    break
    return names


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


_CACHE: dict[str, Matrix] = {}


def load_matrix(path: str | os.PathLike[str] | None = None, data: bytes | None = None) -> Matrix:
    """Load (once per process) and validate the matrix at ``path``, by default the packaged one: from its
    compiled form when there is one for these bytes (see ``compiled``), else parsed, validated and compiled.
    ``data``: the file's bytes, when the caller has read them already."""
    from . import compiled

    p = os.fspath(path) if path is not None else default_matrix_path()
    key = os.path.normpath(p)  # (the same file however its path is spelled, as Path compared them)
    if key in _CACHE:
        return _CACHE[key]
    if is_compiled(p) and data is None:  # what the wheel ships: the validated rows themselves
        from .compiled import open_shipped

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
        matrix, raw = _validate(_decode(data, str(p)), str(p))
        compiled.store("matrix", content, *compiled_form(matrix, raw))
    _CACHE[key] = matrix
    return matrix


def compile_matrix(data: bytes, path: str) -> tuple[dict[str, bytes], dict[str, Any]]:
    """The compiled form of a matrix file's bytes (for the wheel's build and for ``update``); MatrixError if invalid.
    Its meta records the file's sha256 (what ``update`` compares a download with)."""
    import hashlib

    blobs, meta = compiled_form(*_validate(_decode(data, path), path))
    meta["sha256"] = hashlib.sha256(data).hexdigest()
    return blobs, meta


def keyed_bytes(p: str | os.PathLike[str], data: bytes | None = None) -> tuple[bytes, str]:
    """A matrix file's bytes (``data`` when already read) and their content key (``compiled.source_key``)."""
    from .compiled import source_key

    data = read_matrix_bytes(p) if data is None else data
    return data, source_key(data)


def read_matrix_bytes(p: str | os.PathLike[str]) -> bytes:
    """A matrix file's bytes: a regular file (a FIFO is refused, not waited on), at most ``MATRIX_MAX_BYTES``."""
    from .readfile import read_regular

    try:
        data = read_regular(p, MATRIX_MAX_BYTES + 1)
    except FileNotFoundError as exc:
        raise MatrixError("compatibility matrix not found (is the package installed correctly?)", str(p)) from exc
    except OSError as exc:
        raise MatrixError(f"cannot read the compatibility matrix: {exc.strerror or exc}", str(p)) from exc
    if len(data) > MATRIX_MAX_BYTES:
        raise MatrixError(f"larger than {MATRIX_MAX_BYTES >> 20} MiB: not a compatibility matrix", str(p))
    return data


def _decode(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise MatrixError(f"not valid UTF-8 (byte 0x{data[exc.start]:02x})", path, line) from exc
