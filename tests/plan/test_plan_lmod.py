"""End to end with real Lmod: detect sees the modules, plan emits the `module load` line, and running
that line in a real shell makes cuDNN 5.1 the one the dynamic linker would load."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..detect.machines import k20m_cluster

REPO = Path(__file__).resolve().parents[2]
LMOD_INIT = Path("/usr/share/lmod/lmod/init/bash")

pytestmark = pytest.mark.skipif(
    not LMOD_INIT.exists() or shutil.which("bash") is None, reason="Lmod is not installed (scripts/test installs it)"
)


def _shell(tmp_path: Path, modulefiles: Path, body: str) -> subprocess.CompletedProcess[str]:
    script = (
        f"type module >/dev/null 2>&1 || source {LMOD_INIT}\n"
        f"export MODULEPATH={modulefiles}\n"
        "module load cuda/8.0 cudnn/5.0\n" + body
    )
    env = {
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(REPO / "src"),
        "DNNRESOLVE_NVML": "0",
        "NO_COLOR": "1",
    }
    return subprocess.run(["bash", "-lc", script], capture_output=True, text=True, env=env, timeout=120)


def test_plan_module_line_runs_in_a_real_lmod_shell(tmp_path: Path) -> None:
    node, modulefiles = k20m_cluster(tmp_path)
    dnn = f"{sys.executable} -m dnnresolve"
    flags = "--driver 375.26 --gpu 'Tesla K20m' --python 3.6"
    res = _shell(tmp_path, modulefiles, f"{dnn} plan tensorflow-gpu==1.0 {flags} --json\n")
    assert res.returncode == 1, res.stderr  # steps are needed
    req = json.loads(res.stdout)["requirements"][0]
    assert req["gap"] == ["cudnn"]
    cudnn = next(c for c in req["checks"] if c["component"] == "cudnn")
    assert cudnn["found"] == "5.0.5" and "5.1" in cudnn["needed"]
    first = req["options"][0]
    module_lines = [s["command"] for s in first["steps"] if s["kind"] == "module"]
    assert module_lines == ["module load cudnn/5.1"]

    # The text output a user reads names the same line first.
    text = _shell(tmp_path, modulefiles, f"{dnn} plan tensorflow-gpu==1.0 {flags}\n").stdout
    options = text[text.index("Options") :]
    steps = [line.strip() for line in options.splitlines() if line.startswith(" " * 7)]  # an option's title may wrap
    assert steps[0] == "module load cudnn/5.1", text

    # Run the emitted line in a real shell with Lmod, then detect again in that shell.
    after = _shell(tmp_path, modulefiles, "\n".join([*module_lines, f"{dnn} detect --json"]) + "\n")
    assert after.returncode == 0, after.stderr
    data = json.loads(after.stdout)
    loaded = {(m["name"], m["version"]) for m in data["modules"] if m["loaded"]}
    assert ("cudnn", "5.1") in loaded and ("cudnn", "5.0") not in loaded
    first_loaded = [c for c in data["cudnn"] if c["loads_first"]]
    assert [c["version"] for c in first_loaded] == ["5.1.10"]
    assert first_loaded[0]["path"] == str(node / "opt/apps/cudnn/5.1")

    # And with that shell's runtime the plan has nothing left to fix but the install itself.
    res = _shell(
        tmp_path, modulefiles, "\n".join([*module_lines, f"{dnn} plan tensorflow-gpu==1.0 {flags} --json"]) + "\n"
    )
    req = json.loads(res.stdout)["requirements"][0]
    assert req["gap"] == []
