"""`dnnresolve detect` as a user runs it: a real subprocess of the command line."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .machines import K20M_ENV, MACHINES

Run = Callable[..., Any]


def test_detect_json_is_a_runtime_profile(run_cli: Run) -> None:
    res = run_cli("detect", "--root", str(MACHINES / "k20m"), "--json", env=K20M_ENV)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["schema"] == "dnnresolve-runtime/1"
    assert data["driver"] == "375.26"
    assert data["sources"]["driver"] == "/proc/driver/nvidia/version"
    assert [(c["version"], c["loads_first"]) for c in data["cudnn"]] == [("5.0.5", True), ("5.1.10", False)]
    assert {(m["name"], m["version"], m["loaded"]) for m in data["modules"]} == {
        ("cuda", "8.0", True),
        ("cudnn", "5.0", True),
        ("cudnn", "5.1", False),
    }


def test_detect_text_says_what_and_where(run_cli: Run) -> None:
    res = run_cli("detect", "--root", str(MACHINES / "k20m"), env={**K20M_ENV, "COLUMNS": "200"})  # a table
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == f"dnnresolve detect: files under {MACHINES / 'k20m'}"
    text = "\n".join(line.rstrip() for line in lines)
    assert "driver" in text and "375.26" in text and "/proc/driver/nvidia/version" in text
    assert "5.0.5  (loads first)  /opt/apps/cudnn/5.0" in text
    assert "5.1.10  /opt/apps/cudnn/5.1" in text
    assert "Tesla K20m, compute capability 3.5" in text
    assert re.search(r"modules loaded +cuda/8.0 cudnn/5.0 +\$LOADEDMODULES", text)
    assert "tensorflow-gpu 1.0.0" in text


def test_hung_nvidia_smi_under_emulated_machine(run_cli: Run, tmp_path: Path) -> None:
    from .machines import make_machine

    root = make_machine(tmp_path, "modern", {"hang/nvidia-smi": "/usr/bin"})
    started = time.monotonic()
    res = run_cli(
        "detect",
        "--root",
        str(root),
        "--timeout",
        "1",
        "--json",
        env={"DNNRESOLVE_ROOT_PROGRAMS": "1", "PATH": "/usr/bin:/bin"},
    )
    assert res.returncode == 0, res.stderr
    assert time.monotonic() - started < 10
    data = json.loads(res.stdout)
    assert "nvidia-smi: nvidia-smi timed out after 1s" in data["notes"]
    assert data["driver"] == "570.86.15"


def test_bad_root_and_bad_override_are_one_line_errors(run_cli: Run, tmp_path: Path) -> None:
    res = run_cli("detect", "--root", str(tmp_path / "nowhere"))
    assert res.returncode == 2
    assert res.stderr == f"dnnresolve detect: error: --root {tmp_path / 'nowhere'}: not a directory\n"
    res = run_cli("detect", "--root", str(MACHINES / "nogpu"), env={"DNNRESOLVE_GPU": "Banana X"})
    assert res.returncode == 2
    assert res.stderr.startswith("dnnresolve detect: error: DNNRESOLVE_GPU 'Banana X': not a GPU the matrix knows")
    assert "Traceback" not in res.stderr


def test_detect_on_this_machine_writes_a_profile_plan_can_read(run_cli: Run, tmp_path: Path) -> None:
    from dnnresolve.profile import load_profile

    res = run_cli("detect", "--json", env={"DNNRESOLVE_NVML": "0"})
    assert res.returncode == 0, res.stderr
    profile = tmp_path / "here.json"
    profile.write_text(res.stdout)
    rt = load_profile(str(profile))
    assert rt.python is not None  # the interpreter on PATH answered
    assert rt.sources["python"]
