"""The driver a plan upgrades to: the least that runs a build of the release on the machine's GPU, and what each
level buys."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterable

import pytest

from dnnresolve.driver_levels import DRIVER_BOUND, driver_upgrade
from dnnresolve.machine import Gpu, Runtime
from dnnresolve.matrix import load_matrix
from dnnresolve.model import FrameworkRelease
from dnnresolve.plan import make_plan
from dnnresolve.records import replace
from dnnresolve.solve import solve, solve_requirement
from dnnresolve.solve.checks import evaluate
from dnnresolve.solve.results import Status
from dnnresolve.specs import parse_requirement
from dnnresolve.versions import ComputeCapability, CudaVersion, DriverVersion, PythonVersion

Run = Callable[..., subprocess.CompletedProcess[str]]


def machine(driver: str, cc: str | None = None, python: str = "3.11") -> Runtime:
    gpus = [Gpu(f"compute capability {cc}", ComputeCapability.parse(cc))] if cc else []
    return Runtime(os="linux", driver=DriverVersion.parse(driver), gpus=gpus, python=PythonVersion.parse(python))


@pytest.mark.parametrize("cc", [None, "7.5", "12.0"], ids=["no-gpu", "sm_75", "sm_120"])
def test_the_upgrade_is_the_least_driver_of_the_table_that_runs_a_build(cc: str | None) -> None:
    # every framework row with CUDA builds, on a machine with each driver branch the table names (its first driver
    # there): when the driver or the GPU's code stands in the way, the upgrade names a driver the solver then
    # accepts for some build of that release, and no lower driver of the table does.
    # The solver sees a driver only through the table's minima for the build's CUDA (the toolkit's own, the
    # major's minor-version floor), so drivers on the same side of each of them get one answer: each is asked once.
    m = load_matrix()
    table = m.driver_table("linux")
    drivers = table.drivers
    firsts = list({d.major: d for d in reversed(drivers)}.values())

    def side(driver: DriverVersion, minima: Iterable[DriverVersion | None]) -> tuple[bool, ...]:
        return tuple(driver.key(3) >= x.key(3) for x in minima if x is not None)

    def minima(cuda: CudaVersion) -> tuple[DriverVersion | None, ...]:
        return table.min_driver_for(cuda), table.family_min_driver(cuda.major)

    accepted: dict[tuple[object, ...], bool] = {}

    def runs(release: FrameworkRelease, cuda: CudaVersion, rt: Runtime, driver: DriverVersion) -> bool:
        """The solver accepts this build's driver and GPU with ``driver`` in place of the machine's."""
        key = (release.package, str(release.version), cuda, side(driver, minima(cuda)))
        if key not in accepted:
            checks = evaluate(release, cuda, replace(rt, driver=driver), m)
            accepted[key] = not any(c.status is Status.FAIL for c in checks if c.component in DRIVER_BOUND)
        return accepted[key]

    upgrades = 0
    for row in [r for p in sorted(m.packages()) for r in m.releases(p, "linux") if r.cuda]:
        req = parse_requirement(f"{row.package}=={row.version}")
        row_minima = [x for cuda in row.cuda for x in minima(cuda)]
        asked: set[tuple[bool, ...]] = set()
        for have in firsts:
            if side(have, row_minima) in asked:
                continue
            asked.add(side(have, row_minima))
            rt = machine(str(have), cc)
            result = solve_requirement(req, rt, m)
            best = result.best
            if best is None or not {c.component for c in best.failures} & set(DRIVER_BOUND):
                continue
            # the builds the driver stands in the way of: the one the pin installs (PyPI's), and any other that does
            # not run as it is (one that does is an option of its own, with no upgrade)
            blocked = [c for c in result.requested if any(k.component in DRIVER_BOUND for k in c.failures)]
            builds = [(c.release, c.cuda) for c in blocked if c.cuda is not None]
            upgrade = driver_upgrade(blocked, rt, m)
            above = [d for d in drivers if d.key(3) > have.key(3)]
            where = (row.package, str(row.version), str(have), cc)
            if upgrade is None:
                assert not any(runs(rel, cuda, rt, d) for d in above for rel, cuda in builds), where
                continue
            upgrades += 1
            assert upgrade.least.key(3) > have.key(3), where
            assert upgrade.candidate.cuda is not None
            assert runs(upgrade.candidate.release, upgrade.candidate.cuda, rt, upgrade.least), where
            lower = [d for d in above if d.key(3) < upgrade.least.key(3)]
            assert not any(runs(rel, cuda, rt, d) for d in lower for rel, cuda in builds), where
            assert upgrade.levels[0].driver == upgrade.least and upgrade.candidate.cuda in upgrade.levels[0].cuda
    assert upgrades > 100  # the property was put to the test


def test_torch_2_8_on_a_470_driver_upgrades_to_the_cuda_12_minor_version_floor() -> None:
    rt, m = machine("470.82.01", "7.5"), load_matrix()  # a T4
    rp = make_plan(solve([parse_requirement("torch==2.8.0")], rt, m), rt, m).requirements[0]
    # the check says so too: the default build's own minimum, and the floor that runs it with limits
    driver = rp.result.best.check("driver") if rp.result.best else None
    assert driver is not None and driver.reason == (
        "CUDA 12.8 needs driver >= 570.26; found 470.82.01 (a driver >= 525.60.13 runs it, with limits, "
        "through CUDA 12.x minor-version compatibility)"
    )
    [option] = [o for o in rp.options if o.needs_root]
    assert option.steps[0].description.startswith("upgrade the NVIDIA driver to >= 525.60.13 ")
    assert option.steps[-1].shell.endswith("--index-url https://download.pytorch.org/whl/cu126")
    assert option.title == (
        "keep torch 2.8.0: a driver >= 525.60.13 (the CUDA 12.6 build, through minor-version compatibility)"
    )
    assert option.notes[:3] == [
        "driver >= 525.60.13 runs the CUDA 12.6, 12.8 and 12.9 builds through CUDA 12.x minor-version compatibility "
        "(no JIT compiling of their PTX for a GPU the wheels carry no code for; features that need a newer driver "
        "unavailable)",
        "driver >= 560.28.03 runs the CUDA 12.6 build with full support",
        "driver >= 570.26 runs the CUDA 12.8 build with full support",
    ]


@pytest.mark.parametrize(
    ("cc", "least", "cuda"),
    [
        ("6.1", "525.60.13", "12.6"),  # a GTX 1080: only the CUDA 12.6 build still carries sm_61
        ("12.0", "525.60.13", "12.8"),  # an RTX 5090: only the 12.8 and 12.9 builds carry sm_120
    ],
)
def test_the_least_driver_runs_a_build_that_carries_the_gpus_code(cc: str, least: str, cuda: str) -> None:
    rt = machine("470.82.01", cc)
    result = solve_requirement(parse_requirement("torch==2.8.0"), rt, load_matrix())
    upgrade = driver_upgrade(result.requested, rt, load_matrix())
    assert upgrade is not None and str(upgrade.least) == least and str(upgrade.candidate.cuda) == cuda


def test_a_gpu_that_needs_its_ptx_compiled_moves_the_upgrade_to_full_support() -> None:
    # TensorFlow 2.15 carries PTX for compute_80 only beyond sm_75: an RTX 4090 (sm_89) needs it compiled, which a
    # driver running CUDA 12.2 through minor-version compatibility cannot do; 535.54.03 (CUDA 12.2's own) can
    rt = machine("530.30.02", "8.9")
    plan = make_plan(solve([parse_requirement("tensorflow==2.15.1")], rt, load_matrix()), rt, load_matrix())
    rp = plan.requirements[0]
    best = rp.result.best
    assert best is not None and [c.component for c in best.failures] == ["compute_capability"]
    [option] = [o for o in rp.options if o.needs_root]
    assert option.steps[0].description.startswith("upgrade the NVIDIA driver to >= 535.54.03 ")
    assert option.notes == ["driver >= 535.54.03 runs the CUDA 12.2 build with full support"]


def test_plan_names_the_least_driver_and_what_each_level_buys(run_cli: Run) -> None:
    target = ("--no-detect", "--python", "3.11", "--gpu", "T4")
    proc = run_cli("plan", "torch==2.8.0", *target, "--driver", "470.82.01", "--json")
    assert proc.returncode == 1, proc.stderr
    [option] = [o for o in json.loads(proc.stdout)["requirements"][0]["options"] if o["needs_root"]]
    assert option["steps"][0]["description"].startswith("upgrade the NVIDIA driver to >= 525.60.13 ")
    upgrade = option["driver_upgrade"]
    assert upgrade["least"] == "525.60.13" and upgrade["cuda"] == "12.6"
    levels = [(x["driver"], x["how"], x["cuda"]) for x in upgrade["levels"]]
    assert levels[:3] == [
        ("525.60.13", "minor_version_compat", ["12.6", "12.8", "12.9"]),
        ("560.28.03", "full", ["12.6"]),
        ("570.26", "full", ["12.8"]),
    ]
    # each level names where the matrix has it from: the minor-version table, then the toolkits' release notes
    assert "minor-version-compatibility" in upgrade["levels"][0]["source"]
    assert all(x["source"] for x in upgrade["levels"])
    text = run_cli("plan", "torch==2.8.0", *target, "--driver", "470.82.01").stdout
    assert "upgrade the NVIDIA driver to >= 525.60.13" in text and ">= 570.26" in text
    # a driver at that floor or above runs it as it is: the same answer
    proc = run_cli("plan", "torch==2.8.0", *target, "--driver", "535.104.05")
    assert "install it: nothing stands against it; read the warnings first (driver)" in proc.stdout
