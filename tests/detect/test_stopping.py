"""Stopping `dnnresolve detect` with a real signal while nvidia-smi hangs: the command ends at once, with
one line and the shell's status for the signal, and takes the programs it started (their process groups)
with it. The fixture nvidia-smi marks its start, so the signal arrives while it runs."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from .machines import BIN
from .procs import dnnresolve, finish, gone_soon, marks_dir, wait_for_marks

Machine = Callable[..., Path]


@pytest.mark.parametrize(
    ("signum", "status", "message"),
    [
        (signal.SIGINT, 130, "dnnresolve: interrupted"),
        (signal.SIGTERM, 143, "dnnresolve: terminated by SIGTERM"),
        (signal.SIGHUP, 129, "dnnresolve: terminated by SIGHUP"),
    ],
    ids=["SIGINT", "SIGTERM", "SIGHUP"],
)
def test_a_signal_during_detect_stops_it_and_its_programs(
    signum: int, status: int, message: str, machine: Machine, tmp_path: Path
) -> None:
    root = machine("modern", {"hang/nvidia-smi": "/usr/bin"})
    with marks_dir(tmp_path) as marks:
        # a deadline far away: only the signal can end the command in time
        proc = dnnresolve(marks, tmp_path, "detect", "--root", str(root), "--timeout", "60", "--json")
        probes = [int(p) for p in wait_for_marks(marks, 2)]  # the query and the plain table both run
        os.kill(proc.pid, signum)
        code, out, err = finish(proc, within=5)
        assert (code, err) == (status, message + "\n")
        assert out == ""
        assert gone_soon(probes) == [], "nvidia-smi outlived the command that started it"


def test_a_signal_while_nothing_hangs_changes_nothing(machine: Machine, tmp_path: Path) -> None:
    """The handlers only turn a signal into an orderly stop: a run that is not signalled answers as before."""
    root = machine("modern", {"two-gpus/nvidia-smi": "/usr/bin"})
    with marks_dir(tmp_path) as marks:
        code, out, err = finish(dnnresolve(marks, tmp_path, "detect", "--root", str(root), "--json"), within=30)
    assert code == 0 and err == "" and '"NVIDIA TITAN V"' in out


@pytest.fixture
def hung_nvml(tmp_path: Path) -> dict[str, str]:
    """The environment that makes detection load a libnvidia-ml whose nvmlInit_v2 never returns."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the stand-in libnvidia-ml.so.1")
    lib = tmp_path / "lib"
    lib.mkdir()
    source = BIN / "hung-nvml/libnvidia-ml.c"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(lib / "libnvidia-ml.so.1"), str(source)], check=True, timeout=60)
    return {"LD_LIBRARY_PATH": str(lib), "DNNRESOLVE_NVML": "1"}


def test_nvml_hung_in_the_driver_does_not_keep_detect_from_exiting(hung_nvml: dict[str, str], tmp_path: Path) -> None:
    """This machine, NVML on: its thread is still stuck in nvmlInit_v2 when detect answers, and exits anyway."""
    with marks_dir(tmp_path) as marks:
        proc = dnnresolve(marks, tmp_path, "detect", "--json", "--timeout", "2", extra_env=hung_nvml)
        code, out, err = finish(proc, within=15)
        assert code == 0, err
        assert "NVML: no answer within 2s" in json.loads(out)["notes"]
        wait_for_marks(marks, 1, within=1, name="nvml")  # it was NVML that hung


def test_sigterm_while_nvml_hangs(hung_nvml: dict[str, str], tmp_path: Path) -> None:
    with marks_dir(tmp_path) as marks:
        proc = dnnresolve(marks, tmp_path, "detect", "--json", "--timeout", "60", extra_env=hung_nvml)
        wait_for_marks(marks, 1, name="nvml")
        os.kill(proc.pid, signal.SIGTERM)
        assert finish(proc, within=5) == (143, "", "dnnresolve: terminated by SIGTERM\n")
