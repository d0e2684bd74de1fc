"""Broken machines: each failed probe is a note, and detection still returns everything else.

The healthy baseline is the "modern" fixture machine: driver 570.86.15 from /sys, CUDA 12.4 in
/usr/local/cuda-12.4 (via the /usr/local/cuda link), cuDNN 8.9.7 from its header.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from dnnresolve.detect import detect_runtime
from dnnresolve.detect.context import ProbeContext
from dnnresolve.detect.machine import _guarded
from dnnresolve.machine import Runtime
from dnnresolve.versions import CudaVersion, CudnnVersion, DriverVersion

from .machines import BIN, K20M_ENV
from .procs import dnnresolve, finish, gone_soon, marks_dir, wait_for_marks

Machine = Callable[..., Path]
PATH_ENV = {"PATH": "/usr/bin:/bin"}


def detect(root: Path, env: dict[str, str] | None = None, timeout: float = 5, within: float = 20) -> Runtime:
    """Detection under ``root`` with programs run; a probe that hangs fails the test instead of hanging it."""
    answer: list[Runtime] = []
    errors: list[BaseException] = []

    def job() -> None:
        try:
            answer.append(detect_runtime(str(root), env or PATH_ENV, timeout=timeout, run_programs=True))
        except BaseException as exc:
            errors.append(exc)

    worker = threading.Thread(target=job, daemon=True)
    worker.start()
    worker.join(within)
    if worker.is_alive():
        pytest.fail(f"detection did not finish within {within}s")
    if errors:
        raise errors[0]
    return answer[0]


def assert_files_still_answer(rt: Runtime) -> None:
    assert rt.driver == DriverVersion.parse("570.86.15")
    assert [c.version for c in rt.cuda] == [CudaVersion.parse("12.4.127")]
    assert CudnnVersion.parse("8.9.7") in [c.version for c in rt.cudnn]


def test_nvidia_smi_that_crashes(machine: Machine) -> None:
    rt = detect(machine("modern", {"crash/nvidia-smi": "/usr/bin"}))
    assert "nvidia-smi: killed by SIGSEGV" in rt.notes
    assert rt.gpus == []
    assert_files_still_answer(rt)


def test_nvidia_smi_that_prints_garbage(machine: Machine) -> None:
    rt = detect(machine("modern", {"garbage/nvidia-smi": "/usr/bin"}))
    assert_files_still_answer(rt)
    # whatever it made of the garbage has no compute capability or memory it could not read, and says so
    assert all(g.compute_capability is None and g.memory_mib is None for g in rt.gpus)
    assert all(any(g.name in n for n in rt.notes) for g in rt.gpus)


def test_nvidia_smi_that_is_not_executable(machine: Machine) -> None:
    root = machine("modern", {"k20m/nvidia-smi": "/usr/bin"})
    (root / "usr/bin/nvidia-smi").chmod(0o644)
    rt = detect(root)
    assert "nvidia-smi: /usr/bin/nvidia-smi is not executable" in rt.notes
    assert_files_still_answer(rt)


def test_nvidia_smi_that_hangs_under_the_cli_is_cut_off(machine: Machine, tmp_path: Path) -> None:
    """The command line's --timeout applies; detection answers from files in about that time."""
    root = machine("modern", {"hang/nvidia-smi": "/usr/bin"})
    env = {**os.environ, "DNNRESOLVE_ROOT_PROGRAMS": "1", "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    env = {k: v for k, v in env.items() if not k.startswith("DNNRESOLVE_") or k == "DNNRESOLVE_ROOT_PROGRAMS"}
    env["DNNRESOLVE_CACHE_DIR"] = str(tmp_path / "cache")
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "dnnresolve", "detect", "--root", str(root), "--timeout", "1", "--json"],
        capture_output=True,
        text=True,
        env={**env, "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - started < 20
    assert "nvidia-smi: nvidia-smi timed out after 1s" in proc.stdout


def test_a_detached_child_of_a_hung_nvidia_smi_does_not_hold_detect(machine: Machine, tmp_path: Path) -> None:
    """nvidia-smi hangs after starting a helper in a session of its own that holds its output: at the deadline
    nvidia-smi's process group is killed and its output abandoned, not waited for until the helper ends (45 s)."""
    root = machine("modern", {"detached-hang/nvidia-smi": "/usr/bin"})
    with marks_dir(tmp_path) as marks:
        proc = dnnresolve(marks, tmp_path, "detect", "--root", str(root), "--timeout", "2", "--json")
        status, out, err = finish(proc, within=10)
        assert status == 0, err
        assert "nvidia-smi: nvidia-smi timed out after 2s" in json.loads(out)["notes"]
        assert json.loads(out)["driver"] == "570.86.15"  # the files still answer
        probes = [int(p) for p in wait_for_marks(marks, 2, within=1)]  # the query and the plain table
        assert gone_soon(probes) == [], "a process of nvidia-smi's own group outlived detect"


def test_output_held_open_by_a_detached_child_is_still_read(machine: Machine, tmp_path: Path) -> None:
    """nvidia-smi prints its answer and exits at once, but a helper it left keeps its output open (no end of
    file): the answer is used, with a note, and detect does not wait for the helper (45 s)."""
    root = machine("modern", {"detached-output/nvidia-smi": "/usr/bin"})
    with marks_dir(tmp_path) as marks:
        proc = dnnresolve(marks, tmp_path, "detect", "--root", str(root), "--timeout", "2", "--json")
        status, out, err = finish(proc, within=10)
        assert status == 0, err
        data = json.loads(out)
        assert [(g["name"], g["compute_capability"]) for g in data["gpus"]] == [
            ("NVIDIA TITAN V", "7.0"),
            ("NVIDIA RTX 5880 Ada Generation", "8.9"),
        ]
        assert data["driver_cuda"] == "12.8"  # from the plain table, also held open
        assert "nvidia-smi: exited, but a process it left running held its output open" in data["notes"]
        probes = [int(p) for p in wait_for_marks(marks, 2, within=1)]
        assert gone_soon(probes) == []


def test_unreadable_files_a_fifo_and_a_directory_in_place_of_version_files(machine: Machine) -> None:
    root = machine("modern")
    version_json = root / "usr/local/cuda-12.4/version.json"
    version_json.unlink()
    os.mkfifo(version_json)  # opening a FIFO for reading waits for a writer: a probe must not
    sys_version = root / "sys/module/nvidia/version"
    sys_version.unlink()
    sys_version.mkdir()
    rt = detect(root, within=10)
    assert "/usr/local/cuda-12.4/version.json: not a regular file; not read" in rt.notes
    assert "/sys/module/nvidia/version: not a regular file; not read" in rt.notes
    assert rt.driver == DriverVersion.parse("570.86.15")  # from /proc/driver/nvidia/version instead
    assert [c.version for c in rt.cuda] == [CudaVersion.parse("12.4.127")]  # from libcudart's name


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_files_without_read_permission(machine: Machine) -> None:
    root = machine("modern")
    (root / "sys/module/nvidia/version").chmod(0)
    rt = detect(root)
    assert "/sys/module/nvidia/version: permission denied; not read" in rt.notes
    assert_files_still_answer(rt)


def test_symlink_loops_under_usr_local_cuda(machine: Machine) -> None:
    root = machine("modern")
    (root / "usr/local/cuda").unlink()
    (root / "usr/local/cuda").symlink_to("cuda-loop")
    (root / "usr/local/cuda-loop").symlink_to("cuda")
    (root / "usr/local/cuda-12.4/lib64/self").symlink_to("self")
    (root / "usr/local/cuda-12.4/include/up").symlink_to("..")
    rt = detect(root, within=10)
    assert rt.driver == DriverVersion.parse("570.86.15")
    assert CudnnVersion.parse("8.9.7") in [c.version for c in rt.cudnn]
    assert all(c.path != "/usr/local/cuda" for c in rt.cuda)


def test_a_header_of_gigabytes_is_read_only_as_far_as_needed(machine: Machine) -> None:
    root = machine("modern")
    header = root / "usr/include/x86_64-linux-gnu/cudnn_version_v8.h"
    size = 8 * 2**30
    with open(header, "r+b") as fh:
        fh.truncate(size)  # sparse: no disk used, but reading it all would take 8 GiB of memory
    assert header.stat().st_size == size
    rt = detect(root, within=10)
    assert CudnnVersion.parse("8.9.7") in [c.version for c in rt.cudnn]  # its #defines are at the start


def test_a_dead_conda_env(machine: Machine) -> None:
    root = machine("modern")
    rt = detect(root, {**PATH_ENV, "CONDA_PREFIX": "/opt/conda/envs/gone", "CONDA_DEFAULT_ENV": "gone"})
    assert "CONDA_PREFIX=/opt/conda/envs/gone: no conda-meta directory there" in rt.notes
    assert_files_still_answer(rt)


def test_lmod_that_errors(machine: Machine) -> None:
    root = machine("k20m", {"lmod-error/lmod": "/opt/lmod/libexec"})
    env = {**K20M_ENV, "LMOD_CMD": "/opt/lmod/libexec/lmod"}
    rt = detect(root, env)
    expected = "module avail (lmod): exit status 1: Lmod has detected the following error"
    assert any(n.startswith(expected) for n in rt.notes), rt.notes
    # the modulefiles on MODULEPATH still list what is available, and the environment what is loaded
    assert {(m.name, m.version, m.loaded) for m in rt.modules} >= {("cudnn", "5.0", True), ("cudnn", "5.1", False)}
    assert rt.driver == DriverVersion.parse("375.26")


def test_everything_broken_at_once(machine: Machine) -> None:
    root = machine("modern", {"crash/nvidia-smi": "/usr/bin"})
    (root / "usr/local/cuda").unlink()
    (root / "usr/local/cuda").symlink_to("cuda")
    os.mkfifo(root / "proc/driver/nvidia/fifo")
    (root / "usr/local/cuda-12.4/version.json").write_bytes(b"\xff\xfe{\x00[[[[")
    rt = detect(root, {**PATH_ENV, "CONDA_PREFIX": "/gone", "LMOD_CMD": str(BIN / "lmod-error/lmod")})
    assert "nvidia-smi: killed by SIGSEGV" in rt.notes
    assert_files_still_answer(rt)


def test_a_version_file_with_an_impossible_version(machine: Machine) -> None:
    root = machine("modern")
    (root / "usr/local/cuda-12.4/version.json").unlink()
    (root / "usr/local/cuda-12.4/version.txt").write_text("CUDA Version 1234567.0\n")
    rt = detect(root)
    assert "/usr/local/cuda-12.4/version.txt: no CUDA version in it" in rt.notes
    assert_files_still_answer(rt)  # CUDA from libcudart's name instead


def test_a_probe_that_fails_in_a_way_nobody_foresaw_is_a_note() -> None:
    ctx = ProbeContext(None, {}, timeout=1, run_programs=False)
    try:
        answer = _guarded(ctx, "cuda", lambda: [1 // int("0")], list)
    finally:
        ctx.close()
    assert answer == []
    assert ctx.notes == ["cuda probe failed: ZeroDivisionError: integer division or modulo by zero"]


@pytest.mark.parametrize(
    "pattern",
    ["libcudnn.so*", "libcudnn.so.*", "lib?udnn*", "[l]ibcud*", "libcud[!n]*", ".hidden*", "*.h", "LIBCUDNN*", "none*"],
)
def test_a_probe_glob_finds_what_glob_finds(tmp_path: Path, pattern: str) -> None:
    """A library directory is listed once and only the names that start as the pattern does are matched by it:
    the same paths as ``glob.glob``, hidden files and case as glob has them."""
    import glob

    names = ["libcudnn.so", "libcudnn.so.8", "libcudnn.so.8.9.2", "libcudart.so.12", "libcublas.so.12", ".hidden.so"]
    names += [f"libother{i}.so.1" for i in range(200)] + ["cudnn.h", "cudnn_version_v8.h", "libCUDNN.so.9"]
    for n in names:
        (tmp_path / n).write_text("")
    ctx = ProbeContext(None, {}, timeout=1, run_programs=False)
    try:
        found = ctx.glob(f"{tmp_path}/{pattern}")
    finally:
        ctx.close()
    assert found == sorted(glob.glob(f"{tmp_path}/{pattern}"))
