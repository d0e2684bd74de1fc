"""The matrix's tables: given as model objects, or read from a compiled matrix's rows and built into model
objects only when a query first needs them."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    from ..compat import DriverTable
    from ..compiled import Compiled
    from ..cuda_names import CudaName
    from ..images import CudaImage, OsPython
    from ..model import CudaFamily, CudaRelease, CudnnRelease, FrameworkRelease, GpuModel, WheelPins
    from ..versions import CudaVersion

    T = TypeVar("T")

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


class MatrixRows:
    """The validated matrix's tables (``Matrix`` adds the queries; their memos are set here, in the one
    constructor).

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
        # answers other stages work out from these rows alone, keyed by their arguments (solve's cuDNN floors: the
        # same few are asked for every candidate of every plan); the rows never change once loaded
        self._memo: dict[tuple[Any, ...], Any] = {}

    def remember(self, key: tuple[Any, ...], compute: Callable[[], T]) -> T:
        """``compute()``, worked out once per loaded matrix for ``key``: an answer other stages derive from these
        rows alone (they never change once loaded)."""
        if key not in self._memo:
            self._memo[key] = compute()
        found: T = self._memo[key]
        return found

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
            from ..schema import Row
            from ..schema_tables import BUILDERS

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
