"""`check` on conda environment files: one CUDA per environment (issue #21, Deliver 3). Each test runs the real
command on a real file and reads its JSON report."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dnnresolve.check_conda import build_selects, feature_cuda
from dnnresolve.sources.matchspec import parse_matchspec
from dnnresolve.versions import CudaVersion

Run = Callable[..., subprocess.CompletedProcess[str]]


def check_env(run_cli: Run, tmp_path: Path, deps: list[str], *target: str) -> tuple[int, dict[str, Any]]:
    env = tmp_path / "environment.yml"
    env.write_text(
        "name: x\nchannels:\n  - pytorch\n  - defaults\ndependencies:\n" + "".join(f"  - {d}\n" for d in deps)
    )
    proc = run_cli("check", "--json", str(env), *target)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def rules(report: dict[str, Any]) -> set[tuple[int, str, str]]:
    return {(f["line"], f["severity"], f["rule"]) for f in report["findings"]}


def checked(report: dict[str, Any]) -> list[str]:
    return [p["release"] for p in report["checked_lines"]]


def test_cudatoolkit_picks_the_build_the_driver_is_held_to(run_cli: Run, tmp_path: Path) -> None:
    # issue #21: pytorch=1.12.1 with cudatoolkit=11.3 was checked against the CUDA 10.2 build (driver >= 440.33);
    # the CUDA 11.3 build it installs needs 465.19.01, or 450.80.02 through minor-version compatibility
    deps = ["python=3.9", "pytorch=1.12.1", "cudatoolkit=11.3"]
    rc, report = check_env(run_cli, tmp_path, deps, "--driver", "440.33.01", "--gpu", "V100")
    assert rc == 1
    [f] = [f for f in report["findings"] if f["severity"] == "error"]
    assert f["line"] == 7 and "torch 1.12.1 (CUDA 11.3) cannot run" in f["message"]
    assert "CUDA 11.3 comes from the cudatoolkit=11.3" in f["message"]
    rc, report = check_env(run_cli, tmp_path, deps, "--driver", "460.32.03", "--gpu", "V100")
    assert rules(report) == {(7, "warning", "target-caveat")}
    assert "minor-version compatibility" in report["findings"][0]["message"]


def test_cuda_version_and_pytorch_cuda_narrow_the_build_too(run_cli: Run, tmp_path: Path) -> None:
    for pin in ("cuda-version=11.6", "pytorch-cuda=11.6", "cudatoolkit=11.6"):
        _, report = check_env(run_cli, tmp_path, ["python=3.9", "pytorch=1.12.1", pin], "--driver", "535.54.03")
        assert checked(report) == ["torch 1.12.1 for CUDA 11.6"], pin


def test_a_build_string_picks_the_build(run_cli: Run, tmp_path: Path) -> None:
    deps = ["python=3.9", "pytorch=1.12.1=py3.9_cuda11.3_cudnn8.3.2_0"]
    rc, report = check_env(run_cli, tmp_path, deps, "--driver", "440.33.01", "--gpu", "V100")
    assert rc == 1 and "torch 1.12.1 (CUDA 11.3) cannot run" in report["findings"][0]["message"]
    assert "torch 1.12.1 for CUDA 11.3" in checked(report)[0]


def test_frameworks_whose_conda_builds_need_different_cuda_are_an_error(run_cli: Run, tmp_path: Path) -> None:
    # tensorflow-gpu 1.13.1's conda builds (Anaconda's) are for CUDA 9.0, 9.2 and 10.0; pytorch 1.12.1's for
    # cudatoolkit 10.2, 11.3 and 11.6 (its install page): one environment, one cudatoolkit, no build of each in common
    deps = ["python=3.7", "tensorflow-gpu=1.13.1", "pytorch=1.12.1"]
    rc, report = check_env(run_cli, tmp_path, deps)
    assert rc == 1
    [f] = [f for f in report["findings"] if f["rule"] == "conda-cuda-mix"]
    assert f["line"] == 8 and f["severity"] == "error"
    assert "CUDA 10.2 or 11.3 or 11.6" in f["message"] and "CUDA 9.0 or 9.2 or 10.0" in f["message"]
    assert ":7)" in f["message"]
    # with a release of a CUDA in common (pytorch 1.1.0 has a CUDA 10.0 build) the pair is fine
    _, report = check_env(run_cli, tmp_path, ["python=3.7", "tensorflow-gpu=1.13.1", "pytorch=1.1.0"])
    assert not [f for f in report["findings"] if f["rule"] == "conda-cuda-mix"]


def test_a_feature_package_asks_for_its_cuda(run_cli: Run, tmp_path: Path) -> None:
    # issue #21: tensorflow-gpu=1.13.1, pytorch=1.1.0 and cuda92 passed. cuda92 is the metapackage whose
    # track_features picked PyTorch's CUDA 9.2 builds (0.4.1 and 1.0.0); pytorch 1.1.0 has none. It selects nothing
    # of Anaconda's tensorflow-gpu, whose builds carry no feature (and 1.13.1 has a 9.2 one besides)
    deps = ["python=3.6", "tensorflow-gpu=1.13.1", "pytorch=1.1.0", "cuda92"]
    rc, report = check_env(run_cli, tmp_path, deps)
    assert rc == 1
    assert {(8, "error", "cuda-disagreement")} == {r for r in rules(report) if r[1] == "error"}
    assert all("cuda92" in f["message"] and "9.2" in f["message"] for f in report["findings"])
    assert report["not_checked"] == []  # cuda92 is understood, not "GPU-related but not in the matrix"
    # pytorch 0.4.1 with cuda92 is its CUDA 9.2 build
    _, report = check_env(run_cli, tmp_path, ["python=3.6", "pytorch=0.4.1", "cuda92"], "--driver", "396.26")
    assert checked(report) == ["torch 0.4.1 for CUDA 9.2"]


def test_cpuonly_is_the_cpu_build(run_cli: Run, tmp_path: Path) -> None:
    rc, report = check_env(run_cli, tmp_path, ["python=3.9", "pytorch=1.12.1", "cpuonly"], "--driver", "390.48")
    assert rc == 0 and not [f for f in report["findings"] if f["severity"] == "error"]


def test_build_strings_and_feature_names_read() -> None:
    assert build_selects(parse_matchspec("pytorch=1.12.1=py3.9_cuda11.3_cudnn8.3.2_0").build) == (
        CudaVersion.parse("11.3"),
        False,
    )
    assert build_selects("cuda112py39h1234567_200") == (CudaVersion.parse("11.2"), False)
    assert build_selects("cpu_py39h1234567_0") == (None, True)
    assert build_selects("py39h1234567_0") is None
    assert build_selects("*cuda11.3*") == (CudaVersion.parse("11.3"), False)
    assert build_selects("cuda112*") == (CudaVersion.parse("11.2"), False)
    assert build_selects("*cpu*") == (None, True)
    assert build_selects("cuda*") is None
    assert feature_cuda("cuda92") == CudaVersion.parse("9.2")
    assert feature_cuda("cuda100") == CudaVersion.parse("10.0")
    assert feature_cuda("cudatoolkit") is None and feature_cuda("cuda") is None


def _conda_recipes() -> list[tuple[str, str, str]]:
    """(framework line, the recipe's CUDA-setting package, its CUDA) of every Linux conda recipe in the matrix that
    names its CUDA by a package of its own (cudatoolkit=, pytorch-cuda=, a feature package)."""
    from dnnresolve.matrix import load_matrix

    out = []
    for row in load_matrix().frameworks:
        if "linux" not in row.os:
            continue
        for rec in row.install:
            if rec.kind != "conda" or not rec.cuda or not rec.packages:
                continue
            sets = [p for p in rec.packages[1:] if p.startswith(("cudatoolkit", "pytorch-cuda")) or feature_cuda(p)]
            if sets and rec.packages[0].split("=")[0] in ("pytorch", "tensorflow-gpu"):
                out.append((rec.packages[0], sets[0], rec.cuda))
    return sorted(set(out))


def test_every_conda_recipe_of_the_matrix_is_checked_as_its_own_build() -> None:
    """A sweep: the environment a recipe of the matrix writes is judged as that recipe's CUDA build, whichever way
    the recipe names its CUDA (cudatoolkit=, pytorch-cuda=, cuda92)."""
    from dnnresolve.check import check_sources
    from dnnresolve.matrix import load_matrix
    from dnnresolve.sources import conda_env

    matrix = load_matrix()
    recipes = _conda_recipes()
    assert len(recipes) > 50
    for line, sets, cuda in recipes:
        text = f"dependencies:\n  - {line}\n  - {sets}\n"
        source = conda_env.read(Path("environment.yml"), text, Path("."))
        report = check_sources([source], None, matrix)
        assert [p.release.endswith(f"for CUDA {cuda}") for p in report.pins] == [True], (text, report.pins)
        assert not [f for f in report.findings if f.severity.value == "error"], (text, report.findings)


def test_the_fix_of_a_conda_line_is_the_cuda_pin_of_a_build_that_runs(run_cli: Run, tmp_path: Path) -> None:
    # in a conda environment the fix is the line that selects another build of the same release, written as the
    # release's own conda recipe writes it, not a pip command
    deps = ["python=3.9", "pytorch=1.12.1", "cudatoolkit=11.3"]
    _, report = check_env(run_cli, tmp_path, deps, "--driver", "440.33.01", "--gpu", "V100")
    [f] = [f for f in report["findings"] if f["severity"] == "error"]
    assert f["fix"] == "cudatoolkit=10.2 instead of cudatoolkit=11.3: the CUDA 10.2 build of pytorch 1.12.1 runs here"
    _, report = check_env(run_cli, tmp_path, ["python=3.6", "pytorch=0.4.1", "cuda92"], "--driver", "390.48")
    [f] = [f for f in report["findings"] if f["severity"] == "error"]
    assert f["fix"] == "cuda90 instead of cuda92: the CUDA 9.0 build of pytorch 0.4.1 runs here"


CUPY_BUILDS = Path(__file__).parent / "data" / "conda_forge_cupy.json"


def test_conda_cupy_is_the_pip_package_of_the_environments_cuda(run_cli: Run, tmp_path: Path) -> None:
    # conda-forge builds one `cupy` per CUDA and conda installs the one the environment's cuda-version / cudatoolkit
    # takes (tests/data/conda_forge_cupy.json: cupy 13.3.0 has CUDA 11.8 and 12.6 builds, 9.6.0 and 10.6.0 one per
    # CUDA from 9.2 to 11.2). Before, every conda cupy line was cupy-cuda12x: cupy=13.3.0 with cuda-version=11.8 was
    # "cupy-cuda12x==13.3.0.*: the matrix has no CUDA 11.8 build of it"
    cases = [
        (["python=3.10", "cupy=13.3.0", "cuda-version=11.8"], "cupy-cuda11x 13.3.0 for CUDA 11.8"),
        (["python=3.10", "cupy=13.3.0", "cuda-version=12.6"], "cupy-cuda12x 13.3.0 for CUDA 12.6"),
        (["python=3.9", "cupy=9.6.0", "cudatoolkit=10.2"], "cupy-cuda102 9.6.0 for CUDA 10.2"),
        (["python=3.9", "cupy=10.6.0", "cudatoolkit=11.3"], "cupy-cuda113 10.6.0 for CUDA 11.3"),
    ]
    for deps, release in cases:
        rc, report = check_env(run_cli, tmp_path, deps, "--driver", "570.86.15")
        assert checked(report) == [release], (deps, report["findings"])
        assert rc == 0 and not [f for f in report["findings"] if f["severity"] == "error"], deps


def test_every_conda_forge_cupy_build_is_checked_as_the_package_of_its_cuda() -> None:
    """A sweep over the conda-forge builds recorded from the feedstock: an environment of ``cupy=V`` and the CUDA
    pin of one of its builds is judged as the pip package of that CUDA, wherever the matrix has that release."""
    from dnnresolve.check import check_sources
    from dnnresolve.matrix import load_matrix
    from dnnresolve.sources import conda_env

    matrix = load_matrix()
    data = json.loads(CUPY_BUILDS.read_text())
    swept = 0
    for version, rel in data["releases"].items():
        for build in rel["linux_64"]:
            cuda = CudaVersion.parse(build["cuda"])
            names = [p for p in matrix.packages() if p.startswith("cupy-cuda")]
            ours = [
                p
                for p in names
                if matrix.find(p, f"=={version}")
                and any(
                    CudaVersion.parse(str(c)).series == cuda for row in matrix.find(p, f"=={version}") for c in row.cuda
                )
            ]
            if not ours:
                continue
            pin = f"cudatoolkit={cuda}" if cuda.major < 12 else f"cuda-version={cuda}"
            text = f"dependencies:\n  - cupy={version}\n  - {pin}\n"
            report = check_sources([conda_env.read(Path("environment.yml"), text, Path("."))], None, matrix)
            [p] = report.pins
            assert p.release.split(" ", 1)[0] in ours and p.release.endswith(f"for CUDA {cuda}"), (text, p)
            assert not [f for f in report.findings if f.severity.value == "error"], (text, report.findings)
            swept += 1
    assert swept > 100, swept


def test_the_shared_rule_agrees_with_every_recorded_conda_forge_build() -> None:
    """``conda_cuda.takes`` (check's and plan's one rule) against the ranges each recorded build's run requirements
    accept. Builds made before nvcc's run_exports became ``>=11.2,<12`` (cupy 8.5.0-9.4.0's CUDA 11.2 ones, exact
    ``11.2.*``) are the rule's known excess and left out."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    from dnnresolve.conda_cuda import takes

    data = json.loads(CUPY_BUILDS.read_text())
    grid = [CudaVersion.parse(f"{major}.{minor}") for major in (9, 10, 11, 12, 13) for minor in range(10)]
    compared = 0
    for version, rel in data["releases"].items():
        if Version(version) < Version("9.5.0"):
            continue
        for build in rel["linux_64"]:
            spec = build["takes"]
            accepts = SpecifierSet(spec) if spec[0] in "<>=" else SpecifierSet(f"=={spec}")
            for env in grid:
                assert takes(CudaVersion.parse(build["cuda"]), env) == (str(env) in accepts), (version, build, env)
                compared += 1
    assert compared > 5000, compared


# ------------------------------------------------------------------ an environment file is a new environment

ENV_FILES = {
    # the file pins its own CUDA (cudatoolkit 10.2), another than the active environment's 11.3
    "own-cuda": ["python=3.8", "pytorch=1.8.1", "cudatoolkit=10.2", "pip", {"pip": ["cupy-cuda102==9.6.0"]}],
    # no CUDA pin: what conda picks for the new environment, not what the active one holds
    "no-pin": ["python=3.9", "pytorch=1.12.1", "pip", {"pip": ["cupy-cuda12x==13.3.0"]}],
    # no Python pin either: the active environment's Python 3.9 is not the new environment's
    "bare": ["pytorch=1.12.1"],
}


def _write_env(path: Path, deps: list[Any]) -> Path:
    lines = ["name: new", "channels:", "  - pytorch", "dependencies:"]
    for d in deps:
        if isinstance(d, dict):
            lines += ["  - pip:"] + [f"    - {p}" for p in d["pip"]]
        else:
            lines.append(f"  - {d}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _verdict(run_cli: Run, env: Path, target: Path) -> dict[str, Any]:
    proc = run_cli("check", "--json", str(env), "--target", str(target))
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    return {
        "findings": sorted((f["line"], f["severity"], f["rule"], f["message"]) for f in report["findings"]),
        "checked": report["checked_lines"],
    }


def test_an_environment_file_is_judged_apart_from_the_active_environment(run_cli: Run, tmp_path: Path) -> None:
    # `conda env create -f environment.yml` makes a new environment: the active one's cudatoolkit, frameworks and
    # Python are not in it. Before, the file's pip line cupy-cuda102 was "held" to the active environment's CUDA
    # 11.3 (a conda-cuda-mix error although the file pins cudatoolkit=10.2), and a file without a pin was judged
    # as the build the active environment holds. The oracle: the same machine with no environment active.
    from .plan.test_conda_env import _env, conda_env

    root = conda_env(tmp_path)  # driver 570, system CUDA 12.4; env dl: cudatoolkit 11.3.1 and conda's torch 1.12.1
    active, bare = tmp_path / "active.json", tmp_path / "bare.json"
    active.write_text(run_cli("detect", "--root", str(root), "--json", env=_env()).stdout)
    bare.write_text(run_cli("detect", "--root", str(root), "--json").stdout)
    assert json.loads(active.read_text())["conda"]["cuda"] == "11.3"
    for name, deps in ENV_FILES.items():
        env = _write_env(tmp_path / f"{name}.yml", deps)
        seen = _verdict(run_cli, env, active)
        assert seen == _verdict(run_cli, env, bare), name
        assert not [f for f in seen["findings"] if f[2] == "conda-cuda-mix"], (name, seen)
    seen = _verdict(run_cli, tmp_path / "own-cuda.yml", active)
    assert [p["release"] for p in seen["checked"]] == ["torch 1.8.1 for CUDA 10.2", "cupy-cuda102 9.6.0 for CUDA 10.2"]


# ------------------------------------------------------------ builds a channel makes itself (Anaconda's TensorFlow)

# tests/data/anaconda_tensorflow_gpu.json: Anaconda's defaults channel builds tensorflow-gpu itself, for other CUDA
# versions than the PyPI wheels (2.4.1 for cudatoolkit 10.1 with cuDNN 7.6, where the wheel is CUDA 11.0 / cuDNN 8.0;
# 2.0.0 for 10.0 and 10.1), each held by its run requirement to its cudatoolkit series. The linux-64 GPU builds its
# recipes set up for 2.3.0 and 2.5.0 were never served (tests/test_anaconda_unpublished.py)
TF_BUILDS = Path(__file__).parent / "data" / "anaconda_tensorflow_gpu.json"


def _defaults_env(run_cli: Run, tmp_path: Path, deps: list[str], *target: str) -> tuple[int, dict[str, Any]]:
    env = tmp_path / "environment.yml"
    env.write_text("channels:\n  - defaults\ndependencies:\n" + "".join(f"  - {d}\n" for d in deps))
    proc = run_cli("check", "--json", str(env), *target)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def test_conda_tensorflow_gpu_is_anacondas_build_not_the_wheel(run_cli: Run, tmp_path: Path) -> None:
    # driver 418.87 serves CUDA 10.1 but not 11.x: conda's tensorflow-gpu 2.4.1 (a cudatoolkit 10.1 build) runs.
    # Before, it was "no release in the matrix satisfies it" (conda's =2.4.1 read as ==2.4.1.*)
    rc, report = _defaults_env(
        run_cli, tmp_path, ["python=3.8", "tensorflow-gpu=2.4.1"], "--driver", "418.87.01", "--gpu", "V100"
    )
    assert rc == 0 and not [f for f in report["findings"] if f["severity"] == "error"], report
    assert checked(report) == ["tensorflow 2.4.1 for CUDA 10.1"]
    # the environment's cudatoolkit picks the build: 2.0.0's CUDA 10.1 one, not its 10.0 one (the wheel's)
    _, report = _defaults_env(run_cli, tmp_path, ["tensorflow-gpu=2.0.0", "cudatoolkit=10.1"], "--driver", "418.87.01")
    assert checked(report) == ["tensorflow-gpu 2.0.0 for CUDA 10.1"]


def test_a_cudatoolkit_no_conda_build_takes_is_an_error(run_cli: Run, tmp_path: Path) -> None:
    # conda cannot install tensorflow-gpu 2.4.1 (its build needs cudatoolkit 10.1.*) with cudatoolkit=11.0, though
    # the PyPI wheel is a CUDA 11.0 build
    rc, report = _defaults_env(run_cli, tmp_path, ["python=3.8", "tensorflow-gpu=2.4.1", "cudatoolkit=11.0"])
    assert rc == 1
    [f] = [f for f in report["findings"] if f["severity"] == "error"]
    assert f["line"] == 5 and f["rule"] == "cuda-disagreement" and "11.0" in f["message"]
    assert "10.1" in f["fix"] and "11.0" not in f["fix"]


def test_conda_cuda_mix_reads_the_conda_builds(run_cli: Run, tmp_path: Path) -> None:
    # tensorflow-gpu 2.4.1's conda build (10.1) shares cudatoolkit 10.1 with pytorch 1.7.1's: judged as the CUDA 11.0
    # wheel, the pair would be a conda-cuda-mix error
    _, report = _defaults_env(run_cli, tmp_path, ["python=3.8", "tensorflow-gpu=2.4.1", "pytorch=1.7.1"])
    assert not [f for f in report["findings"] if f["rule"] == "conda-cuda-mix"], report["findings"]
    # 2.4.1's only conda build needs 10.1; pytorch 1.9.0's need 10.2, 11.1 or 11.3: one environment cannot hold both
    rc, report = _defaults_env(run_cli, tmp_path, ["python=3.8", "tensorflow-gpu=2.4.1", "pytorch=1.9.0"])
    [f] = [f for f in report["findings"] if f["rule"] == "conda-cuda-mix"]
    assert rc == 1 and f["line"] == 6 and "tensorflow-gpu==2.4.1 need CUDA 10.1 (" in f["message"]


def test_every_recorded_anaconda_tensorflow_build_is_checked_as_itself() -> None:
    """A sweep over the builds recorded from Anaconda's recipes: an environment of ``tensorflow-gpu=V`` and the
    cudatoolkit of one of its builds is judged as that build, with no error and no finding of another CUDA."""
    from dnnresolve.check import check_sources
    from dnnresolve.matrix import load_matrix
    from dnnresolve.sources import conda_env

    matrix = load_matrix()
    data = json.loads(TF_BUILDS.read_text())
    swept = 0
    for version, rel in data["releases"].items():
        if tuple(int(x) for x in version.split(".")) > (2, 5, 0):
            continue  # tensorflow-gpu's metapackage recipe stops at 2.5.0
        for build in rel["linux_64"]:
            if build.get("published") is False:
                continue  # its recipe set it up; the channel never served it (the matrix has no recipe of it)
            text = f"dependencies:\n  - tensorflow-gpu={version}\n  - cudatoolkit={build['cuda']}\n"
            report = check_sources([conda_env.read(Path("environment.yml"), text, Path("."))], None, matrix)
            [p] = report.pins
            assert p.release.endswith(f"{version} for CUDA {build['cuda']}"), (text, p)
            assert not [f for f in report.findings if f.severity.value == "error"], (text, report.findings)
            swept += 1
    assert swept >= 22, swept  # 25 recorded up to 2.5.0, less the three never served


# tests/data/conda_forge_tensorflow_jaxlib.json: conda-forge builds tensorflow and jaxlib itself, for CUDA versions of
# its own (tensorflow 2.6.0-2.9.1 for 10.2, 11.0, 11.1 and 11.2; 2.15.0 for 12.0; jaxlib 0.4.23 for 11.8 and 12.0),
# where the PyPI wheels are 11.2, 12.2 and 11.8 / 12.2 builds
FORGE_BUILDS = Path(__file__).parent / "data" / "conda_forge_tensorflow_jaxlib.json"


def _forge_env(run_cli: Run, tmp_path: Path, deps: list[str], *target: str) -> tuple[int, dict[str, Any]]:
    env = tmp_path / "environment.yml"
    env.write_text("channels:\n  - conda-forge\ndependencies:\n" + "".join(f"  - {d}\n" for d in deps))
    proc = run_cli("check", "--json", str(env), *target)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def test_conda_forge_builds_are_judged_as_themselves(run_cli: Run, tmp_path: Path) -> None:
    # before: "tensorflow==2.15.0: the matrix has no CUDA 12.0 build of it (build string cuda120py311...)", the same
    # for jaxlib 0.4.23; and conda-forge's tensorflow 2.7.0 with cudatoolkit 10.2 judged as the CUDA 11.2 wheel
    cases = [
        (["python=3.11", "tensorflow=2.15.0=cuda120py311h1234567_0"], "tensorflow 2.15.0 for CUDA 12.0"),
        (["python=3.11", "jaxlib=0.4.23=cuda120py311h1234567_200"], "jax 0.4.23 for CUDA 12.0"),
        (["python=3.11", "jaxlib=0.4.23", "cuda-version=11.8"], "jax 0.4.23 for CUDA 11.8"),
    ]
    for deps, release in cases:
        rc, report = _forge_env(run_cli, tmp_path, deps, "--driver", "535.54.03", "--gpu", "A100")
        assert checked(report) == [release], (deps, report["findings"])
        assert rc == 0, (deps, report["findings"])
    rc, report = _forge_env(
        run_cli, tmp_path, ["python=3.9", "tensorflow=2.7.0", "cudatoolkit=10.2"], "--driver", "440.33.01"
    )
    assert checked(report) == ["tensorflow 2.7.0 for CUDA 10.2"] and rc == 0, report["findings"]


def test_the_files_channel_order_picks_whose_build(run_cli: Run, tmp_path: Path) -> None:
    # tensorflow-gpu 2.4.1 of Anaconda's defaults (a CUDA 10.1 build) against conda-forge, first in the file
    env = tmp_path / "environment.yml"
    for first, release in (("defaults", "tensorflow 2.4.1 for CUDA 10.1"), ("conda-forge", None)):
        env.write_text(f"channels:\n  - {first}\n  - defaults\ndependencies:\n  - tensorflow-gpu=2.4.1\n")
        report = json.loads(run_cli("check", "--json", str(env), "--driver", "418.87.01").stdout)
        if release is not None:
            assert checked(report) == [release]
    # conda-forge has no tensorflow-gpu 2.4.1 build of its own recorded: the first channel that has one answers
    assert checked(report) == ["tensorflow 2.4.1 for CUDA 10.1"]


def test_every_recorded_conda_forge_build_is_checked_as_itself() -> None:
    """A sweep over the feedstocks' recorded builds: ``NAME=V=cudaXY*`` and ``NAME=V`` with the build's CUDA pin are
    judged as that build, with no error."""
    from dnnresolve.check import check_sources
    from dnnresolve.matrix import load_matrix
    from dnnresolve.sources import conda_env

    matrix = load_matrix()
    data = json.loads(FORGE_BUILDS.read_text())
    swept = 0
    for name, feedstock in data["feedstocks"].items():
        for version, rel in feedstock["releases"].items():
            for cuda in rel["linux_64"]:
                tag = cuda.replace(".", "")
                pin = f"cudatoolkit={cuda}" if cuda.startswith(("10.", "11.")) else f"cuda-version={cuda}"
                for lines in ([f"{name}={version}=cuda{tag}*"], [f"{name}={version}", pin]):
                    text = "channels:\n  - conda-forge\ndependencies:\n" + "".join(f"  - {x}\n" for x in lines)
                    report = check_sources([conda_env.read(Path("environment.yml"), text, Path("."))], None, matrix)
                    [p] = report.pins
                    assert p.release.endswith(f"{version} for CUDA {cuda}"), (text, p)
                    assert not [f for f in report.findings if f.severity.value == "error"], (text, report.findings)
                    swept += 1
    assert swept >= 180, swept


# ------------------------------------------------------------ fixes on a conda line are conda commands


def test_the_fix_of_a_conda_line_is_a_conda_install(run_cli: Run, tmp_path: Path) -> None:
    # before, "... python -m pip install tensorflow==2.4.1": pip's CUDA 11.0 wheel, not the CUDA 10.1 build the line is
    rc, report = _defaults_env(run_cli, tmp_path, ["python=3.8", "tensorflow-gpu=2.4.1"], "--driver", "410.48")
    [f] = [f for f in report["findings"] if f["severity"] == "error"]
    assert rc == 1 and f["line"] == 5
    assert f["fix_steps"][-1] == "conda install -y -c defaults tensorflow-gpu==2.4.1 cudatoolkit=10.1 cudnn=7.6", f
    assert "pip" not in f["fix"]
    # another release as the fix: PyTorch's conda package of the CUDA 9.2 build the driver runs, from its channel;
    # before, `python -m pip install torch==1.7.1+cu92 ... --find-links ...`
    rc, report = check_env(
        run_cli, tmp_path, ["python=3.8", "pytorch=1.12.1", "cudatoolkit=11.3"], "--driver", "410.48"
    )
    [f] = [f for f in report["findings"] if f["severity"] == "error"]
    assert f["fix"].startswith("use torch 1.7.1 instead") and "pip" not in f["fix"], f
    assert "conda install -y -c pytorch pytorch==1.7.1 cudatoolkit=9.2 torchvision==0.8.2 torchaudio==0.7.2" in f["fix"]
    # where conda has no package of the build, the file's pip: section installs it: said so
    rc, report = check_env(run_cli, tmp_path, ["python=3.11", "pytorch=2.8.0"], "--driver", "470.82.01")
    for f in (f for f in report["findings"] if f["severity"] == "error" and "pip install" in f["fix"]):
        assert "pip: section" in f["fix"], f


# ------------------------------------------------------------ which build conda picks: the __cuda filter

# conda injects the __cuda virtual package, "Maximum version of CUDA supported by the display driver" (conda docs,
# Managing virtual packages); cudatoolkit X.Y constrains __cuda >=X.Y (conda-forge's recipe; Anaconda's through
# AnacondaRecipes/repodata-hotfixes main.py), conda-forge's cuda-version X.Y constrains __cuda >=X. Of the builds left,
# the newest version, then the variant whose CUDA dependency selects the newest version (mamba's package resolution)


def test_conda_picks_the_newest_cuda_build_the_drivers_cuda_admits(run_cli: Run, tmp_path: Path) -> None:
    # conda-forge's tensorflow 2.7.0: builds for CUDA 10.2, 11.0, 11.1 and 11.2. Driver 460.32.03 gives __cuda 11.2:
    # conda installs the 11.2 build. Before: "tensorflow 2.7.0 for CUDA 11.0" (the matrix's first of the major)
    _, report = _forge_env(run_cli, tmp_path, ["python=3.9", "tensorflow=2.7.0"], "--driver", "460.32.03")
    assert checked(report) == ["tensorflow 2.7.0 for CUDA 11.2"], report
    _, report = _forge_env(run_cli, tmp_path, ["python=3.9", "tensorflow=2.7.0"], "--driver", "455.23.05")
    assert checked(report) == ["tensorflow 2.7.0 for CUDA 11.1"], report  # __cuda 11.1: the 11.2 build is filtered


def test_no_build_the_drivers_cuda_admits_is_an_error(run_cli: Run, tmp_path: Path) -> None:
    # jaxlib 0.4.23 on conda-forge: CUDA 11.8 (cudatoolkit 11.8: __cuda >=11.8) and 12.0 (cuda-version 12: __cuda >=12)
    # builds. Driver 470.82.01 gives __cuda 11.4: conda installs neither, though the 11.8 build would run there
    # through minor-version compatibility. Before: one warning, that compatibility
    rc, report = _forge_env(run_cli, tmp_path, ["python=3.11", "jaxlib=0.4.23"], "--driver", "470.82.01")
    [f] = [f for f in report["findings"] if f["severity"] == "error"]
    assert rc == 1 and f["line"] == 5, report["findings"]
    assert "__cuda" in f["message"] and "11.4" in f["message"] and "11.8" in f["message"], f["message"]
    assert f["fix"].startswith("a driver that supports CUDA 11.8") and "conda install -" not in f["fix"], f["fix"]
    # a driver whose __cuda admits the 11.8 build (520.61.05 gives 11.8): no error
    rc, report = _forge_env(run_cli, tmp_path, ["python=3.11", "jaxlib=0.4.23"], "--driver", "520.61.05")
    assert checked(report) == ["jax 0.4.23 for CUDA 11.8"] and rc == 0, report["findings"]


# the Pythons each own build was made for (tests/data/anaconda_tensorflow_gpu.json: the tensorflow-base build strings
# the metapackage's config lists, gpu_py27/py36/py37 for 1.15.0; tests/data/conda_forge_tensorflow_jaxlib.json: the
# python of each .ci_support config, 3.9-3.11 for tensorflow 2.15.0's CUDA 12.0 build)


def test_a_python_pin_no_build_of_the_release_has_is_an_error(run_cli: Run, tmp_path: Path) -> None:
    # before: "checked: tensorflow-gpu 1.15.0 for CUDA 10.0 ok", the build "not tied to a Python version"
    rc, report = _defaults_env(run_cli, tmp_path, ["python=3.8", "tensorflow-gpu=1.15.0"], "--driver", "440.33.01")
    assert rc == 1
    [f] = [f for f in report["findings"] if f["severity"] == "error"]
    assert f["line"] == 5 and "Python 3.8" in f["message"] and "2.7, 3.6, 3.7" in f["message"], f
    assert "AnacondaRecipes/tensorflow_recipes" in f["source"]
    rc, report = _defaults_env(run_cli, tmp_path, ["python=3.7", "tensorflow-gpu=1.15.0"], "--driver", "440.33.01")
    assert rc == 0 and not [f for f in report["findings"] if f["severity"] == "error"], report["findings"]
    cases = [("3.12", 1), ("3.11", 0)]
    for python, want in cases:
        rc, report = _forge_env(
            run_cli, tmp_path, [f"python={python}", "tensorflow=2.15.0"], "--driver", "535.54.03", "--gpu", "A100"
        )
        errors = [f["message"] for f in report["findings"] if f["severity"] == "error"]
        assert rc == want, (python, report["findings"])
        assert all(f"Python {python}" in m and "3.9, 3.10, 3.11" in m for m in errors) and len(errors) == want


def test_every_recorded_python_of_an_own_build_is_in_the_matrix() -> None:
    """The recipes of the matrix carry the Pythons recorded for each build; every build the channels served names
    them (Anaconda's 2.3.0 and 2.5.0, whose Pythons no source named, were never served on linux-64)."""
    from dnnresolve.conda_builds import build_version, conda_name, is_own_build
    from dnnresolve.matrix import load_matrix

    tf = json.loads(TF_BUILDS.read_text())["releases"]
    forge = json.loads(FORGE_BUILDS.read_text())["feedstocks"]
    seen = unrecorded = 0
    for row in load_matrix().frameworks:
        for rec in row.install:
            if not is_own_build(rec):
                continue
            version = build_version(rec)
            if rec.channels[0] == "defaults":
                [build] = [b for b in tf[version]["linux_64"] if b["cuda"] == rec.cuda]
                want = build.get("python", [])
            else:
                want = forge[conda_name(rec)]["releases"][version]["python"][rec.cuda]
            assert list(rec.python) == want, (rec.packages, rec.python, want)
            seen += 1
            unrecorded += not want
    assert (seen, unrecorded) == (113, 0)


def test_a_range_is_the_newest_release_whose_build_the_drivers_cuda_admits(run_cli: Run, tmp_path: Path) -> None:
    # driver 410.48 gives __cuda 10.0: Anaconda's tensorflow-gpu 2.1.0-2.4.1 are cudatoolkit 10.1 builds (they ask
    # __cuda >= 10.1), 2.0.0 has a 10.0 one; conda falls back to it. Before: "checked: tensorflow 2.4.1 for CUDA 10.1"
    # and the fix "pin an exact version, e.g. tensorflow-gpu==2.4.1", a release conda does not install there
    deps = ["python=3.7", "tensorflow-gpu>=2.0,<2.5"]
    rc, report = _defaults_env(run_cli, tmp_path, deps, "--driver", "410.48", "--gpu", "V100")
    assert checked(report) == ["tensorflow-gpu 2.0.0 for CUDA 10.0"], report
    [f] = [f for f in report["findings"] if f["rule"] == "unpinned"]
    assert f["fix"] == "pin an exact version, e.g. tensorflow-gpu==2.0.0"
    assert "conda installs tensorflow-gpu 2.0.0" in f["message"] and "__cuda 10.0" in f["message"], f
    assert "2.1.0" in f["message"] and "2.4.1" in f["message"] and "__cuda >= 10.1" in f["message"], f
    assert rc == 0 and not [f for f in report["findings"] if f["severity"] == "error"]
    # a driver whose __cuda admits the newest: that one, and nothing said of a fallback
    _, report = _defaults_env(run_cli, tmp_path, deps, "--driver", "418.87.01", "--gpu", "V100")
    assert checked(report) == ["tensorflow 2.4.1 for CUDA 10.1"]
    assert not any("conda installs" in f["message"] for f in report["findings"])
