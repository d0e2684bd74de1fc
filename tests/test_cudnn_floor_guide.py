"""The GPU floor of cuDNN 7.0 (#21), from NVIDIA's own text where no support matrix of it was found: the cuDNN
Developer Guide's "GPU and driver requirements" says "cuDNN v7.0 supports NVIDIA GPUs of compute capability 3.0 and
higher. For x86_64 platform, cuDNN v7.0 comes with two deliverables: one requires a NVIDIA Driver compatible with
CUDA Toolkit 8.0, the other requires a NVIDIA Driver compatible with CUDA Toolkit 9.0" (read in a verbatim copy of
the guide's v7.5.0 edition stored in a public repository; docs.nvidia.com is not reachable here). With 7.0.x's
floor stated, the 7.1-7.4 releases between it and 7.5.0 (NVIDIA's support matrix: Kepler (3.x) for CUDA 9) take it
for their CUDA 9 builds as well."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest
import tomllib

Run = Callable[..., CompletedProcess[str]]
DATA = Path(__file__).resolve().parents[1] / "data" / "compat_matrix.toml"


def _cudnn_check(run_cli: Run, cudnn: str, gpu: str) -> dict[str, Any] | None:
    out = run_cli(
        "plan", "jaxlib==0.1.37", "--no-detect", "--offline", "--os", "linux", "--python", "3.6", "--driver",
        "390.48", "--cuda", "9.0", "--cudnn", cudnn, "--gpu", gpu, "--json",
    )  # fmt: skip
    assert out.returncode in (0, 1) and "Traceback" not in out.stderr, out.stderr
    checks = json.loads(out.stdout)["requirements"][0]["checks"]
    found: list[dict[str, Any]] = [c for c in checks if c["component"] == "cudnn_gpu"]
    return found[0] if found else None


def test_cudnn_7_0_5_on_a_fermi_gpu_fails_citing_nvidia_s_developer_guide(run_cli: Run) -> None:
    # jaxlib loads the system's cuDNN and needs it; before, nothing was said of cuDNN 7.0.5 and the GPU
    check = _cudnn_check(run_cli, "7.0.5", "2.1")
    assert check is not None and check["status"] == "fail", check
    assert check["needed"] == "cuDNN 7.0.5: >= 3.0", check
    assert "NVIDIA's Developer Guide of cuDNN 7.0.5" in check["reason"], check
    assert check["source"].startswith("https://docs.nvidia.com/deeplearning/sdk/cudnn-developer-guide/"), check


def test_cudnn_7_2_1_between_two_stated_floors_takes_theirs(run_cli: Run) -> None:
    check = _cudnn_check(run_cli, "7.2.1", "2.1")
    assert check is not None and check["status"] == "fail", check
    assert "cuDNN 7.0.5 and 7.5.0, the releases around it" in check["reason"], check


@pytest.mark.parametrize("cudnn", ["7.0.5", "7.2.1"])
def test_a_kepler_gpu_meets_the_cudnn_7_floor(run_cli: Run, cudnn: str) -> None:
    assert _cudnn_check(run_cli, cudnn, "3.0") is None


def test_the_cudnn_7_0_rows_state_the_guide_s_floor() -> None:
    with DATA.open("rb") as f:
        rows = {r["version"]: r for r in tomllib.load(f)["cudnn"]}
    for version in ("7.0.4", "7.0.5"):
        row = rows[version]
        assert row["compute_capability_min_by_cuda"] == {"9": "3.0", "8": "3.0"}, version
        assert "cuDNN v7.0 supports NVIDIA GPUs of compute capability 3.0 and higher" in row["compute_capability_note"]
        assert "compute_capability_unstated" not in row, version
