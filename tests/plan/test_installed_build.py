"""The build installed is held against the build a requirement needs (issue #21): pip counts torch 2.1.0+cpu as
2.1.0, so ``pip install torch==2.1.0`` keeps it; a plan on a GPU machine must not say "nothing to do". The machine
is a real tree read through ``--root`` (driver, GPU, a virtual environment with the distribution's metadata)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest

RunCli = Callable[..., CompletedProcess[str]]
ENV = {"DNNRESOLVE_NVML": "0", "VIRTUAL_ENV": "/home/user/venv", "CONDA_PREFIX": ""}


def _machine(root: Path, installed: str) -> Path:
    """A T4 on driver 535.104.05 and a Python 3.11 virtual environment holding ``installed`` (torch's version)."""
    nvidia = root / "proc/driver/nvidia"
    (nvidia / "gpus/0000:3b:00.0").mkdir(parents=True)
    (nvidia / "version").write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Tue Aug 1 2023\n")
    (nvidia / "gpus/0000:3b:00.0/information").write_text("Model: \t\t Tesla T4\nBus Location: \t 0000:3b:00.0\n")
    venv = root / "home/user/venv"
    info = venv / f"lib/python3.11/site-packages/torch-{installed}.dist-info"
    info.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.4\n")
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {installed}\n")
    return root


def _plan(run_cli: RunCli, root: Path, spec: str) -> dict[str, Any]:
    r = run_cli("plan", spec, "--root", str(root), "--json", env=ENV)
    assert r.returncode in (0, 1), r.stderr
    plan: dict[str, Any] = json.loads(r.stdout)["requirements"][0]
    return plan


def test_a_cpu_build_installed_is_not_the_cuda_build_needed(run_cli: RunCli, tmp_path: Path) -> None:
    plan = _plan(run_cli, _machine(tmp_path, "2.1.0+cpu"), "torch==2.1.0")
    assert plan["installed"] == "2.1.0+cpu"
    assert not plan["satisfied"]
    first = plan["options"][0]
    assert not first["title"].startswith("nothing to do"), first
    argv = [s["argv"] for s in first["steps"]]
    # pip keeps 2.1.0+cpu for ==2.1.0: the plan removes it before it installs the CUDA build
    removal = [list(a) for a in argv].index(["python", "-m", "pip", "uninstall", "-y", "torch"])
    assert "torch==2.1.0" in argv[-1] and removal < len(argv) - 1, argv


@pytest.mark.parametrize("installed", ["2.1.0+cu121", "2.1.0"])
def test_the_build_needed_installed_is_nothing_to_do(run_cli: RunCli, tmp_path: Path, installed: str) -> None:
    plan = _plan(run_cli, _machine(tmp_path, installed), "torch==2.1.0")
    assert plan["satisfied"], plan["options"]
    assert plan["options"][0]["title"].startswith("nothing to do")


def test_a_cpu_build_asked_and_installed_is_nothing_to_do(run_cli: RunCli, tmp_path: Path) -> None:
    plan = _plan(run_cli, _machine(tmp_path, "2.1.0+cpu"), "torch==2.1.0+cpu")
    assert plan["satisfied"], plan["options"]
