"""The curated compatibility matrix: loaded once, validated (see ``schema``), queried."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from .compat import DriverTable
from .errors import MatrixError
from .model import CudaFamily, CudaRelease, CudnnRelease, FrameworkRelease, GpuModel, WheelPins
from .schema import BUILDERS, TABLES, iter_rows, toml_loads
from .versions import CudaVersion, CudnnVersion

MATRIX_ENV = "DNNRESOLVE_MATRIX"


def packaged_matrix_path() -> Path:
    """The matrix shipped in the wheel, or the source tree's copy when running from a checkout."""
    here = Path(__file__).resolve().parent
    shipped = here / "data" / "compat_matrix.toml"
    if shipped.is_file():
        return shipped
    return here.parents[1] / "data" / "compat_matrix.toml"


def default_matrix_path() -> Path:
    env = os.environ.get(MATRIX_ENV)
    return Path(env) if env else packaged_matrix_path()


def gpu_key(name: str) -> str:
    """A GPU name reduced to what identifies it: no brand prefixes, case or extra spaces."""
    s = re.sub(r"\s+", " ", name.strip().lower())
    s = re.sub(r"^(nvidia\s+)", "", s)
    s = re.sub(r"^(tesla|geforce|quadro|titan)\s+(?=\S)", lambda m: "" if m.group(1) != "titan" else m.group(0), s)
    return s


@dataclass
class Matrix:
    """The validated matrix, with the queries the solver and commands need."""

    path: str
    frameworks: list[FrameworkRelease]
    wheel_pins: list[WheelPins]
    cuda: list[CudaRelease]
    cuda_families: list[CudaFamily]
    cudnn: list[CudnnRelease]
    gpus: list[GpuModel]

    # ------------------------------------------------------------ frameworks
    def packages(self) -> list[str]:
        seen: dict[str, None] = {}
        for f in self.frameworks:
            for n in f.names:
                seen.setdefault(n, None)
        return list(seen)

    def releases(self, package: str, os_name: str | None = None) -> list[FrameworkRelease]:
        """Rows for a package (or an alias), oldest first."""
        name = canonicalize_name(package)
        rows = [f for f in self.frameworks if name in f.names and (os_name is None or os_name in f.os)]
        return sorted(rows, key=lambda f: (f.version, f.os))

    def find(self, package: str, spec: SpecifierSet | str = "", os_name: str | None = None) -> list[FrameworkRelease]:
        """Rows whose release satisfies ``spec`` or whose covered releases include the pinned version."""
        specifier = SpecifierSet(spec) if isinstance(spec, str) else spec
        rows = self.releases(package, os_name)
        pinned = _pinned_version(specifier)
        out = []
        for f in rows:
            if (pinned is not None and f.matches(pinned)) or (
                pinned is None and specifier.contains(f.version, prereleases=True)
            ):
                out.append(f)
        return out

    def pins_for(self, package: str, version: Version, extra: str = "") -> list[WheelPins]:
        name = canonicalize_name(package)
        return [p for p in self.wheel_pins if p.package == name and p.version == version and p.extra == extra]

    def using_cuda(self, cuda: CudaVersion) -> list[FrameworkRelease]:
        return [f for f in self.frameworks if any(_same_series(c, cuda) for c in f.cuda)]

    def using_cudnn(self, cudnn: CudnnVersion) -> list[FrameworkRelease]:
        return [f for f in self.frameworks if any(c.series == cudnn.series for c in f.cudnn)]

    # ------------------------------------------------------------ NVIDIA
    def driver_table(self, os_name: str = "linux") -> DriverTable:
        if os_name == "windows":
            toolkits = tuple((c.version, c.driver_min_windows) for c in self.cuda if c.driver_min_windows)
            families = tuple((f.major, f.driver_min_windows) for f in self.cuda_families if f.driver_min_windows)
        else:
            toolkits = tuple((c.version, c.driver_min_linux) for c in self.cuda)
            families = tuple((f.major, f.driver_min_linux) for f in self.cuda_families)
        return DriverTable(toolkits, families)

    def cuda_release(self, cuda: CudaVersion) -> CudaRelease | None:
        rows = [c for c in self.cuda if _same_series(c.version, cuda)]
        return min(rows, key=lambda c: c.version) if rows else None

    def cudnn_releases(self, series: CudnnVersion | None = None) -> list[CudnnRelease]:
        rows = self.cudnn if series is None else [c for c in self.cudnn if c.version.series == series.series]
        return sorted(rows, key=lambda c: c.version)

    def gpu(self, name: str) -> GpuModel | None:
        """The GPU model for a name as nvidia-smi prints it, without its brand prefix, or an alias."""
        key = gpu_key(name)
        if not key:
            return None
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


def _pinned_version(spec: SpecifierSet) -> Version | None:
    items = list(spec)
    if len(items) == 1 and items[0].operator in ("==", "===") and "*" not in items[0].version:
        try:
            return Version(items[0].version.split("+")[0])
        except InvalidVersion:
            return None
    return None


def parse_matrix(text: str, path: str = "compat_matrix.toml") -> Matrix:
    """Validate and build a Matrix from TOML text. Raises MatrixError naming file, line, row and field."""
    try:
        doc = toml_loads(text)
    except Exception as exc:  # tomllib.TOMLDecodeError, whose message holds "(at line N, column M)"
        m = re.search(r"line (\d+)", str(exc))
        raise MatrixError(f"not valid TOML: {exc}", path, int(m.group(1)) if m else None) from exc
    built: dict[str, list[Any]] = {t: [] for t in TABLES}
    for table, row in iter_rows(doc, path, text):
        built[table].append(BUILDERS[table](row))
    matrix = Matrix(
        path=path,
        frameworks=built["framework"],
        wheel_pins=built["wheel_pins"],
        cuda=built["cuda"],
        cuda_families=built["cuda_family"],
        cudnn=built["cudnn"],
        gpus=built["gpu"],
    )
    _check_overlaps(matrix)
    return matrix


def _check_overlaps(matrix: Matrix) -> None:
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


def load_matrix(path: str | Path | None = None) -> Matrix:
    """Load (once per process) and validate the matrix at ``path``, by default the packaged one."""
    p = Path(path) if path is not None else default_matrix_path()
    key = str(p)
    if key in _CACHE:
        return _CACHE[key]
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise MatrixError("compatibility matrix not found (is the package installed correctly?)", str(p)) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise MatrixError(f"cannot read the compatibility matrix: {exc}", str(p)) from exc
    matrix = parse_matrix(text, str(p))
    _CACHE[key] = matrix
    return matrix
