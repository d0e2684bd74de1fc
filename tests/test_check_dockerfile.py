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


STAGES = """\
FROM nvidia/cuda:11.0.3-cudnn8-runtime-ubuntu18.04 AS train
RUN apt-get update && apt-get install -y python3 python3-pip
RUN pip3 install tensorflow-gpu==2.4.0

FROM train AS serve
RUN pip3 install tensorflow-gpu==2.4.0

FROM nvidia/cuda:10.0-cudnn7-runtime-ubuntu18.04 AS legacy
RUN apt-get update && apt-get install -y python3 python3-pip
RUN pip3 install tensorflow-gpu==2.4.0
"""


def test_check_reads_the_stage_that_runs_or_the_one_named(run_cli: Run, tmp_path: Path) -> None:
    """The last stage by default; --stage NAME the one `docker build --target NAME` builds, a stage built FROM
    another with that one's image; a name no stage has is a one-line error naming the file."""
    (tmp_path / "Dockerfile").write_text(STAGES)
    host = ("--driver", "535.104.05")
    rc, report = check_json(run_cli, str(tmp_path / "Dockerfile"), *host)
    assert rc == 1 and [p["line"] for p in report["checked_lines"]] == [10]
    rc, report = check_json(run_cli, str(tmp_path / "Dockerfile"), *host, "--stage", "train")
    assert rc == 0 and [p["line"] for p in report["checked_lines"]] == [3], report["findings"]
    rc, report = check_json(run_cli, str(tmp_path / "Dockerfile"), *host, "--stage", "SERVE")
    assert rc == 0 and [p["line"] for p in report["checked_lines"]] == [3, 6], report["findings"]
    [container] = report["containers"]
    assert (container["image"], container["cuda"], container["cudnn"]) == (
        "nvidia/cuda:11.0.3-cudnn8-runtime-ubuntu18.04",
        "11.0.3",
        "8.0.5",
    )
    r = run_cli("check", str(tmp_path / "Dockerfile"), "--stage", "nope")
    assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
    assert "Dockerfile" in r.stderr and "no stage of this Dockerfile is named so (stages: train, serve, legacy)" in (
        r.stderr
    )


def test_the_container_checked_against_is_shown_with_the_host_driver(run_cli: Run) -> None:
    """Beside the target, the container each Dockerfile's lines were judged in: its image's OS, CUDA, cuDNN and
    Python, each with the line that set it, on the host's driver and GPU."""
    path = str(DOCKERFILES / "tf24-old" / "Dockerfile")
    _, report = check_json(run_cli, path, "--driver", "535.104.05", "--gpu", "T4")
    [c] = report["containers"]
    assert c["file"] == path and c["image"] == "nvidia/cuda:10.0-cudnn7-runtime-ubuntu18.04"
    assert (c["os"], c["cuda"], c["cudnn"], c["python"], c["driver"], c["gpu"]) == (
        "ubuntu18.04",
        "10.0.130",
        "7.6.5",
        "3.6",
        "535.104.05",
        "T4",
    )
    assert c["sources"]["cuda"] == f"{path}:1 (FROM nvidia/cuda:10.0-cudnn7-runtime-ubuntu18.04)"
    assert c["sources"]["driver"] == "given (--driver)"
    text = run_cli("check", path, "--driver", "535.104.05", "--gpu", "T4", env={"COLUMNS": "400"}).stdout
    assert (
        f"Container of {path} (FROM nvidia/cuda:10.0-cudnn7-runtime-ubuntu18.04): os ubuntu18.04 (line 1), "
        "driver 535.104.05 (given (--driver)), gpu T4 (compute capability 7.5), python 3.6 (line 4), "
        "cuda 10.0.130 (line 1), cudnn 7.6.5 (line 1)\n"
    ) in text


ABSENT_BASES = [
    # (base image, what it lacks that TensorFlow 2.4 loads from the system)
    ("nvidia/cuda:11.0.3-runtime-ubuntu18.04", ["cudnn"]),  # NVIDIA's tags without "cudnnN" carry no cuDNN
    ("ubuntu:18.04", ["cuda", "cudnn"]),
    ("python:3.8-slim", ["cuda", "cudnn"]),
]


def test_a_library_the_image_lacks_is_missing_not_unknown(run_cli: Run, tmp_path: Path) -> None:
    """An image that is known to hold no cuDNN (or no CUDA) fails a release that loads it from the system; an image
    this check cannot read stays unknown (a note, no error)."""
    install = "RUN apt-get update && apt-get install -y python3 python3-pip\nRUN pip3 install tensorflow-gpu==2.4.0\n"
    for base, lacks in ABSENT_BASES:
        path = tmp_path / base.replace("/", "_").replace(":", "_") / "Dockerfile"
        path.parent.mkdir()
        path.write_text(f"FROM {base}\n{install}")
        rc, report = check_json(run_cli, str(path), "--driver", "535.104.05")
        assert rc == 1, (base, report["findings"])
        [error] = [f for f in report["findings"] if f["rule"] == "target-incompatible"]
        assert error["line"] == 3 and "from the system; there is none" in error["message"], (base, error)
        says_cuda = "built for CUDA 11.0, which" in error["message"]
        assert "cuDNN" in error["message"] and says_cuda == ("cuda" in lacks), (base, error)
    unknown = tmp_path / "unknown" / "Dockerfile"
    unknown.parent.mkdir()
    unknown.write_text(f"FROM registry.example.org/team/base:stable\n{install}")
    rc, report = check_json(run_cli, str(unknown), "--driver", "535.104.05")
    assert rc == 0 and [f["rule"] for f in report["findings"]] == ["image-not-checked"], report["findings"]
