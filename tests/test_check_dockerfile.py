"""`dnnresolve check Dockerfile`: the base image sets the container's CUDA, cuDNN, OS and Python; the host's
driver comes from --driver. The real CLI in a subprocess, on Dockerfiles in tests/fixtures/dockerfiles."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

DOCKERFILES = Path(__file__).parent / "fixtures" / "dockerfiles"

Run = Callable[..., subprocess.CompletedProcess[str]]


def check_json(run_cli: Run, *args: str) -> tuple[int, dict[str, Any]]:
    proc = run_cli("check", "--json", *args)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def rules(report: dict[str, Any]) -> list[tuple[str, int, str, str]]:
    return [(Path(f["file"]).name, f["line"], f["rule"], f["severity"]) for f in report["findings"]]


def test_tensorflow_24_on_a_cuda_10_image_is_an_error(run_cli: Run) -> None:
    rc, report = check_json(run_cli, str(DOCKERFILES / "tf24-old" / "Dockerfile"))
    assert rc == 1
    [error] = [f for f in report["findings"] if f["rule"] == "target-incompatible"]
    assert (Path(error["file"]).name, error["line"], error["package"]) == ("Dockerfile", 9, "tensorflow-gpu")
    assert "built for CUDA 11.0; CUDA 10.0.130 is in use" in error["message"]
    assert "cuDNN 7.6.5 is loaded" in error["message"]
    assert "Dockerfile:1 (FROM nvidia/cuda:10.0-cudnn7-runtime-ubuntu18.04)" in error["message"]
    # NVIDIA deleted the CUDA 10.0 tags: the build cannot pull the image at all
    assert ("Dockerfile", 1, "image-deleted", "warning") in rules(report)


def test_tensorflow_24_on_a_cuda_11_0_3_image_passes(run_cli: Run) -> None:
    rc, report = check_json(run_cli, str(DOCKERFILES / "tf24-new" / "Dockerfile"), "--driver", "450.80.02")
    assert rc == 0, report["findings"]
    assert [f for f in report["findings"] if f["severity"] != "info"] == []
    [line] = report["checked_lines"]
    assert (line["package"], line["line"], line["verdict"]) == ("tensorflow-gpu", 9, "runs")


def test_the_host_driver_is_checked_against_the_image(run_cli: Run) -> None:
    rc, report = check_json(run_cli, str(DOCKERFILES / "tf24-new" / "Dockerfile"), "--driver", "418.87.01")
    assert rc == 1
    [error] = [f for f in report["findings"] if f["rule"] == "target-incompatible"]
    assert "driver" in error["message"] and "418.87.01" in error["message"]


def test_multistage_build_args_and_copied_requirements(run_cli: Run) -> None:
    """ARG defaults fill the FROM; the final stage inherits its parent's image and installs; the docs stage does not
    run; `pip install -r` reads the file COPY put in the image, with its own lines."""
    _, report = check_json(run_cli, str(DOCKERFILES / "multistage" / "Dockerfile"), "--driver", "470.82.01")
    lines = {(Path(p["file"]).name, p["line"], p["package"]) for p in report["checked_lines"]}
    assert lines == {
        ("requirements.txt", 2, "torch"),
        ("requirements.txt", 3, "onnxruntime-gpu"),
        ("Dockerfile", 17, "jax"),
    }
    assert "mkdocs" not in report["not_checked"]
    assert all(f["severity"] != "error" for f in report["findings"])


def test_a_framework_image_carries_its_framework(run_cli: Run) -> None:
    rc, report = check_json(run_cli, str(DOCKERFILES / "torch-image" / "Containerfile"), "--driver", "470.82.01")
    assert rc == 1
    [error] = [f for f in report["findings"] if f["rule"] in ("target-incompatible", "cuda-disagreement")]
    assert (error["line"], error["package"]) == (1, "torch")
    assert "CUDA 12.1" in error["message"] and "470.82.01" in error["message"]


def test_from_with_an_undefined_arg_is_a_note(run_cli: Run) -> None:
    _, report = check_json(run_cli, str(DOCKERFILES / "undefined-arg" / "Dockerfile"))
    [note] = [f for f in report["findings"] if f["rule"] == "image-not-checked"]
    assert note["line"] == 1 and note["severity"] == "info" and "$CUDA_VERSION" in note["message"]


def test_unterminated_continuation_is_a_one_line_error(run_cli: Run) -> None:
    path = DOCKERFILES / "unterminated" / "Dockerfile"
    proc = run_cli("check", str(path))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"dnnresolve check: error: {path}:2: line continuation at the end of the file: "
        "the instruction of line 2 is unterminated"
    ]
    assert "Traceback" not in proc.stderr


def test_a_directory_stands_for_its_dockerfile_too(run_cli: Run) -> None:
    rc, report = check_json(run_cli, str(DOCKERFILES / "tf24-old"))
    assert rc == 1 and [Path(f).name for f in report["files"]] == ["Dockerfile"]
