"""``Matrix``: the validated matrix, with the queries the solver and commands need; this module's are about
framework releases and their wheel pins, ``nvidia``'s about CUDA, drivers, cuDNN and GPUs."""

from __future__ import annotations

import re
from collections.abc import Callable

from ..errors import MatrixError
from ..lazyre import lazy_compile
from ..pkgname import canonicalize_name
from .nvidia import NvidiaQueries, same_series

TYPE_CHECKING = False
if TYPE_CHECKING:  # packaging loads when a release is looked up, not with every command that loads the matrix
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    from ..compiled import Compiled
    from ..cuda_names import CudaName
    from ..model import FrameworkRelease, WheelPins
    from ..versions import CudaVersion, CudnnVersion


class Matrix(NvidiaQueries):
    """The validated matrix, with the queries the solver and commands need (its tables: see ``MatrixRows``)."""

    @classmethod
    def from_rows(cls, path: str, rows: Compiled) -> Matrix:
        """A matrix over validated rows (see ``cached_rows``), built into model objects on demand."""
        m = cls(path)
        m._built = {}
        m._rows = rows
        return m

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
            from ..cuda_names import releases

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
            # (a release is parsed only where it is compared: a pinned lookup mostly reads the rows' covers)
            if pinned is not None:
                if covers and _surely_outside(covers, pinned):
                    continue
                hit = (
                    SpecifierSet(covers).contains(pinned, prereleases=True)
                    if covers
                    else pinned == Version(version_text)
                )
            else:
                hit = specifier.contains(Version(version_text), prereleases=True)
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
            from ..versions import CudaVersion

            return self._rows_naming("cuda", lambda t: same_series(CudaVersion.parse(t), cuda))
        return [f for f in self.frameworks if any(same_series(c, cuda) for c in f.cuda)]

    def using_cudnn(self, cudnn: CudnnVersion) -> list[FrameworkRelease]:
        if "frameworks" not in self._built:
            from ..versions import CudnnVersion

            return self._rows_naming("cudnn", lambda t: CudnnVersion.parse(t).series == cudnn.series)
        return [f for f in self.frameworks if any(c.series == cudnn.series for c in f.cudnn)]

    def _rows_naming(self, key: str, wanted: Callable[[str], bool]) -> list[FrameworkRelease]:
        """Framework rows (compiled, unbuilt) whose ``key`` list holds a value ``wanted`` accepts, built: each
        distinct value is judged once, through the compiled index of which rows name it."""
        naming: dict[str, list[int]] = self._cached.meta["naming"][key]
        rows = sorted({i for text, indices in naming.items() if wanted(text) for i in indices})
        return [self._framework_row(i) for i in rows]


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


_CONDA_ENVIRONMENT = lazy_compile(r"cudatoolkit|cudnn|cuda|cuda-.*|cuda\d+|pytorch-cuda|cpuonly|python|pip")


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
