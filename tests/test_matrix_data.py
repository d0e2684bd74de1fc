"""Invariants across the tables of the packaged matrix: what one row names, another row must hold."""

from __future__ import annotations

import re
from urllib.parse import urlparse

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from dnnresolve.machine import CudaInstall, CudnnInstall, Gpu, Runtime
from dnnresolve.matrix import Matrix, load_matrix, packaged_matrix_path
from dnnresolve.model import FrameworkRelease
from dnnresolve.solve import solve
from dnnresolve.solve.results import Status
from dnnresolve.specs import parse_requirement
from dnnresolve.versions import ComputeCapability, CudaVersion, CudnnVersion, PythonVersion

BLOCKING = (Status.FAIL, Status.UNKNOWN)


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    return load_matrix(packaged_matrix_path())


def test_every_cuda_a_framework_names_is_in_the_cuda_table(matrix: Matrix) -> None:
    missing = sorted(
        {
            f"{f.package} {f.version}: CUDA {c}"
            for f in matrix.frameworks
            for c in f.cuda
            if matrix.cuda_release(c) is None
        }
    )
    assert not missing, missing


def test_every_cudnn_series_a_framework_names_exists(matrix: Matrix) -> None:
    series = {r.version.series for r in matrix.cudnn}
    missing = sorted(
        {f"{f.package} {f.version}: cuDNN {c}" for f in matrix.frameworks for c in f.cudnn if c.series not in series}
    )
    assert not missing, missing


def test_urls_are_well_formed(matrix: Matrix) -> None:
    for f in matrix.frameworks:
        for url in (f.source, *f.sources):
            assert urlparse(url).scheme == "https" and urlparse(url).netloc, (f.package, f.version, url)
        for r in f.install:
            for url in (r.index_url, r.extra_index_url, r.find_links, r.url):
                if url:
                    assert urlparse(url).scheme == "https" and urlparse(url).netloc, (f.package, f.version, url)


def test_pip_recipes_name_their_own_package(matrix: Matrix) -> None:
    for f in matrix.frameworks:
        for r in f.install:
            if r.kind == "pip":
                name = canonicalize_name(Requirement(r.requirement).name)
                # jaxlib's CUDA wheels were installed through jax's extras (jax[cuda111] -f ...).
                assert name in f.names or (f.package == "jaxlib" and name == "jax"), (
                    f.package,
                    f.version,
                    r.requirement,
                )


def test_recipe_cuda_is_a_variant_of_the_row(matrix: Matrix) -> None:
    from dnnresolve.conda_builds import is_own_build

    for f in matrix.frameworks:
        variants = {c.series for c in f.cuda}
        for r in f.install:
            if is_own_build(r):
                # a channel's own builds (Anaconda's, conda-forge's TensorFlow) are other artifacts than the row's:
                # each cites its recipe
                assert r.url, (f.package, f.version, r.packages)
            elif r.cuda:
                assert CudaVersion.parse(r.cuda).series in variants, (f.package, f.version, r.cuda)


def test_default_variant_is_one_of_the_variants(matrix: Matrix) -> None:
    for f in matrix.frameworks:
        if f.cuda_default is not None:
            assert f.cuda_default.series in {c.series for c in f.cuda}, (f.package, f.version)


def test_covered_releases_do_not_overlap(matrix: Matrix) -> None:
    by_key: dict[tuple[str, str], list[object]] = {}
    for f in matrix.frameworks:
        for o in f.os:
            by_key.setdefault((f.package, o), []).append(f)
    for (package, os_name), rows in by_key.items():
        for row in rows:
            others = [r for r in rows if r is not row and r.matches(row.version)]  # type: ignore[attr-defined]
            assert not others, (package, os_name, str(row.version))  # type: ignore[attr-defined]


def test_cuda_driver_minimums_rise_with_the_toolkit(matrix: Matrix) -> None:
    rows = sorted(matrix.cuda, key=lambda c: c.version)
    for a, b in zip(rows, rows[1:]):
        if a.version.major == b.version.major:
            assert a.driver_min_linux <= b.driver_min_linux, (str(a.version), str(b.version))


def test_gpu_names_are_unique(matrix: Matrix) -> None:
    from dnnresolve.matrix.nvidia import gpu_key

    seen: dict[str, str] = {}
    for g in matrix.gpus:
        for n in (g.name, *g.aliases):
            k = gpu_key(n)
            assert seen.get(k, g.name) == g.name, (n, seen.get(k), g.name)
            seen[k] = g.name


def test_pins_are_for_known_releases(matrix: Matrix) -> None:
    for p in matrix.wheel_pins:
        assert matrix.find(p.package, f"=={p.version}"), (p.package, str(p.version))
        for text in p.requires:
            assert canonicalize_name(Requirement(text).name).startswith(
                ("nvidia-", "cuda-toolkit", "triton", "jax-cuda", "tensorrt")
            ), text


# one GPU of each compute capability the rows name, Kepler to Blackwell
GPU_CCS = ("3.0", "3.5", "3.7", "5.0", "5.2", "6.0", "6.1", "7.0", "7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0")
GPUS = [ComputeCapability.parse(cc) for cc in GPU_CCS]


def _machine_for(
    row: FrameworkRelease, cuda: CudaVersion | None, os: str, python: PythonVersion, gpu: ComputeCapability, m: Matrix
) -> Runtime:
    """A machine made of what the row states for this variant: its CUDA's driver, that CUDA, the cuDNN it was built
    with, the Python and the GPU given."""
    rt = Runtime(os=os, python=python, gpus=[Gpu("a GPU", gpu)])
    if cuda is None:
        return rt
    toolkit = CudaVersion.parse(f"{cuda.major}.{cuda.parts[1] if len(cuda.parts) > 1 else 0}")
    rt.driver = m.driver_table(os).min_driver_for(toolkit)
    rt.cuda = [CudaInstall(toolkit, "/usr/local/cuda")]
    builds = row.cudnn_for(cuda)
    if builds:
        b = max(builds)
        rt.cudnn = [CudnnInstall(CudnnVersion.parse(".".join(map(str, b.key(2)))), "/usr/lib", loads_first=True)]
    return rt


def test_every_variant_runs_on_a_machine_made_of_what_its_row_states(matrix: Matrix) -> None:
    # A row no machine can satisfy is a data error: a CUDA without a driver figure for a system it is built for
    # (CUDA 13.x on Windows, before its branch minimum was recorded), a cuDNN series the rule rejects, a GPU
    # floor above every architecture the wheels carry...
    never = []
    for row in matrix.frameworks:
        spec = parse_requirement(f"{row.package}=={row.version}")
        for cuda in row.cuda or (None,):
            for os in row.os:
                fails: list[str] = []
                for python, gpu in ((p, g) for p in reversed(row.python) for g in GPUS):
                    rt = _machine_for(row, cuda, os, python, gpu, matrix)
                    result = solve([spec], rt, matrix).results[0]
                    mine = [c for c in result.candidates if c.cuda == cuda and c.release.os == row.os]
                    assert mine, (str(spec), os, str(cuda))
                    # (what a pin without the extra its CUDA build needs installs is the pin's matter, not the row's;
                    # so is a release pip cannot install, recorded from its resolver: tensorflow[and-cuda]==2.15.0)
                    checks = [c for c in mine[0].checks if c.component not in ("extras", "install")]
                    fails = [f"{c.component}: {c.reason}" for c in checks if c.status in BLOCKING]
                    if not fails:
                        break
                if fails:
                    never.append(f"{spec} {os} CUDA {cuda}: {fails}")
    assert never == []


_UNKNOWN_CODE = re.compile(r"GPU code unknown for CUDA ((?:\d+\.\d+)(?:(?:, | and )\d+\.\d+)*)")


def _series_said_unknown(note: str) -> set[str]:
    """The CUDA series a note says it has no architecture list for ("GPU code unknown for CUDA 11.8, 12.1: why")."""
    return {s for m in _UNKNOWN_CODE.finditer(note) for s in re.split(r", | and ", m.group(1))}


def test_every_torch_cuda_variant_has_its_gpu_code_or_says_why_not(matrix: Matrix) -> None:
    # issue #21: a plan can only offer the build that carries code for the GPU when each variant's code is known;
    # a variant whose list could not be read from PyTorch's build scripts says so in a note, never stays silent
    silent = []
    for f in matrix.frameworks:
        if f.package != "torch":
            continue
        unknown = _series_said_unknown(f.note)
        for r in f.install:
            if not r.cuda:
                continue
            series = CudaVersion.parse(r.cuda).series
            known = variant_states_code(f, series)
            if not known and str(series) not in unknown | _series_said_unknown(r.note):
                silent.append(f"torch {f.version} {'/'.join(f.os)} {r.kind} CUDA {series}")
    assert not silent, f"{len(silent)} variants without GPU code or a note saying why: {sorted(set(silent))}"


def variant_states_code(f: FrameworkRelease, series: CudaVersion) -> bool:
    """Whether the row states the GPU code of its CUDA ``series`` variant: a recipe of that series lists it (code
    only some build-script states carry, ``sm_unconfirmed``, included), or the series is the default build's and
    the row lists it."""
    return any(
        (o.sm or o.ptx or o.sm_exact or o.sm_unconfirmed or o.ptx_unconfirmed)
        and o.cuda
        and CudaVersion.parse(o.cuda).series == series
        for o in f.install
    ) or (f.cuda_default is not None and f.cuda_default.series == series and bool(f.sm or f.ptx))
