"""The other releases a plan offers when the one asked for cannot run (issue #21, Deliver 5), as properties over a
table of machines and requirements, checked against the solver on the packaged matrix."""

from __future__ import annotations

import sys
from collections.abc import Callable
from subprocess import CompletedProcess
from typing import Any

import pytest
from packaging.version import Version

from dnnresolve.compat import MINOR_VERSION_COMPAT
from dnnresolve.machine import CudaInstall, CudnnInstall, Gpu, Runtime
from dnnresolve.matrix import load_matrix, packaged_matrix_path
from dnnresolve.plan import make_plan
from dnnresolve.plan_options import Option
from dnnresolve.records import replace
from dnnresolve.solve import solve
from dnnresolve.solve.checks import evaluate
from dnnresolve.solve.results import Candidate, Status
from dnnresolve.specs import parse_requirement
from dnnresolve.versions import ComputeCapability, CudaVersion, CudnnVersion, DriverVersion, PythonVersion

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

RunCli = Callable[..., CompletedProcess[str]]

MATRIX = load_matrix()


def _machine(gpu: str, cc: str, driver: str, python: str, cuda: str = "", cudnn: str = "") -> Runtime:
    return Runtime(
        os="linux",
        driver=DriverVersion.parse(driver),
        gpus=[Gpu(gpu, ComputeCapability.parse(cc))],
        cuda=[CudaInstall(CudaVersion.parse(cuda), f"/usr/local/cuda-{cuda}")] if cuda else [],
        cudnn=[CudnnInstall(CudnnVersion.parse(cudnn), "/usr/lib", loads_first=True)] if cudnn else [],
        python=PythonVersion.parse(python),
    )


MACHINES = {
    "K80/470/3.11": _machine("Tesla K80", "3.7", "470.82.01", "3.11"),
    "K80/470/3.10": _machine("Tesla K80", "3.7", "470.82.01", "3.10"),
    "T4/470/3.11": _machine("Tesla T4", "7.5", "470.82.01", "3.11"),
    "T4/450/3.8": _machine("Tesla T4", "7.5", "450.80.02", "3.8"),
    "K20m/375/3.6": _machine("Tesla K20m", "3.5", "375.26", "3.6", "8.0", "5.0.5"),
    "A100/525/3.12": _machine("NVIDIA A100-SXM4-80GB", "8.0", "525.60.13", "3.12"),
    "V100/418/3.7": _machine("Tesla V100-SXM2-16GB", "7.0", "418.87.01", "3.7", "10.1", "7.6.5"),
    "P100/384/3.6": _machine("Tesla P100-PCIE-16GB", "6.0", "384.81", "3.6", "9.0", "7.0.5"),
}
SPECS = [
    "torch==2.8.0",
    "torch==2.1.0",
    "torch==1.13.1",
    "tensorflow==2.15.0",
    "tensorflow-gpu==1.15.0",
    "jax[cuda12]==0.4.30",
]


def _others(spec: str, rt: Runtime) -> list[Option]:
    plan = make_plan(solve([parse_requirement(spec)], rt, MATRIX), rt, MATRIX)
    return [o for o in plan.requirements[0].options if " instead" in o.title and o.title.startswith("use ")]


def _new_env(o: Option) -> bool:
    return any(s.argv[:2] == ("conda", "create") for s in o.steps)


def _env_runtime(o: Option, rt: Runtime) -> Runtime:
    create = next(s for s in o.steps if s.argv[:2] == ("conda", "create"))
    return replace(rt, python=PythonVersion.parse(create.argv[-1].split("=")[-1]))


def _runs(c: Candidate, rt: Runtime, clean: bool = False) -> bool:
    """Whether the build runs on ``rt`` as the solver judges it, with every check the machine can answer answered."""
    checks = evaluate(c.release, c.cuda, rt, MATRIX)
    if any(k.status is Status.UNKNOWN and k.found for k in checks if k.component in ("driver", "compute_capability")):
        return False
    if any(k.status is Status.WARN and k.gap for k in checks if k.component == "compute_capability"):
        return False
    if any(k.status is Status.UNKNOWN for k in checks if k.component in ("cuda", "cudnn")):
        return False
    if clean and any(k.status is Status.WARN and not k.gap for k in checks):
        return False
    # (the install check counts: a plan's step installs the form with the extra)
    return not any(k.status is Status.FAIL for k in checks)


def _releases_that_run_here(spec: str, rt: Runtime, clean: bool = False) -> list[Candidate]:
    name = parse_requirement(spec).name
    asked = {c.release.version for c in solve([parse_requirement(spec)], rt, MATRIX).results[0].requested}
    wants_gpu = True
    out = []
    for row in MATRIX.releases(name, rt.os):
        if row.version in asked:
            continue
        for cuda in row.cuda or [None]:
            if cuda is None and wants_gpu:
                continue
            if _runs(Candidate(row, cuda), rt, clean):
                out.append(Candidate(row, cuda))
                break
    return out


CASES = [(m, s) for m in MACHINES for s in SPECS]


@pytest.mark.parametrize(("machine", "spec"), CASES)
def test_every_other_release_offered_runs_on_the_machine(machine: str, spec: str) -> None:
    rt = MACHINES[machine]
    for o in _others(spec, rt):
        assert o.candidate is not None, o.title
        target = _env_runtime(o, rt) if _new_env(o) else rt
        assert _runs(o.candidate, target), (o.title, [k.reason for k in o.candidate.checks])


@pytest.mark.parametrize(("machine", "spec"), CASES)
def test_a_caveat_is_named_never_hidden(machine: str, spec: str) -> None:
    rt = MACHINES[machine]
    for o in _others(spec, rt):
        assert o.candidate is not None
        warned = [k for k in o.candidate.checks if k.status is Status.WARN and not k.gap]
        words = o.title.split(": it runs with what this machine has", 1)[1].removesuffix(", but not with pip")
        assert bool(warned) == bool(words), (o.title, [k.reason for k in warned])
        assert [k.reason for k in warned] == o.notes


@pytest.mark.parametrize(("machine", "spec"), CASES)
def test_a_new_environment_only_for_what_this_python_cannot_give(machine: str, spec: str) -> None:
    rt = MACHINES[machine]
    runs = _releases_that_run_here(spec, rt)
    clean = _releases_that_run_here(spec, rt, clean=True)
    for o in _others(spec, rt):
        if not _new_env(o):
            continue
        assert o.candidate is not None
        major = o.candidate.release.version.major
        caveated = ": it runs with what this machine has," in o.title
        same = [c.label for c in (runs if caveated else clean) if c.release.version.major == major]
        assert not same, (o.title, same)


@pytest.mark.parametrize(("machine", "spec"), CASES)
def test_the_newest_release_that_runs_here_is_offered(machine: str, spec: str) -> None:
    rt = MACHINES[machine]
    best = solve([parse_requirement(spec)], rt, MATRIX).results[0].best
    if best is None or best.ok:
        return  # the release asked for runs: no other is offered
    runs = _releases_that_run_here(spec, rt)
    # (an offer is the newest release its row covers: compared by the row, the matrix's unit of facts)
    offered = {o.candidate.release.row for o in _others(spec, rt) if o.candidate and not _new_env(o)}
    if runs:
        newest = max(runs, key=lambda c: c.release.version).release
        assert newest.row in offered, (sorted(offered), str(newest.version))
    else:
        assert not offered


@pytest.mark.parametrize("machine", ["K80/470/3.11", "T4/470/3.11"])
def test_a_cuda_11_8_torch_2_in_this_python_comes_before_an_old_one_in_a_new_environment(machine: str) -> None:
    # issue #21: a K80 (sm_37) or T4 on driver 470 with Python 3.11 asking for torch 2.8.0 was offered only torch
    # 1.12.1 in a new Python 3.10 environment; torch 2.5.1's CUDA 11.8 build carries sm_37 and driver 470 runs
    # CUDA 11.8 through minor-version compatibility, in the Python already there
    rt = MACHINES[machine]
    first = _others("torch==2.8.0", rt)[0]
    assert first.candidate is not None and first.candidate.release.version.major == 2
    assert first.candidate.cuda == CudaVersion.parse("11.8")
    assert not _new_env(first)
    said = "it runs with what this machine has, through CUDA 11.x minor-version compatibility"
    if machine.startswith("K80"):  # its cu118 wheels bundle cuDNN 9.1, which lists 5.0 and newer: a caveat too
        assert first.title.endswith(f"{said} and with cuDNN turned off (cuDNN 9.1 does not support sm_37)")
    else:
        assert first.title.endswith(said)
    how = MATRIX.driver_table("linux").check(DriverVersion.parse("470.82.01"), CudaVersion.parse("11.8")).how
    assert how == MINOR_VERSION_COMPAT
    assert "download.pytorch.org/whl/cu118" in first.steps[-1].shell


def test_the_t4_case_as_a_user_runs_it(run_cli: RunCli) -> None:
    r = run_cli("plan", "torch==2.8.0", "--no-detect", "--driver", "470.82.01", "--gpu", "T4", "--python", "3.11")
    options = r.stdout.split("Options, best first:\n", 1)[1]
    first = options.split("\n  2. ", 1)[0]
    assert first.startswith("  1. use torch 2."), first
    assert "minor-version compatibility" in first and "new environment" not in first
    assert "conda create" not in first


# The offers held to the data itself: the matrix file's own per-variant architecture lists, read raw (not through
# the solver), decide which torch builds carry code for a GPU.
def _raw_torch_rows() -> list[dict[str, Any]]:
    data = tomllib.loads(packaged_matrix_path().read_text(encoding="utf-8"))
    return [r for r in data["framework"] if r["package"] == "torch" and "linux" in r["os"]]


def _cc(text: str) -> tuple[int, int]:
    major, minor = text.split(".")
    return int(major), int(minor)


def _carries_code_for(row: dict[str, Any], cuda: str, gpu: str) -> bool:
    """Whether the row's build for ``cuda`` has SASS for ``gpu`` (same major, minor at or below) or PTX at or below
    it, by the lists the file states for that variant (the row's own lists stand for its default build)."""
    series = ".".join(cuda.split(".")[:2])
    lists = next(
        ((i.get("sm", []), i.get("ptx", [])) for i in row["install"] if i.get("cuda") == series and "sm" in i),
        (row.get("sm", []), row.get("ptx", [])) if row.get("cuda_default") == series else ([], []),
    )
    g = _cc(gpu)
    return any(_cc(s)[0] == g[0] and _cc(s) <= g for s in lists[0]) or any(_cc(p) <= g for p in lists[1])


K80_CASES = ["K80/470/3.10", "K80/470/3.11"]


@pytest.mark.parametrize("machine", K80_CASES)
def test_every_torch_offered_to_a_k80_has_code_for_it_in_the_data(machine: str) -> None:
    # issue #21: each torch build offered instead of 2.8.0 must carry sm_37 SASS (or PTX at or below it) by the
    # architecture list the matrix states for that very CUDA variant
    rt = MACHINES[machine]
    rows = {r["version"]: r for r in _raw_torch_rows()}
    offers = [o for o in _others("torch==2.8.0", rt) if o.candidate is not None]
    assert offers
    for o in offers:
        assert o.candidate is not None and o.candidate.cuda is not None
        row = rows[str(o.candidate.release.version)]
        assert _carries_code_for(row, str(o.candidate.cuda), "3.7"), (o.title, str(o.candidate.cuda))


def _newest_torch_with_k80_code(python: str, driver: str) -> tuple[str, str]:
    table = MATRIX.driver_table("linux")
    best: tuple[Version, str] | None = None
    for row in _raw_torch_rows():
        if row["version"] == "2.8.0" or python not in row.get("python", []):
            continue
        for cuda in row.get("cuda", []):
            if not table.check(DriverVersion.parse(driver), CudaVersion.parse(cuda)).ok:
                continue
            if _carries_code_for(row, cuda, "3.7") and (best is None or Version(row["version"]) > best[0]):
                best = (Version(row["version"]), cuda)
    assert best is not None
    return str(best[0]), best[1]


def test_the_k80_case_as_a_user_runs_it(run_cli: RunCli) -> None:
    # issue #21: Tesla K80, driver 470, Python 3.10, torch==2.8.0: the first offer is the newest torch whose build
    # for a CUDA the driver runs carries sm_37 code, in the Python already there (the data decides which)
    version, cuda = _newest_torch_with_k80_code("3.10", "470.82.01")
    r = run_cli(
        "plan", "torch==2.8.0", "--no-detect", "--driver", "470.82.01", "--gpu", "Tesla K80", "--python", "3.10"
    )
    options = r.stdout.split("Options, best first:\n", 1)[1]
    first = options.split("\n  2. ", 1)[0]
    assert first.startswith(f"  1. use torch {version} instead: it runs with what this machine has"), first
    assert f"download.pytorch.org/whl/cu{cuda.replace('.', '')}" in first, first
    assert "new environment" not in first and "conda create" not in first
