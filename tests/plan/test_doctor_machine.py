"""`doctor` says which Python it read and what it found of the machine, also when no framework is installed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from ..detect.machines import MACHINES, make_machine

Run = Callable[..., subprocess.CompletedProcess[str]]
NO_NVML = {"DNNRESOLVE_NVML": "0", "COLUMNS": "80"}


def _lines(text: str) -> dict[str, str]:
    """label -> value of the machine lines ("  driver  570.86.15")."""
    out = {}
    for line in text.splitlines():
        label, _, value = line.strip().partition("  ")
        if line.startswith("  ") and label in ("Python", "driver", "GPU", "CUDA", "cuDNN"):
            out[label] = value.strip()
    return out


def test_doctor_on_a_machine_without_driver_or_python_says_so(run_cli: Run) -> None:
    r = run_cli("doctor", "--root", str(MACHINES / "nogpu"), env=NO_NVML)
    assert r.returncode == 0, r.stderr
    facts = _lines(r.stdout)
    assert facts == {
        "Python": "none found ($VIRTUAL_ENV, $CONDA_PREFIX, python3 on PATH)",
        "driver": "no NVIDIA driver found",
        "GPU": "none found",
        "CUDA": "none found",
        "cuDNN": "none found",
    }, r.stdout
    assert f"files under {MACHINES / 'nogpu'}" in r.stdout.splitlines()[0]
    assert "No GPU framework checked: no Python environment found." in r.stdout


def test_doctor_without_frameworks_names_the_interpreter_and_the_machine(run_cli: Run, tmp_path: Path) -> None:
    # the modern node's driver, CUDA and cuDNN, with an activated virtual environment that holds no framework
    root = make_machine(tmp_path, "modern")
    shutil.rmtree(root / "home/user/venv/lib/python3.11/site-packages/torch-2.4.0.dist-info")  # nvidia-* wheels stay
    env = {**NO_NVML, "VIRTUAL_ENV": "/home/user/venv"}
    r = run_cli("doctor", "--root", str(root), env=env)
    assert r.returncode == 0, r.stderr
    facts = _lines(r.stdout)
    assert facts["Python"] == "3.11.9, /home/user/venv/bin/python", r.stdout
    assert facts["driver"] == "570.86.15"
    assert facts["GPU"] == "none found"
    assert facts["CUDA"] == "12.4.127, /usr/local/cuda-12.4 (also 12.1.105)"
    assert facts["cuDNN"] == "9.0.0, /usr/local/cuda-12.4 (also 8.9.7, 9.1.0)"
    assert "No GPU framework the matrix knows is installed in this Python environment." in r.stdout
    assert max(len(line) for line in r.stdout.splitlines() if str(root) not in line) <= 80, r.stdout

    data = json.loads(run_cli("doctor", "--root", str(root), "--json", env=env).stdout)
    machine = data["machine"]
    assert (machine["python"], machine["python_executable"]) == ("3.11.9", "/home/user/venv/bin/python")
    assert (machine["driver"], machine["cuda"], machine["cudnn"]) == ("570.86.15", "12.4.127", "9.0.0")
    assert machine["sources"]["python"] == "/home/user/venv/pyvenv.cfg"
    assert data["installed_frameworks"] == []


def test_doctor_on_this_machine_names_the_interpreter_it_ran(run_cli: Run) -> None:
    """No --root: the interpreter of the active environment is asked, and named with its version."""
    venv = str(Path(sys.executable).parent.parent)
    r = run_cli("doctor", env={**NO_NVML, "VIRTUAL_ENV": venv})
    assert r.returncode in (0, 1), r.stderr
    assert r.stdout.splitlines()[0] == "Machine: this one"
    python = _lines(r.stdout)["Python"]
    version = ".".join(map(str, sys.version_info[:3]))
    assert python.startswith(f"{version}, {venv}/bin/python"), python
    assert _lines(r.stdout)["driver"]  # a version, or "no NVIDIA driver found"
