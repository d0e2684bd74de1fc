"""Detection on the machine the tests run on: its real CUDA toolkit, and real Lmod when installed."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dnnresolve.detect import detect_runtime
from dnnresolve.versions import CudaVersion

from .machines import k20m_cluster

REPO = Path(__file__).resolve().parents[2]
NVCC = Path("/usr/local/cuda/bin/nvcc")
LMOD_INIT = Path("/usr/share/lmod/lmod/init/bash")


@pytest.mark.skipif(not NVCC.exists(), reason="no CUDA toolkit in /usr/local/cuda")
def test_real_cuda_toolkit_in_usr_local_cuda() -> None:
    out = subprocess.run([str(NVCC), "--version"], capture_output=True, text=True, timeout=30).stdout
    release = re.search(r"release (\d+\.\d+)", out)
    assert release, out
    env = {"PATH": "/usr/bin:/bin", "DNNRESOLVE_NVML": "0"}
    rt = detect_runtime(env=env, timeout=10)
    real = os.path.realpath("/usr/local/cuda")
    [toolkit] = [c for c in rt.cuda if c.path == real]
    assert toolkit.version.series == CudaVersion.parse(release.group(1))
    assert "/usr/local/cuda" in toolkit.found_in


@pytest.mark.skipif(not LMOD_INIT.exists() or shutil.which("bash") is None, reason="Lmod is not installed")
def test_real_lmod_loaded_and_available_modules(tmp_path: Path) -> None:
    node, modulefiles = k20m_cluster(tmp_path)
    cuda = node / "usr/local/cuda-8.0"
    script = (
        f"type module >/dev/null 2>&1 || source {LMOD_INIT}\n"
        f"export MODULEPATH={modulefiles}\n"
        "module load cuda/8.0 cudnn/5.0\n"
        f"exec {sys.executable} -m dnnresolve detect --json\n"
    )
    env = {
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(REPO / "src"),
        "DNNRESOLVE_NVML": "0",
        "NO_COLOR": "1",
    }
    res = subprocess.run(["bash", "-lc", script], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    modules = {(m["name"], m["version"]): m for m in data["modules"]}
    assert {k for k, m in modules.items() if m["loaded"]} == {("cuda", "8.0"), ("cudnn", "5.0")}
    assert ("cudnn", "5.1") in modules and not modules[("cudnn", "5.1")]["loaded"]
    assert modules[("cudnn", "5.0")]["modulefile"] == str(modulefiles / "cudnn" / "5.0.lua")
    assert "lmod" in data["sources"]["modules"]
    assert not [n for n in data["notes"] if n.startswith("module avail")], data["notes"]
    cudnn = {c["version"]: c for c in data["cudnn"]}
    assert cudnn["5.0.5"]["loads_first"] and cudnn["5.0.5"]["path"] == str(node / "opt/apps/cudnn/5.0")
    assert not cudnn["5.1.10"]["loads_first"]
    assert "module cudnn/5.1" in cudnn["5.1.10"]["found_in"]
    assert data["cuda"][0]["version"] == "8.0.61" and data["cuda"][0]["path"] == str(cuda)
    assert "nvcc on PATH" in data["cuda"][0]["found_in"]


def test_this_interpreter_read_in_process_says_what_running_it_says() -> None:
    # an activated virtual environment running dnnresolve: its Python is read in process, not started
    from dnnresolve.detect import python_env

    env = {"VIRTUAL_ENV": sys.prefix, "PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin"}
    started = subprocess.run(
        [sys.executable, "-c", python_env._FACTS_SCRIPT], capture_output=True, text=True, timeout=60, env=env
    )
    assert json.loads(python_env._facts_here()) == json.loads(started.stdout)
    rt = detect_runtime(env={**env, "DNNRESOLVE_NVML": "0"}, timeout=10)
    assert rt.python is not None and rt.python.parts[:2] == sys.version_info[:2]
    assert rt.python_executable == sys.executable and rt.glibc == (os.confstr("CS_GNU_LIBC_VERSION") or " ").split()[-1]
