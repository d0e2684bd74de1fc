"""What `check Dockerfile` reads of the forms real Dockerfiles take (the misses of the tune part of
tests/data/dockerfile_corpus): a framework image's CUDA, RUN flags, CUDA installed by apt, facts an image's own tag
spells, an OS left to a build argument. The real CLI in a subprocess, on Dockerfiles written to tmp_path."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

Run = Callable[..., subprocess.CompletedProcess[str]]
TF24 = "RUN pip install tensorflow==2.4.0\n"  # built for CUDA 11.0: a CUDA 12 image cannot run it


def check(run_cli: Run, tmp_path: Path, text: str) -> dict[str, Any]:
    (tmp_path / "Dockerfile").write_text(text, encoding="utf-8")
    proc = run_cli("check", "--json", "--driver", "550.54.15", str(tmp_path / "Dockerfile"))
    assert proc.returncode in (0, 1), proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def errors(report: dict[str, Any]) -> list[str]:
    return [f["message"] for f in report["findings"] if f["severity"] == "error" and f["package"] == "tensorflow"]


def test_a_pytorch_image_brings_the_cuda_its_tag_names(run_cli: Run, tmp_path: Path) -> None:
    report = check(run_cli, tmp_path, "FROM pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime\n" + TF24)
    [message] = errors(report)
    assert "CUDA 12.1 is in use" in message
    assert "Dockerfile:1 (FROM pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime)" in message


def test_run_flags_do_not_hide_the_install(run_cli: Run, tmp_path: Path) -> None:
    report = check(
        run_cli,
        tmp_path,
        "FROM nvidia/cuda:12.1.0-cudnn8-runtime-ubuntu22.04\n"
        "RUN --mount=type=cache,target=/root/.cache/pip --network=default \\\n"
        "    pip install tensorflow==2.4.0\n",
    )
    assert [(line["package"], line["line"]) for line in report["checked_lines"]] == [("tensorflow", 3)]
    assert len(errors(report)) == 1


def test_cuda_installed_by_apt_is_the_containers(run_cli: Run, tmp_path: Path) -> None:
    report = check(
        run_cli, tmp_path, "FROM ubuntu:22.04\nRUN apt-get install -y cuda-toolkit-12-1 python3-pip\n" + TF24
    )
    [message] = errors(report)
    assert "CUDA 12.1 is in use" in message and "Dockerfile:2 (cuda-toolkit-12-1)" in message


def test_apt_cuda_of_the_images_own_release_keeps_its_precision(run_cli: Run, tmp_path: Path) -> None:
    report = check(
        run_cli,
        tmp_path,
        "FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\nRUN apt-get install -y cuda-toolkit-12-1\n" + TF24,
    )
    [message] = errors(report)
    assert "CUDA 12.1.0 is in use" in message


def test_an_unknown_images_tag_gives_its_cuda_and_python(run_cli: Run, tmp_path: Path) -> None:
    image = "rapidsai/mambaforge-cuda:cuda12.0.1-base-ubuntu22.04-py3.10"
    report = check(run_cli, tmp_path, f"FROM {image}\n" + TF24)
    [message] = errors(report)
    assert "CUDA 12.0.1 is in use" in message
    [note] = [f for f in report["findings"] if f["rule"] == "image-not-checked"]
    assert "read from its tag" in note["message"] and note["severity"] == "info"


def test_an_os_left_to_a_build_argument_still_gives_the_cuda(run_cli: Run, tmp_path: Path) -> None:
    report = check(
        run_cli, tmp_path, "ARG CUDA=12.1.0\nFROM nvidia/cuda:${CUDA}-runtime-ubuntu${UBUNTU_VERSION}\n" + TF24
    )
    [message] = errors(report)
    assert "CUDA 12.1.0 is in use" in message
    notes = [f["message"] for f in report["findings"] if f["rule"] == "image-not-checked"]
    assert any("$UBUNTU_VERSION" in n for n in notes)
