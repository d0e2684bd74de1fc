"""Names users pin that carry CUDA ([[cuda_name]] rows) answer in matrix, plan and check, never "not in the
compatibility matrix" / "not checked" (issue 21). The facts are the rows' (read 2026-12-01, see their notes)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from dnnresolve.matrix import Matrix, load_matrix, packaged_matrix_path

Cli = Callable[..., CompletedProcess[str]]

# a version of each name that PyPI or the conda channel lists (the rows' notes)
ASKED = {
    "nvidia-cudnn-cu12": "9.1.0.70",
    "nvidia-cudnn-cu11": "8.5.0.96",
    "nvidia-cudnn-cu13": "9.12.0.46",
    "nvidia-cuda-runtime-cu12": "12.4.127",
    "nvidia-cublas-cu12": "12.1.3.1",
    "nvidia-nccl-cu12": "2.20.5",
    "nvidia-cublas": "13.0.0.19",
    "cuda-toolkit": "12.6.3",
    "jax-cuda12-plugin": "0.4.30",
    "jax-cuda12-pjrt": "0.5.3",
    "jax-cuda13-plugin": "0.7.2",
    "jax-cuda13-pjrt": "0.8.0",
    "jax-cuda11-plugin": "0.4.25",
    "cudatoolkit": "11.3",
    "pytorch-cuda": "12.1",
    "cuda-version": "12.4",
}


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    return load_matrix(packaged_matrix_path())


def test_every_nvidia_wheel_a_pin_names_is_a_cuda_name(matrix: Matrix) -> None:
    named = {canonicalize_name(Requirement(t).name) for p in matrix.wheel_pins for t in p.requires}
    missing = sorted(n for n in named if n.startswith(("nvidia-", "cuda-toolkit")) and matrix.cuda_name(n) is None)
    assert missing == []


@pytest.mark.parametrize("name", sorted(ASKED))
def test_a_pinned_name_answers_in_matrix(run_cli: Cli, name: str) -> None:
    r = run_cli("matrix", f"{name}=={ASKED[name]}", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    (record,) = json.loads(r.stdout)["names"]
    assert record["name"] == name and record["asked"]["version"] == ASKED[name]
    assert record["asked"]["cuda"] and record["asked"]["driver_min_linux"], record
    assert record["source"].startswith("https://")


def test_the_cudnn_wheel_is_that_cudnn_for_cuda_12(run_cli: Cli) -> None:
    r = run_cli("matrix", "nvidia-cudnn-cu12==9.1.0.70", "--json")
    (record,) = json.loads(r.stdout)["names"]
    assert record["asked"]["is"] == "cuDNN 9.1.0 for CUDA 12"
    assert record["asked"]["driver_min_linux"] == "525.60.13"  # CUDA 12 through minor-version compatibility
    assert "not in the compatibility matrix" not in run_cli("matrix", "cudatoolkit==11.3").stdout


def test_plan_of_the_cudnn_wheel_needs_a_driver_for_cuda_12_and_no_gpu_code(run_cli: Cli) -> None:
    flags = ["--gpu", "3.5", "--python", "3.11", "--os", "linux", "--no-detect", "--json"]
    old = json.loads(run_cli("plan", "nvidia-cudnn-cu12==9.1.0.70", "--driver", "470.82.01", *flags).stdout)
    checks = {c["component"]: c for c in old["requirements"][0]["checks"]}
    assert checks["driver"]["status"] == "fail" and "525.60.13" in checks["driver"]["needed"]
    assert "compute_capability" not in checks  # (a library wheel: no GPU code of its own to judge)
    new = json.loads(run_cli("plan", "nvidia-cudnn-cu12==9.1.0.70", "--driver", "535.104.05", *flags).stdout)
    req = new["requirements"][0]
    assert req["known"] and req["verdict"] == "runs", req


def test_a_jax_plugin_pin_answers_as_that_jax_release(run_cli: Cli) -> None:
    flags = ["--driver", "560.35.03", "--gpu", "8.0", "--python", "3.11", "--os", "linux", "--no-detect", "--json"]
    req = json.loads(run_cli("plan", "jax-cuda12-plugin==0.4.30", *flags).stdout)["requirements"][0]
    assert req["release"] == "0.4.30" and req["cuda_variant"].startswith("12"), req


def test_check_of_a_file_that_pins_them_says_what_each_is(run_cli: Cli, tmp_path: Path) -> None:
    req = tmp_path / "requirements.txt"
    req.write_text("nvidia-cudnn-cu12==9.1.0.70\njax-cuda12-plugin==0.4.30\n")
    proc = run_cli("check", str(req), "--driver", "470.82.01", "--gpu", "8.0", "--python", "3.11", "--os", "linux",
                   "--json")  # fmt: skip
    data = json.loads(proc.stdout)
    assert "nvidia-cudnn-cu12" not in data.get("not_checked", [])
    by_line = {f["line"]: f for f in data["findings"]}
    assert by_line[1]["rule"] == "cuda-name" and "cuDNN 9.1.0 for CUDA 12" in by_line[1]["message"]
    assert by_line[1]["severity"] == "error" and "525.60.13" in by_line[1]["message"]
    assert by_line[2]["rule"] == "cuda-name" and "plugin of jax 0.4.30" in by_line[2]["message"]
    assert "not checked" not in proc.stdout
    assert proc.returncode == 1
