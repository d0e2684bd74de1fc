"""`check Dockerfile` on the host's driver: an nvidia/cuda image whose NVIDIA_REQUIRE_CUDA the driver fails never
starts (nvidia-container-cli refuses it), a brand clause may admit it, ENV NVIDIA_DISABLE_REQUIRE turns the check
off; `plan --format dockerfile` never writes such an image. The real CLI in a subprocess, on Dockerfiles written
to a tmp dir; the conditions are the matrix's [[cuda_image]] rows (NVIDIA's base Dockerfiles)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

Run = Callable[..., subprocess.CompletedProcess[str]]

IMAGE_124 = "nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04"  # cuda>=12.4, brand clauses for 470, 525, 535 (all brands)
IMAGE_126 = "nvidia/cuda:12.6.3-cudnn-runtime-ubuntu22.04"  # cuda>=12.6, 470/535/550 for brands without geforce
REFUSAL = (
    '"requirement error: unsatisfied condition: cuda>=12.4, please update your driver to a newer version, or use an '
    'earlier cuda container"'
)


def dockerfile(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "app" / "Dockerfile"
    path.parent.mkdir(exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def flat(text: str) -> str:
    """The text output with its wrapped lines joined, as one reads it."""
    return " ".join(text.split())


def test_an_image_newer_than_the_driver_is_an_error_with_both_remedies(run_cli: Run, tmp_path: Path) -> None:
    path = dockerfile(tmp_path, f"FROM {IMAGE_124}", "RUN echo hello")
    proc = run_cli("check", str(path), "--no-detect", "--driver", "545.23.08", "--gpu", "Tesla T4")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = flat(proc.stdout)
    assert f"Dockerfile:1 error {IMAGE_124} will not start on this host" in out
    assert "its NVIDIA_REQUIRE_CUDA asks cuda>=12.4 and driver 545.23.08 supports CUDA 12.3" in out
    assert "none of its brand clauses is for a 545 driver" in out
    assert f"nvidia-container-cli (docker run --gpus) refuses it: {REFUSAL}" in out
    assert "CDI modes, its default from container toolkit 1.18.0, skip this check" in out
    assert "FROM nvidia/cuda:12.3.2-cudnn9-runtime-ubuntu22.04 (CUDA 12.3.2: the newest published runtime tag" in out
    assert "upgrade the NVIDIA driver to >= 550.54.14 (CUDA 12.4; needs root)" in out
    # the driver unknown: nothing is said of it
    quiet = run_cli("check", str(path), "--no-detect")
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr
    assert "will not start" not in quiet.stdout and "NVIDIA_REQUIRE_CUDA" not in quiet.stdout


def test_a_brand_clause_that_names_the_gpu_on_its_driver_branch_passes_with_a_note(
    run_cli: Run, tmp_path: Path
) -> None:
    path = dockerfile(tmp_path, f"FROM {IMAGE_126}")
    proc = run_cli("check", str(path), "--no-detect", "--driver", "535.104.05", "--gpu", "Tesla T4", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [note] = [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "image-driver"]
    assert (note["line"], note["severity"]) == (1, "info")
    assert "asks cuda>=12.6 and driver 535.104.05 supports CUDA 12.2" in note["message"]
    assert "its clause brand=tesla,driver>=535,driver<536 admits this GPU" in note["message"]
    assert "the NVIDIA container toolkit starts it" in note["message"]


def test_a_geforce_gpu_from_a_target_profile_is_not_admitted_by_the_data_center_clauses(
    run_cli: Run, tmp_path: Path
) -> None:
    """CUDA 12.5 and later images list no geforce brand for the 470 branch: the profile's GeForce is refused."""
    profile = tmp_path / "host.json"
    profile.write_text(
        json.dumps(
            {
                "schema": "dnnresolve-runtime/1",
                "driver": "470.82.01",
                "driver_cuda": "11.4",
                "gpus": [{"name": "NVIDIA GeForce RTX 3090", "compute_capability": "8.6"}],
            }
        )
    )
    path = dockerfile(tmp_path, "ARG BASE=" + IMAGE_126, "FROM ${BASE}")
    proc = run_cli("check", str(path), "--no-detect", "--target", str(profile))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = flat(proc.stdout)
    assert f"Dockerfile:2 error {IMAGE_126} will not start on this host" in out
    assert "asks cuda>=12.6 and driver 470.82.01 supports CUDA 11.4" in out
    assert "its brand clauses for a 470 driver do not name this GPU's brand" in out
    assert "FROM nvidia/cuda:11.4.3-cudnn8-runtime-ubuntu20.04" not in out  # another OS: not offered
    # the same image on a 12.4 one: its clauses for 470 list every brand, GeForce too
    older = dockerfile(tmp_path, f"FROM {IMAGE_124}")
    admitted = run_cli("check", str(older), "--no-detect", "--target", str(profile))
    assert admitted.returncode == 0, admitted.stdout
    assert "its clause brand=geforce,driver>=470,driver<471 admits this GPU" in flat(admitted.stdout)


def test_an_unknown_gpu_brand_makes_it_a_warning_naming_the_brands(run_cli: Run, tmp_path: Path) -> None:
    path = dockerfile(tmp_path, f"FROM {IMAGE_126}")
    proc = run_cli("check", str(path), "--no-detect", "--driver", "535.104.05", "--gpu", "A100")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = flat(proc.stdout)
    assert f"Dockerfile:1 warning {IMAGE_126} may not start on this host" in out
    assert "if the GPU's brand (nvidia-smi -q: Product Brand) is one of cloudgaming, grid, nvidia" in out
    assert "FROM nvidia/cuda:12.2.2-cudnn8-runtime-ubuntu22.04" in out  # the newest the driver surely starts


def test_nvidia_disable_require_makes_it_a_warning_at_its_line(run_cli: Run, tmp_path: Path) -> None:
    path = dockerfile(tmp_path, f"FROM {IMAGE_124}", "ENV NVIDIA_DISABLE_REQUIRE=1", "RUN echo hello")
    proc = run_cli("check", str(path), "--no-detect", "--driver", "545.23.08", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [warning] = [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "image-driver"]
    assert (warning["line"], warning["severity"]) == (2, "warning")
    assert "NVIDIA_DISABLE_REQUIRE (line 2) turns the NVIDIA container toolkit's check off" in warning["message"]
    assert "would refuse this image here (cuda>=12.4; driver 545.23.08 supports CUDA 12.3)" in warning["message"]
    # "false" is not true to the toolkit (strconv.ParseBool): the check stays on
    kept = dockerfile(tmp_path, f"FROM {IMAGE_124}", "ENV NVIDIA_DISABLE_REQUIRE false")
    proc = run_cli("check", str(kept), "--no-detect", "--driver", "545.23.08")
    assert proc.returncode == 1 and "will not start on this host" in flat(proc.stdout)


def test_a_dockerfiles_own_nvidia_require_cuda_is_checked_at_its_line(run_cli: Run, tmp_path: Path) -> None:
    path = dockerfile(tmp_path, "FROM ubuntu:22.04", 'ENV NVIDIA_REQUIRE_CUDA "cuda>=12.4"')
    proc = run_cli("check", str(path), "--no-detect", "--driver", "535.104.05")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = flat(proc.stdout)
    assert "Dockerfile:2 error ubuntu:22.04 will not start on this host: the NVIDIA_REQUIRE_CUDA of line 2 asks" in out
    assert "upgrade the NVIDIA driver to >= 550.54.14 (CUDA 12.4; needs root)" in out


def test_plan_never_writes_an_image_the_driver_refuses(run_cli: Run, tmp_path: Path) -> None:
    """tensorflow 2.11 (CUDA 11.2) on driver 450.80.02 (CUDA 11.0) and a GeForce: the 11.2.2 image's condition
    admits only Tesla GPUs on a 450 driver; 11.3.1's has a plain driver>=450 term. `check` of the file agrees."""
    out = tmp_path / "Dockerfile"
    host = ("--no-detect", "--driver", "450.80.02", "--gpu", "GeForce GTX 1080 Ti")
    proc = run_cli("plan", "tensorflow==2.11.0", *host, "--format", "dockerfile", "--output", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = out.read_text()
    assert "FROM nvidia/cuda:11.2.2-" not in text
    assert "\nFROM nvidia/cuda:11.3.1-cudnn8-runtime-ubuntu20.04\n" in text
    assert "its NVIDIA_REQUIRE_CUDA clause driver>=450" in text
    checked = run_cli("check", str(out), *host, "--json")
    assert checked.returncode == 0, checked.stdout
    assert [f for f in json.loads(checked.stdout)["findings"] if f["severity"] == "error"] == []
