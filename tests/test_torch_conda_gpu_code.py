"""The GPU code of a conda package is its own, not the pip wheel's of the same CUDA (#21). PyTorch's conda package
1.8.0 for CUDA 11.1 was built by pytorch/builder's conda/pytorch-nightly/build.sh, whose CUDA 11.1 line held
``3.7+PTX;5.0;6.0;6.1;7.0;7.5;8.0;8.6`` from e0c49ba9 (2021-02-05) to 2d8427cb (2021-04-28), one state around the
release (2021-03-04); the +cu111 wheel came from manywheel/build.sh, which changed that day (its recipe's
sm_unconfirmed). A third-party reading of the conda package (moi90/pytorch_compute_capabilities, cuobjdump over
pytorch-1.8.0-py3.9_cuda11.1_cudnn8.0.5_0) finds the same architectures (and sm_35 in some library). A conda line,
or a plan in an environment whose pytorch conda installed, is judged on that list."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from .detect.machines import make_machine
from .plan.test_conda_env import ANACONDA, PREFIX, _env, _record

Run = Callable[..., CompletedProcess[str]]
CONDA_SM = ["3.7", "5.0", "6.0", "6.1", "7.0", "7.5", "8.0", "8.6"]


def _environment(tmp_path: Path) -> Path:
    env = tmp_path / "environment.yml"
    env.write_text(
        "channels:\n  - pytorch\n  - conda-forge\ndependencies:\n  - python=3.8\n  - pytorch=1.8.0\n"
        "  - cudatoolkit=11.1\n"
    )
    return env


def _check(run_cli: Run, tmp_path: Path, gpu: str) -> tuple[int, dict[str, object]]:
    out = run_cli(
        "check", "--json", str(_environment(tmp_path)), "--os", "linux", "--driver", "460.32.03", "--gpu", gpu
    )
    assert out.returncode in (0, 1) and "Traceback" not in out.stderr, out.stderr
    return out.returncode, json.loads(out.stdout)


def test_check_of_conda_s_pytorch_1_8_0_cuda_11_1_on_a_gtx_1080_passes(run_cli: Run, tmp_path: Path) -> None:
    # it warned "this build may lack code for sm_61: the build scripts of that day differ", the pip wheel's doubt
    rc, report = _check(run_cli, tmp_path, "6.1")
    assert [p["release"] for p in report["checked_lines"]] == ["torch 1.8.0 for CUDA 11.1"], report  # type: ignore[index]
    assert report["findings"] == [], report["findings"]
    assert rc == 0


def test_check_of_conda_s_pytorch_1_8_0_cuda_11_1_on_a_k40_names_conda_s_code(run_cli: Run, tmp_path: Path) -> None:
    # sm_35: below every architecture the package carries code for (its PTX is compute_37, newer than the GPU)
    rc, report = _check(run_cli, tmp_path, "3.5")
    findings = report["findings"]
    assert rc == 1 and [f["severity"] for f in findings] == ["error"], findings  # type: ignore[index]
    text = json.dumps(findings)
    assert "sm_61" in text and "sm_37" in text and "may lack" not in text, text


def test_matrix_shows_the_conda_package_s_own_gpu_code(run_cli: Run) -> None:
    out = run_cli("matrix", "torch==1.8.0", "--offline", "--json")
    assert out.returncode == 0, out.stderr
    (row,) = json.loads(out.stdout)["releases"]
    (conda,) = [r for r in row["install"] if r["kind"] == "conda" and r["cuda"] == "11.1"]
    assert (conda["sm"], conda["ptx"]) == (CONDA_SM, ["3.7"]), conda
    (wheel,) = [r for r in row["install"] if r["kind"] == "pip" and r["cuda"] == "11.1"]
    assert wheel["sm_unconfirmed"] == ["3.7", "6.0", "7.5"], wheel  # the wheel's doubt stays the wheel's


def _pytorch_env(tmp_path: Path) -> Path:
    """The modern fixture machine with a conda env holding the pytorch channel's 1.8.0 CUDA 11.1 build (its build
    string as conda lists it, cudatoolkit 11.1.1 from conda-forge, as in pytorch/pytorch issue 53476)."""
    root = make_machine(tmp_path, "modern")
    env = root / PREFIX.lstrip("/")
    (env / "lib/python3.8/site-packages").mkdir(parents=True)
    _record(env, "python", "3.8.8", "hdb3f193_4", ANACONDA, [])
    _record(env, "cudatoolkit", "11.1.1", "h6406543_8", "https://conda.anaconda.org/conda-forge/linux-64", [])
    _record(
        env, "pytorch", "1.8.0", "py3.8_cuda11.1_cudnn8.0.5_0", "https://conda.anaconda.org/pytorch/linux-64",
        ["cudatoolkit >=11.1,<11.2", "python >=3.8,<3.9.0a0"],
        files=["lib/python3.8/site-packages/torch/__init__.py"], requested_spec="pytorch==1.8.0",
    )  # fmt: skip
    return root


@pytest.mark.parametrize(("gpu", "status"), [("6.1", "ok"), ("3.5", "fail")])
def test_plan_in_an_environment_of_conda_s_pytorch_judges_conda_s_code(tmp_path: Path, gpu: str, status: str) -> None:
    # the plan judged the +cu111 wheel's code: "may lack code for sm_61"
    root = _pytorch_env(tmp_path)
    out = subprocess.run(
        [sys.executable, "-m", "dnnresolve", "plan", "torch==1.8.0", "--root", str(root), "--gpu", gpu, "--json"],
        capture_output=True, text=True, env={**os.environ, **_env()}, timeout=120,
    )  # fmt: skip
    assert out.returncode in (0, 1) and not out.stderr, out.stderr
    req = json.loads(out.stdout)["requirements"][0]
    [gpu_check] = [c for c in req["checks"] if c["component"] == "compute_capability"]
    assert gpu_check["status"] == status, gpu_check
    assert "may lack" not in gpu_check["reason"] and "sm_61" in gpu_check["needed"], gpu_check
