"""Properties over the whole matrix (issue 21): every framework row with CUDA builds, every release it covers.

The releases are PyPI's, recorded once (``src/dnnresolve/pypi_releases.json``, 2026-12-01): the final releases
with a Linux x86_64 or pure-Python wheel that the row covers. A row whose releases PyPI no longer serves (torch
0.4, jaxlib before 0.4.13, old onnxruntime-gpu) stands for its own release and, where its builds come from
another index (jaxlib's find-links page, Paddle's), for the release its stretch starts at. Each release is
planned in-process on an exact-fit machine built from the row: the build the pin installs (the index's default,
or the one a post release names), the minimum driver of that build's CUDA, a GPU whose architecture the build
carries code for (else the floor the row or the CUDA release states), the newest Python the row has wheels for,
and the system CUDA and cuDNN where the release loads them from the system.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from packaging.version import Version

from dnnresolve import artifact
from dnnresolve.compat import CudnnRule
from dnnresolve.machine import CudaInstall, CudnnInstall, Gpu, Runtime
from dnnresolve.matrix import Matrix, load_matrix
from dnnresolve.model import FrameworkRelease
from dnnresolve.plan import make_plan
from dnnresolve.solve import artifact_of, solve
from dnnresolve.solve.checks import evaluate, needs_system_cuda
from dnnresolve.solve.gpu import variant_code
from dnnresolve.solve.results import CANNOT_RUN, Status, preferred_variants
from dnnresolve.specs import Requirement, parse_requirement
from dnnresolve.versions import ComputeCapability, CudaVersion, CudnnVersion, DriverVersion

# pip cannot install tensorflow[and-cuda]==2.15.0 (its extra pins tensorrt==8.6.1.post1, which PyPI does not serve:
# recorded pip 26.3 dry-run): on a machine with no system CUDA the first option is the same series' 2.15.1, and
# 2.15.0 itself comes as its plain wheel (it loads CUDA and cuDNN from the system) further down
NOT_FIRST = {"tensorflow==2.15.0"}
# Found by the sweep: a row whose form loads CUDA from the system and that states neither its cuDNN nor why not
# (data to fill from the release's own page); none left
CUDNN_UNSAID: set[tuple[str, str]] = set()
# what a row's note says when it states no cuDNN on purpose: none used, or none the sources state
_NO_CUDNN_WHY = re.compile(
    r"cuDNN[^.;]*?(not stated|left out|not set|not confirmed|removed)|no cuDNN|without cuDNN", re.IGNORECASE
)


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    return load_matrix()


def _releases(row: FrameworkRelease) -> list[Version]:
    found = artifact.published(row.package) or {}
    # a Linux x86_64 wheel, or a pure-Python one (jax)
    covered = [
        v for v, kinds in found.items() if ("l" in kinds or "p" in kinds) and "y" not in kinds and row.matches(v)
    ]
    # a release another index serves (jaxlib's find-links page, Paddle's): the start of the row's stretch too
    starts = [
        Version(s.version)
        for s in row.covers
        if s.operator == ">=" and row.matches(Version(s.version)) and Version(s.version) not in found
    ]
    others = [v for v in starts if v != row.version and artifact.may_exist(row, v)]
    finals = {v for v in covered if not v.is_prerelease} or {row.version}
    return sorted(finals | set(others))


def _rows(matrix: Matrix) -> list[FrameworkRelease]:
    return [row for row in matrix.frameworks if row.cuda and "linux" in row.os]


def _requirement(row: FrameworkRelease, version: Version) -> Requirement:
    """The pin as a user writes it; with the extra of the default build's step where the bare name installs
    nothing that runs (jax before 0.4.30)."""
    rec = row.recipe(row.cuda_default or max(row.cuda))
    extras = sorted(rec.extras) if rec is not None and rec.extras and not row.runs_without_extras else []
    return parse_requirement(f"{row.package}{'[' + ','.join(extras) + ']' if extras else ''}=={version}")


def _fit(row: FrameworkRelease, build: CudaVersion, matrix: Matrix) -> Runtime:
    sm, _, _ = variant_code(row, build)
    cuda_row = matrix.cuda_release(build)
    floors = [c for c in (row.compute_capability_min, cuda_row and cuda_row.compute_capability_min) if c]
    cc = max(sm) if sm else max(floors, default=ComputeCapability.parse("7.0"))
    runtime = Runtime(
        os="linux", driver=matrix.driver_table().min_driver_for(build), gpus=[Gpu("fit", cc)], python=max(row.python)
    )
    if needs_system_cuda(row, matrix):
        runtime.cuda = [CudaInstall(build, "/usr/local/cuda")]
        cudnn = row.cudnn_for(build)
        if cudnn:
            runtime.cudnn = [CudnnInstall(max(cudnn), "/usr/lib", loads_first=True)]
    return runtime


def _cases(matrix: Matrix) -> Iterator[tuple[FrameworkRelease, Version, Requirement, CudaVersion, Runtime]]:
    for row in _rows(matrix):
        for version in _releases(row):
            req = _requirement(row, version)
            named = artifact_of(req, Runtime(python=max(row.python)), matrix).cuda
            build = next((c for c in row.cuda if named is not None and named.names_build(c)), None)
            # (a row that does not state its default build: the one a plan offers first)
            build = build or row.cuda_default or next(c for c in preferred_variants(row) if c is not None)
            yield row, version, req, build, _fit(row, build, matrix)


def test_the_sweep_covers_every_row_and_release(matrix: Matrix) -> None:
    rows = _rows(matrix)
    releases = sum(len(_releases(row)) for row in rows)
    # every framework row with a Linux CUDA build; the releases they cover (857: PyPI's on 2026-12-01, and the
    # stretch starts other indexes serve)
    assert len(rows) == len([r for r in matrix.frameworks if r.cuda and "linux" in r.os]) > 300
    assert releases >= 857


def test_an_exact_fit_machine_runs_that_exact_release(matrix: Matrix) -> None:
    wrong = []
    for row, version, req, build, runtime in _cases(matrix):
        solved = solve([req], runtime, matrix)
        result = solved.results[0]
        best = result.best
        where = f"row {row.row} {req} (CUDA {build})"
        if best is None or best.release.version != version or best.cuda is None or best.cuda.series != build.series:
            wrong.append(f"{where}: plans {best.label if best else 'nothing'}")
            continue
        if result.verdict == CANNOT_RUN:
            wrong.append(f"{where}: cannot run: {[c.reason for c in best.failures]}")
            continue
        plan = make_plan(solved, runtime, matrix).requirements[0]
        pinned = f"{row.package}=={version}"
        options = plan.options if pinned in NOT_FIRST else plan.options[:1]
        said = [" ".join((*s.argv, s.description)) for o in options for s in o.steps]
        if not any(str(version) in text for text in said):
            wrong.append(f"{where}: the first option's steps name another release: {said}")
    assert wrong == [], "\n".join(wrong)


def test_a_plain_pin_means_the_index_default_build(matrix: Matrix) -> None:
    wrong = []
    for row, _, req, build, runtime in _cases(matrix):
        if row.cuda_default is None or not row.on_pypi or build != row.cuda_default:
            continue
        runtime.driver = DriverVersion.parse("999.99")  # every build runs: the pin alone picks one
        best = solve([req], runtime, matrix).results[0].best
        if best is None or best.cuda is None or best.cuda.series != row.cuda_default.series:
            wrong.append(f"row {row.row} {req}: {best.label if best else 'nothing'}, not CUDA {row.cuda_default}")
    assert wrong == [], "\n".join(wrong)


def test_a_driver_below_every_builds_minimum_fails(matrix: Matrix) -> None:
    table = matrix.driver_table()
    wrong = []
    for row, _, req, _, runtime in _cases(matrix):
        floors = [
            min(d for d in (table.min_driver_for(c), table.family_min_driver(c.major)) if d is not None)
            for c in row.cuda
            if table.min_driver_for(c) is not None or table.family_min_driver(c.major) is not None
        ]
        if not floors:
            continue
        runtime.driver = DriverVersion.parse(f"{min(floors).parts[0] - 1}.00")
        result = solve([req], runtime, matrix).results[0]
        best = result.best
        if result.verdict != CANNOT_RUN or best is None or not any(c.component == "driver" for c in best.failures):
            wrong.append(f"row {row.row} {req}: driver {runtime.driver}: {result.verdict}")
    assert wrong == [], "\n".join(wrong)


def test_a_cudnn_of_another_major_fails_where_the_system_gives_cudnn(matrix: Matrix) -> None:
    wrong = []
    checked = 0
    for row, _, req, build, runtime in _cases(matrix):
        cudnn = row.cudnn_for(build)
        if not runtime.cudnn or row.cudnn_rule is CudnnRule.BUNDLED or row.cudnn_optional or not cudnn:
            continue
        checked += 1
        other = CudnnVersion.parse(f"{max(cudnn).major + 1}.0")
        runtime.cudnn = [CudnnInstall(other, "/opt/cudnn", loads_first=True)]
        result = solve([req], runtime, matrix).results[0]
        if result.verdict != CANNOT_RUN:
            wrong.append(f"row {row.row} {req}: cuDNN {other}: {result.verdict}")
    assert checked > 100 and wrong == [], "\n".join(wrong)


def _forms(row: FrameworkRelease) -> list[FrameworkRelease]:
    """The row as each of its pip steps installs it (``tensorflow`` and ``tensorflow[and-cuda]`` are two forms)."""
    forms = [row]
    for rec in row.install:
        if rec.kind == "pip" and rec.cuda:
            form = row.with_extras(rec.extras) if rec.extras else row.without_extras()
            if form is not None and form.form not in {f.form for f in forms}:
                forms.append(form)
    return forms


def test_every_form_that_loads_cuda_from_the_system_states_which(matrix: Matrix) -> None:
    """A build that loads CUDA (and cuDNN) from the system is checked against the system's: the plan and check
    name the CUDA it needs and, unless it brings cuDNN or uses none, the cuDNN; a row that states no cuDNN says
    why in its note. The machine knows neither, so the checks say what is needed."""
    wrong = []
    checked = 0
    for row in _rows(matrix):
        for form in _forms(row):
            if not needs_system_cuda(form, matrix):
                continue
            for build in form.cuda:
                checked += 1
                runtime = Runtime(os="linux", python=max(form.python) if form.python else None)
                checks = {c.component: c for c in evaluate(form, build, runtime, matrix)}
                where = f"row {row.row} {row.package} {row.version} form {sorted(form.form or ())} CUDA {build}"
                cuda = checks.get("cuda")
                if cuda is None or cuda.status is not Status.UNKNOWN or f"CUDA {build}" not in cuda.needed:
                    wrong.append(f"{where}: no check of the system's CUDA {build}")
                if form.cudnn_rule is CudnnRule.BUNDLED or form.cudnn_optional:
                    continue
                if form.cudnn_for(build):
                    cudnn = checks.get("cudnn")
                    if cudnn is None or not any(ch.isdigit() for ch in cudnn.needed):
                        wrong.append(f"{where}: states cuDNN {form.cudnn_for(build)} but checks none")
                elif not _NO_CUDNN_WHY.search(row.note) and (row.package, str(row.version)) not in CUDNN_UNSAID:
                    wrong.append(f"{where}: loads cuDNN from the system, states none and says not why")
    assert checked > 500 and wrong == [], "\n".join(wrong)


def test_a_release_installed_through_jax_s_extra_is_the_one_that_extra_pins(matrix: Matrix) -> None:
    """jaxlib before 0.4 was installed as ``jax[cudaNNN]``, and each jax release's extras pin one jaxlib release
    (its sdist's setup.py, recorded in tests/data/jax_sdist_pins.json). For every jaxlib release some jax pins, and
    every release a row with such steps covers: each ``jax[...]==V`` a plan writes pins that very jaxlib."""
    import json
    from pathlib import Path

    recorded = json.loads((Path(__file__).parents[1] / "data" / "jax_sdist_pins.json").read_text())["jax"]
    pins = {Version(jax): Version(d["jaxlib"]) for jax, d in recorded.items()}
    rows = [r for r in matrix.releases("jaxlib") if any(rec.requirement.startswith("jax[") for rec in r.install)]
    asked = sorted(v for v in {*pins.values(), *(r.version for r in rows)} if v < Version("0.4"))
    wrong, checked = [], 0
    for version in asked:
        req = parse_requirement(f"jaxlib=={version}")
        runtime = Runtime(os="linux", driver=DriverVersion.parse("470.82.01"), python=max(rows[0].python))
        solved = solve([req], runtime, matrix)
        plan = make_plan(solved, runtime, matrix).requirements[0]
        for option in plan.options[:1]:
            for step in option.steps:
                for word in step.argv:
                    m = re.fullmatch(r"jax\[[^\]]+\]==(\S+)", word)
                    if m and Version(m.group(1)) < Version("0.4"):  # (the recorded sdists: jax before 0.4)
                        checked += 1
                        if pins.get(Version(m.group(1))) != version:
                            wrong.append(f"jaxlib=={version}: {' '.join(step.argv)}")
    assert checked >= 10
    assert wrong == [], "\n".join(wrong)
