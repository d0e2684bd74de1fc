"""DNNRESOLVE_ROOT means what ``--root`` means: what a job on a node of the test cluster gets from its TaskProlog,
and how a container or a chroot points detect at the machine's files."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from ..detect.machines import MACHINES

Run = Callable[..., "subprocess.CompletedProcess[str]"]


def test_the_variable_reads_the_same_machine_as_the_flag(run_cli: Run) -> None:
    root = str(MACHINES / "k20m")
    by_flag = run_cli("detect", "--root", root, "--json")
    by_env = run_cli("detect", "--json", env={"DNNRESOLVE_ROOT": root})
    assert by_flag.returncode == by_env.returncode == 0, by_env.stderr
    assert json.loads(by_env.stdout) == json.loads(by_flag.stdout)
    assert json.loads(by_env.stdout)["gpus"][0]["name"] == "Tesla K20m"


def test_the_flag_wins_over_the_variable(run_cli: Run) -> None:
    done = run_cli(
        "detect", "--root", str(MACHINES / "nogpu"), "--json", env={"DNNRESOLVE_ROOT": str(MACHINES / "k20m")}
    )
    assert json.loads(done.stdout)["gpus"] == []


def test_plan_detects_under_the_variable_too(run_cli: Run) -> None:
    done = run_cli("plan", "tensorflow-gpu==1.0.0", "--json", env={"DNNRESOLVE_ROOT": str(MACHINES / "k20m")})
    assert json.loads(done.stdout)["machine"]["gpu"] == "Tesla K20m"


def test_a_bad_root_names_the_variable(run_cli: Run, tmp_path: Path) -> None:
    done = run_cli("detect", env={"DNNRESOLVE_ROOT": str(tmp_path / "nowhere")})
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        f"dnnresolve detect: error: DNNRESOLVE_ROOT {tmp_path / 'nowhere'}: not a directory"
    ]
