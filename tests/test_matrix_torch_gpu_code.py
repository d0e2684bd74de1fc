"""The GPU code of every torch CUDA variant (#21): which variants still have none, and what users see for them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from dnnresolve.matrix import Matrix, load_matrix, packaged_matrix_path
from dnnresolve.versions import CudaVersion

from .test_matrix_data import variant_states_code

Cli = Callable[..., CompletedProcess[str]]

# Every torch CUDA variant whose row gives no architecture list, each with a note saying why
# (tests/test_matrix_data.py checks the note). Exact, so that a list lost, or a new variant added without one,
# fails here. (The last two, 1.0.0 Windows cu100 and 1.8.0 Linux cu111, state the code every state of their
# build scripts carries and, in sm_unconfirmed, the code only some do: tests/test_torch_unconfirmed_code.py.)
NO_GPU_CODE: set[tuple[str, str, str]] = set()


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    return load_matrix(packaged_matrix_path())


def test_torch_variants_without_gpu_code_are_exactly_the_known_ones(matrix: Matrix) -> None:
    missing = set()
    for f in matrix.frameworks:
        if f.package != "torch":
            continue
        for r in f.install:
            if not r.cuda:
                continue
            series = CudaVersion.parse(r.cuda).series
            known = variant_states_code(f, series)
            if not known:
                missing.add((str(f.version), "/".join(f.os), str(series)))
    assert missing == NO_GPU_CODE


# The page's `conda install pytorch==X cudatoolkit=11.3 -c pytorch -c conda-forge` lines name a build the pytorch
# channel never had for these releases, so conda installs something else (a CPU build): no CUDA 11.3 variant.
NO_CONDA_113 = [
    ("1.8.1", "linux"),
    ("1.9.0", "linux"),
    ("1.9.1", "linux"),
    ("1.8.1", "windows"),
    ("1.9.0", "windows"),
    ("1.9.1", "windows"),
]


@pytest.mark.parametrize(("version", "os"), NO_CONDA_113)
def test_matrix_lists_no_cuda_113_build_the_pytorch_channel_never_had(run_cli: Cli, version: str, os: str) -> None:
    out = run_cli("matrix", f"torch=={version}", "--os", os, "--json", "--offline")
    assert out.returncode == 0, out.stderr
    (row,) = json.loads(out.stdout)["releases"]
    assert "11.3" not in row["cuda"]
    assert all(r["cuda"] != "11.3" for r in row["install"]), row["install"]
    assert "cudatoolkit=11.3" in row["note"]


@pytest.mark.parametrize("version", ["1.8.1", "1.9.0", "1.9.1"])
def test_plan_on_an_ampere_gpu_offers_no_cuda_113_build_of_torch_1_8_and_1_9(run_cli: Cli, version: str) -> None:
    # It offered "use the CUDA 11.3 build of torch 1.9.0: python -m pip install torch==1.9.0", a plain pip
    # install that gets PyPI's CUDA 10.2 wheel, which has no code for sm_86.
    out = run_cli(
        "plan", f"torch=={version}", "--no-detect", "--offline", "--os", "linux", "--driver", "470.82.01",
        "--cuda", "11.3", "--cudnn", "8.2.1", "--gpu", "8.6", "--python", "3.8",
    )  # fmt: skip
    assert out.returncode in (0, 1), out.stderr
    assert "CUDA 11.3 build" not in out.stdout, out.stdout
    assert f"CUDA 11.1 build of torch {version}" in out.stdout, out.stdout


def test_check_of_an_environment_with_the_page_s_cuda_113_line_says_it_gets_no_cuda_113_build(
    run_cli: Cli, tmp_path: Path
) -> None:
    # The previous-versions page's 1.9.1 line, as an environment.yml: conda gives pytorch's CPU build here
    # (a user's report, Public-BOTs/GaussianPretrain issue 4); the check passed it as "torch 1.9.1 for CUDA 11.3".
    env = tmp_path / "environment.yml"
    env.write_text(
        "channels:\n  - pytorch\n  - conda-forge\n"
        "dependencies:\n  - python=3.8\n  - pytorch==1.9.1\n  - torchvision==0.10.1\n  - cudatoolkit=11.3\n"
    )
    out = run_cli("check", str(env), "--driver", "470.82.01", "--offline")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "no CUDA 11.3 build" in out.stdout, out.stdout
    assert "environment.yml:6" in out.stdout, out.stdout


def _plan_windows(run_cli: Cli, spec: str, gpu: str) -> str:
    out = run_cli(
        "plan", spec, "--no-detect", "--offline", "--os", "windows", "--driver", "576.02", "--gpu", gpu,
        "--python", "3.12",
    )  # fmt: skip
    assert out.returncode in (0, 1), out.stderr
    return out.stdout


def test_plan_says_torch_2_8_0_cu126_on_windows_has_no_maxwell_code(run_cli: Cli) -> None:
    # Windows 2.8.0+cu126 starts at sm_61 (pytorch issue 160575); the plan said "install it" with a warning
    # that the matrix did not know the wheel's architectures.
    stdout = _plan_windows(run_cli, "torch==2.8.0", "5.2")
    assert "MISSING  compute_capability" in stdout, stdout
    assert "wheels carry sm_61, sm_70" in stdout, stdout
    assert "install it" not in stdout, stdout


def test_plan_says_torch_2_8_0_cu126_on_windows_runs_on_a_gtx_1080(run_cli: Cli) -> None:
    stdout = _plan_windows(run_cli, "torch==2.8.0", "6.1")
    assert "torch 2.8.0 for CUDA 12.6" in stdout, stdout
    assert "ok       compute_capability" in stdout, stdout
    assert "1. install it: this machine has what it needs" in stdout, stdout


def test_plan_says_torch_2_7_0_cu128_on_windows_runs_on_blackwell(run_cli: Cli) -> None:
    # Only the cu128 wheels carry sm_120; the 2.7.0 Windows one was unknown, so no build was known to run.
    stdout = _plan_windows(run_cli, "torch==2.7.0", "12.0")
    assert "use the CUDA 12.8 build of torch 2.7.0" in stdout or "torch 2.7.0 for CUDA 12.8" in stdout, stdout
    assert "does not say which" not in stdout, stdout


def test_plan_says_torch_1_2_0_cu92_on_windows_runs_on_a_gtx_1080(run_cli: Cli) -> None:
    # The +cu92 Windows wheel's code (3.5;5.0+PTX;6.0;6.1;7.0, pytorch/builder windows/cuda92.bat) was unknown:
    # the plan could only warn that the matrix did not say which architectures it carries.
    out = run_cli(
        "plan", "torch==1.2.0+cu92", "--no-detect", "--offline", "--os", "windows", "--driver", "441.22",
        "--gpu", "6.1", "--python", "3.7",
    )  # fmt: skip
    assert out.returncode == 1, out.stdout + out.stderr  # 1: steps are needed (the install)
    assert "torch 1.2.0 for CUDA 9.2" in out.stdout, out.stdout
    assert "ok       compute_capability" in out.stdout, out.stdout


@pytest.mark.parametrize(
    ("gpu", "verdict"), [("6.1", "ok       compute_capability"), ("3.0", "MISSING  compute_capability")]
)
def test_plan_knows_the_gpu_code_of_torch_0_4_1_on_windows(run_cli: Cli, gpu: str, verdict: str) -> None:
    # The Windows 0.4.1 wheels' lists (3.5;5.0+PTX;6.0;6.1 for CUDA 8.0, 3.5;5.0+PTX;6.0;6.1;7.0 for 9.0 and 9.2,
    # the Windows maintainer's scripts in pytorch/builder) were unknown: a plan could only say the matrix did not
    # know which architectures the wheel carries.
    out = run_cli(
        "plan", "torch==0.4.1", "--no-detect", "--offline", "--os", "windows", "--driver", "441.22", "--gpu", gpu,
        "--python", "3.6",
    )  # fmt: skip
    assert out.returncode in (0, 1), out.stdout + out.stderr
    table = out.stdout.split("Options, best first:", 1)[0]
    assert "torch 0.4.1 for CUDA 9." in table, out.stdout
    assert verdict in table, out.stdout
    assert "does not say which" not in table, out.stdout
