"""The probes' programs start before a command loads its data, so that they run while it does (a target Python,
an nvidia-smi: each a process start or more); when the command then fails on its input, they are stopped with it,
never left running. The fixture nvidia-smi hangs and marks its start."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .procs import dnnresolve, finish, gone_soon, marks_dir, wait_for_marks

Machine = Callable[..., Path]


@pytest.mark.parametrize(
    "command",
    [
        ["plan", "tensorflow-gpu==1.0"],
        ["explain", "Loaded runtime CuDNN library: 5005 (compatibility version 5000)"],
    ],
    ids=["plan", "explain"],
)
def test_probes_start_before_the_data_loads_and_end_with_a_command_that_fails(
    command: list[str], machine: Machine, tmp_path: Path
) -> None:
    root = machine("modern", {"hang/nvidia-smi": "/usr/bin"})
    bad = tmp_path / "matrix.toml"
    bad.write_text("[[framework]\n")  # the command stops on it: after the probes started, before detection
    with marks_dir(tmp_path) as marks:
        proc = dnnresolve(marks, tmp_path, *command, "--root", str(root), "--matrix", str(bad))
        status, _out, err = finish(proc, within=20)  # nvidia-smi would hang for 60 s
        assert status == 2 and f"{bad}" in err and "Traceback" not in err, err
        probes = [int(p) for p in wait_for_marks(marks, 1, within=1)]  # it ran, though detection never came
        assert gone_soon(probes) == []  # and nothing of it is left running


def test_no_probe_runs_where_the_machine_is_described(machine: Machine, tmp_path: Path) -> None:
    root = machine("modern", {"hang/nvidia-smi": "/usr/bin"})
    with marks_dir(tmp_path) as marks:
        proc = dnnresolve(marks, tmp_path, "plan", "tensorflow-gpu==1.0", "--root", str(root), "--no-detect")
        status, _out, err = finish(proc, within=20)
        assert status == 1, err
        assert list(marks.iterdir()) == []
