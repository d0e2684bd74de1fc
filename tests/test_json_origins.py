"""JSON gives each value alone and where it came from in a field of its own: never "535.104.05 (given (--driver))",
whatever the command (check, plan, doctor, detect), and profiles written before the split still load."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .detect.machines import MACHINES

Run = Callable[..., subprocess.CompletedProcess[str]]
PROJECTS = Path(__file__).parent / "fixtures" / "projects"
K20M_FLAGS = ("--driver", "375.26", "--gpu", "Tesla K20m", "--cuda", "8.0", "--cudnn", "5.0.5", "--python", "3.6")
NO_NVML = {"DNNRESOLVE_NVML": "0"}
# a value with its origin glued on: "535.104.05 (given (--driver))", "A100 (compute capability 8.0)",
# "...information; compute capability 3.5 from the matrix's GPU table"
MIXED = re.compile(r"^\S+ \((given|compute capability|/)|compute capability \d+\.\d+ from")


def _strings(data: Any, path: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _strings(v, f"{path}.{k}")
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from _strings(v, f"{path}[{i}]")
    elif isinstance(data, str):
        yield path, data


def _json(run_cli: Run, *argv: str) -> dict[str, Any]:
    r = run_cli(*argv, "--json", env=NO_NVML)
    assert r.returncode in (0, 1), r.stderr
    data: dict[str, Any] = json.loads(r.stdout)
    return data


def _no_mixed_strings(data: dict[str, Any], *skip: str) -> None:
    """Prose (a reason, a message, a fix) may quote values; the fields that hold a value or an origin may not."""
    prose = ("reason", "message", "fix", "description", "title", "notes", "explanation", "summary", *skip)
    mixed = [(p, s) for p, s in _strings(data) if MIXED.search(s) and not any(f".{k}" in p for k in prose)]
    assert mixed == []


def test_check_target_gives_each_value_alone_and_its_origin_in_sources(run_cli: Run, tmp_path: Path) -> None:
    req = tmp_path / "requirements.txt"
    req.write_text("tensorflow-gpu==1.4.0\n")
    report = _json(run_cli, "check", str(req), *K20M_FLAGS)
    assert report["target"] == {
        "os": "linux",
        "driver": "375.26",
        "driver_cuda": "8.0",
        "gpu": "Tesla K20m",
        "compute_capability": "3.5",
        "cuda": "8.0",
        "cudnn": "5.0.5",
        "python": "3.6",
        "python_executable": None,
        "sources": {
            "driver": "given (--driver)",
            "driver_cuda": "the matrix: newest CUDA for driver 375.26",
            "gpu": "given (--gpu)",
            "compute_capability": "the matrix's GPU table",
            "cuda": "given (--cuda)",
            "cudnn": "given (--cudnn)",
            "python": "given (--python)",
        },
    }
    _no_mixed_strings(report)


def test_check_target_from_pyproject_names_the_line_in_sources(run_cli: Run) -> None:
    report = _json(run_cli, "check", str(PROJECTS / "uv-torch" / "pyproject.toml"))
    target = report["target"]
    assert (target["driver"], target["gpu"], target["compute_capability"]) == ("535.104.05", "A100", "8.0")
    assert re.fullmatch(r".*pyproject\.toml:\d+ \[tool\.dnnresolve\]", target["sources"]["driver"])
    _no_mixed_strings(report)


def test_plan_says_where_each_fact_it_checked_came_from(run_cli: Run) -> None:
    data = _json(run_cli, "plan", "tensorflow-gpu==1.0", "--no-detect", *K20M_FLAGS)
    machine = data["machine"]
    assert (machine["driver"], machine["gpu"], machine["cudnn"]) == ("375.26", "Tesla K20m", "5.0.5")
    assert machine["sources"]["cudnn"] == "given (--cudnn)"
    checks = {c["component"]: c for c in data["requirements"][0]["checks"]}
    assert (checks["driver"]["found"], checks["driver"]["found_from"]) == ("375.26", "given (--driver)")
    cc = checks["compute_capability"]
    assert (cc["found"], cc["found_from"]) == ("3.5", "the matrix's GPU table")
    assert (checks["cudnn"]["found"], checks["cudnn"]["found_from"]) == ("5.0.5", "given (--cudnn)")
    assert checks["os"]["found_from"] is None  # nobody said: the default
    _no_mixed_strings(data)


def test_detect_keeps_the_capability_apart_from_where_the_gpu_was_found(run_cli: Run) -> None:
    data = _json(run_cli, "detect", "--root", str(MACHINES / "k20m"))
    [gpu] = data["gpus"]
    assert gpu["compute_capability"] == "3.5"
    assert gpu["found_in"] == "/proc/driver/nvidia/gpus/0000:03:00.0/information"
    assert gpu["compute_capability_from"] == "the matrix's GPU table"
    _no_mixed_strings(data, "root")
    text = run_cli("detect", "--root", str(MACHINES / "k20m"), env={**NO_NVML, "COLUMNS": "200"}).stdout
    assert "compute capability from the matrix's GPU table" in text  # the text still says where 3.5 came from


def test_doctor_json_has_the_machine_with_its_sources(run_cli: Run) -> None:
    data = _json(run_cli, "doctor", "--root", str(MACHINES / "k20m"))
    machine = data["machine"]
    assert (machine["driver"], machine["sources"]["driver"]) == ("375.26", "/proc/driver/nvidia/version")
    assert (machine["gpu"], machine["compute_capability"]) == ("Tesla K20m", "3.5")
    _no_mixed_strings(data)


OLD_PROFILE = {  # detect --json of the K20m node as dnnresolve wrote it before values and origins were apart
    "schema": "dnnresolve-runtime/1",
    "os": "linux",
    "system": "",
    "driver": "375.26",
    "driver_cuda": None,
    "gpus": [
        {
            "name": "Tesla K20m",
            "compute_capability": "3.5",
            "memory_mib": None,
            "found_in": "/proc/driver/nvidia/gpus/0000:03:00.0/information; compute capability 3.5 from the matrix's "
            "GPU table",
        }
    ],
    "cuda": [{"version": "8.0.61", "path": "/usr/local/cuda-8.0", "found_in": "/usr/local/cuda-8.0/version.txt"}],
    "cudnn": [
        {"version": "5.0.5", "path": "/opt/apps/cudnn/5.0", "found_in": "x", "loads_first": False, "lib_dir": ""}
    ],
    "python": {"version": "3.6", "implementation": "", "executable": "", "machine": "", "glibc": "2.17"},
    "packages": [],
    "conda": {"prefix": "", "env": ""},
    "modules": [],
    "notes": [],
    "sources": {"driver": "/proc/driver/nvidia/version", "python": "/usr/lib64/python3.6/site-packages"},
}


@pytest.mark.parametrize("profile", ["old", "new"])
def test_profiles_old_and_new_load_as_targets(run_cli: Run, tmp_path: Path, profile: str) -> None:
    path = tmp_path / "node.json"
    if profile == "old":
        path.write_text(json.dumps(OLD_PROFILE))
    else:
        path.write_text(run_cli("detect", "--root", str(MACHINES / "k20m"), "--json", env=NO_NVML).stdout)
    data = _json(run_cli, "plan", "tensorflow-gpu==1.0", "--target", str(path))
    checks = {c["component"]: c for c in data["requirements"][0]["checks"]}
    assert checks["compute_capability"]["found"] == "3.5" and checks["cudnn"]["status"] == "fail"
    assert data["machine"]["sources"]["driver"] == "/proc/driver/nvidia/version"
