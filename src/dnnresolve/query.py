"""The `matrix` command's question, answered from the matrix: which rows, as records. No I/O."""

from __future__ import annotations

from typing import Any

from .errors import UserError
from .matrix import Matrix
from .model import FrameworkRelease
from .pkgname import canonicalize_name
from .records import field, record
from .specs import InvalidRequirement, parse_requirement
from .versions import CudaVersion, CudnnVersion, VersionError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet


@record
class MatrixResult:
    query: str
    releases: list[dict[str, Any]] = field(default_factory=list)
    packages: list[dict[str, Any]] = field(default_factory=list)  # summary when no SPEC is given
    names: list[dict[str, Any]] = field(default_factory=list)  # [[cuda_name]] rows: names that carry CUDA
    message: str = ""

    @property
    def found(self) -> bool:
        return bool(self.releases or self.packages or self.names)


def release_record(matrix: Matrix, row: FrameworkRelease) -> dict[str, Any]:
    """One release as the JSON contract states it; driver minimums derived from the CUDA table."""
    drivers: dict[str, dict[str, str | None]] = {}
    for cuda in row.cuda:
        rel = matrix.cuda_release(cuda)
        drivers[str(cuda)] = {
            "linux": str(rel.driver_min_linux) if rel else None,
            "windows": str(rel.driver_min_windows) if rel and rel.driver_min_windows else None,
        }

    def lowest(os_name: str) -> str | None:
        values = [d[os_name] for d in drivers.values() if d[os_name]]
        from .versions import DriverVersion

        return str(min(DriverVersion.parse(v) for v in values if v)) if values else None

    pins = [
        {"extra": p.extra, "platform": p.platform, "requires": list(p.requires), "source": p.source}
        for name in row.names
        for p in matrix.wheel_pins_of(name)
        if row.matches(p.version)
    ]
    return {
        "package": row.package,
        "version": str(row.version),
        "covers": str(row.covers),
        "aliases": list(row.aliases),
        "os": list(row.os),
        "python": [str(p) for p in row.python],
        "cuda": [str(c) for c in row.cuda],
        "cuda_default": str(row.cuda_default) if row.cuda_default else None,
        "cudnn": [str(c) for c in row.cudnn],
        "cudnn_rule": row.cudnn_rule.value if row.cudnn_rule else None,
        "cudnn_optional": row.cudnn_optional,
        "driver_min_linux": lowest("linux"),
        "driver_min_windows": lowest("windows"),
        "driver_min_by_cuda": drivers,
        "compute_capability_min": str(row.compute_capability_min) if row.compute_capability_min else None,
        "sm": [str(s) for s in row.sm],
        "ptx": [str(s) for s in row.ptx],
        "sm_exact": [str(s) for s in row.sm_exact],
        "compiler": row.compiler or None,
        "build_tool": row.build_tool or None,
        "wheels_any_python": row.wheels_any_python,
        "system_cuda": row.system_cuda,
        "builds_each_release": row.builds_each_release,
        "install": [r.to_dict() for r in row.install],
        "wheel_pins": pins,
        "source": row.source,
        "sources": list(row.sources),
        "note": row.note or None,
        "matrix_line": row.line,
    }


def matrix_query(
    matrix: Matrix,
    spec: str | None,
    cuda: str | None = None,
    cudnn: str | None = None,
    os_name: str | None = None,
) -> MatrixResult:
    """Rows for ``spec`` (a package or requirement), filtered by CUDA / cuDNN series and OS."""
    query = spec or ""
    rows = [] if spec else list(matrix.frameworks)  # one package's rows are built alone when a spec names it
    if spec:
        try:
            req = parse_requirement(spec)
        except InvalidRequirement as exc:
            raise UserError(f"not a requirement: {spec!r} ({exc})") from exc
        name = canonicalize_name(req.name)
        entry = matrix.cuda_name(name) if name not in matrix.packages() else None
        if entry is not None:  # a name that carries CUDA: what it is, and its framework's rows for a plugin
            from .cuda_names import name_record

            record = name_record(entry, name, req.specifier, matrix)
            rows = matrix.find(name, req.specifier) if entry.version_is == "framework" else []
            result = MatrixResult(query, releases=[release_record(matrix, r) for r in in_listing_order(rows)])
            result.names = [record]
            return result
        if name not in matrix.packages():
            from .suggest import unknown_packages

            return MatrixResult(query, message=unknown_packages([req.name], matrix.packages()))
        rows = _as_asked(req.specifier, matrix.find(name, req.specifier))
    try:
        if cuda:
            want = CudaVersion.parse(cuda)
            query += f" cuda={want}"
            rows = [r for r in rows if r in matrix.using_cuda(want)]
        if cudnn:
            want_dnn = CudnnVersion.parse(cudnn)
            query += f" cudnn={want_dnn.series}"
            rows = [r for r in rows if r in matrix.using_cudnn(want_dnn)]
    except VersionError as exc:
        raise UserError(str(exc)) from exc
    if os_name:
        rows = [r for r in rows if os_name in r.os]
    rows = in_listing_order(rows)
    if not spec and not cuda and not cudnn:
        return MatrixResult("", packages=_summary(matrix, rows))
    if spec and len({r.version for r in rows}) == 1 and len(rows) > 1:
        # One release on several operating systems: that release's record (for --os, else Linux),
        # with the other systems' records beside it.
        rows.sort(key=lambda r: (os_name or "linux") not in r.os)
        release = release_record(matrix, rows[0])
        release["other_os"] = [release_record(matrix, r) for r in rows[1:]]
        return MatrixResult(query.strip(), releases=[release])
    result = MatrixResult(query.strip(), releases=[release_record(matrix, r) for r in rows])
    if not rows:
        result.message = f"no release in the matrix matches {query.strip()!r}" + (
            _elsewhere(matrix, spec, os_name) if spec and not cuda and not cudnn else ""
        )
    return result


def _as_asked(spec: SpecifierSet, rows: list[FrameworkRelease]) -> list[FrameworkRelease]:
    """An exact pin of a release a row covers, shown as that release (``cupy-cuda11x==12.0.0`` of the 12.2.0 row:
    its install line pins 12.0.0), as plan installs it; a release that cannot exist (``artifact.may_exist``) stays
    the row."""
    from packaging.version import InvalidVersion, Version

    from .artifact import may_exist
    from .specs import exact_version

    pinned = exact_version(spec)
    if pinned is None:
        return rows
    try:
        version = Version(pinned.split("+")[0])
    except InvalidVersion:
        return rows
    # the rule plan follows: PyPI's recorded list, or the row's own index or find-links page, may hold it
    return [
        r.for_version(version) if r.version != version and r.matches(version) and may_exist(r, version) else r
        for r in rows
    ]


def in_listing_order(rows: list[FrameworkRelease]) -> list[FrameworkRelease]:
    """Rows as every listing gives them: by package, then release, newest first (then by operating system)."""
    out = sorted(rows, key=lambda r: r.os)
    out.sort(key=lambda r: r.version, reverse=True)
    out.sort(key=lambda r: r.package)
    return out


def _elsewhere(matrix: Matrix, spec: str, os_name: str | None) -> str:
    """Where to look instead: the framework's own name (jaxlib 0.5.0 is jax[cuda12]), else the nearest releases."""
    import shlex

    from .solve import nearest_known, under_its_own_name

    req = parse_requirement(spec)
    renamed = under_its_own_name(req, matrix)
    if renamed is not None:
        owner = renamed[0]
        command = shlex.join(["dnnresolve", "matrix", f"{owner}{req.specifier}"])
        return f"; it lists {req.name}{req.specifier} under {owner}: `{command}`"
    near = nearest_known(req, matrix, os_name)
    return f"; it knows {near}" if near else ""


def _summary(matrix: Matrix, rows: list[FrameworkRelease]) -> list[dict[str, Any]]:
    by_package: dict[str, list[FrameworkRelease]] = {}
    for r in rows:
        by_package.setdefault(r.package, []).append(r)
    out = []
    for name in sorted(by_package):
        rels = sorted(by_package[name], key=lambda r: r.version)
        out.append(
            {
                "package": name,
                "rows": len(rels),
                "oldest": str(rels[0].version),
                "newest": str(rels[-1].version),
            }
        )
    return out
