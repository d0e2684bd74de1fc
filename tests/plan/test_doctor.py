"""`doctor` on copies of real machines: the installed framework checked against what would load."""

from __future__ import annotations

import json
from pathlib import Path

from ..detect.machines import make_machine


def test_doctor_on_the_k20m_node_finds_the_wrong_cudnn_and_the_right_one_on_disk(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_machine(tmp_path, "k20m")
    r = run_cli("doctor", "--root", str(root), "--json", env={"DNNRESOLVE_NVML": "0"})
    assert r.returncode == 1, r.stderr
    data = json.loads(r.stdout)
    assert data["installed_frameworks"] == ["tensorflow-gpu==1.0.0"]
    req = data["requirements"][0]
    assert req["gap"] == ["cudnn"]
    first = req["options"][0]
    # Under --root, paths are the other machine's own: the command is for that machine's shell.
    assert first["steps"][0]["command"] == 'export LD_LIBRARY_PATH="/opt/apps/cudnn/5.1/lib64:$LD_LIBRARY_PATH"'
    assert all(s["kind"] != "pip" for s in first["steps"])  # it is installed already

    text = run_cli("doctor", "--root", str(root), env={"DNNRESOLVE_NVML": "0"}).stdout
    assert "use the cuDNN 5.1.10 already installed" in text


def test_doctor_with_nothing_installed(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_machine(tmp_path, "nogpu")
    r = run_cli("doctor", "--root", str(root), env={"DNNRESOLVE_NVML": "0"})
    assert r.returncode == 0, r.stderr
    assert "No GPU framework" in r.stdout
