"""Probes that run programs: small scripts standing in for nvidia-smi and ldconfig print real output."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from dnnresolve.detect import detect_runtime
from dnnresolve.versions import ComputeCapability, CudaVersion, DriverVersion

from .machines import K20M_ENV

Machine = Callable[..., Path]
SITE = "/home/user/venv/lib/python3.11/site-packages"


def test_old_nvidia_smi_without_compute_cap_falls_back_to_the_matrix(machine: Machine) -> None:
    root = machine("k20m", {"k20m/nvidia-smi": "/usr/bin"})
    rt = detect_runtime(str(root), K20M_ENV, timeout=5, run_programs=True)
    assert rt.driver == DriverVersion.parse("375.26")
    assert rt.sources["driver"] == "/proc/driver/nvidia/version"  # files first
    [gpu] = rt.gpus
    assert (gpu.name, gpu.memory_mib) == ("Tesla K20m", 4742)
    assert gpu.compute_capability == ComputeCapability.parse("3.5")
    assert gpu.found_in == "nvidia-smi --query-gpu=name,memory.total,driver_version"
    assert gpu.capability_from == "the matrix's GPU table"
    assert rt.driver_cuda is None  # the 375 table has no "CUDA Version"


def test_several_gpus_and_the_cuda_version_the_driver_supports(machine: Machine) -> None:
    root = machine("modern", {"two-gpus/nvidia-smi": "/usr/bin"})
    rt = detect_runtime(str(root), {"PATH": "/usr/bin:/bin"}, timeout=5, run_programs=True)
    assert [(g.name, str(g.compute_capability), g.memory_mib) for g in rt.gpus] == [
        ("NVIDIA TITAN V", "7.0", 12288),
        ("NVIDIA RTX 5880 Ada Generation", "8.9", 49140),
    ]
    assert rt.driver_cuda == CudaVersion.parse("12.8")
    assert rt.sources["driver_cuda"] == "nvidia-smi (CUDA Version)"
    assert rt.driver == DriverVersion.parse("570.86.15")


def test_nvidia_smi_that_cannot_reach_the_driver_is_a_note(machine: Machine) -> None:
    root = machine("nogpu", {"no-driver/nvidia-smi": "/usr/bin"})
    rt = detect_runtime(str(root), {"PATH": "/usr/bin:/bin"}, timeout=5, run_programs=True)
    assert rt.driver is None and rt.gpus == []
    expected = "nvidia-smi: exit status 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"
    assert any(n.startswith(expected) for n in rt.notes), rt.notes


def test_hung_nvidia_smi_is_waited_for_once_and_files_still_answer(machine: Machine) -> None:
    root = machine("modern", {"hang/nvidia-smi": "/usr/bin"})
    started = time.monotonic()
    rt = detect_runtime(str(root), {"PATH": "/usr/bin:/bin"}, timeout=2, run_programs=True)
    elapsed = time.monotonic() - started
    # the CSV query and the plain table run together: one timeout, not two
    assert 2 <= elapsed < 3.5, elapsed
    assert "nvidia-smi: nvidia-smi timed out after 2s" in rt.notes
    assert rt.driver == DriverVersion.parse("570.86.15")  # from /sys/module/nvidia/version
    assert rt.gpus == []


def test_wsl_nvidia_smi_in_usr_lib_wsl_lib_gives_the_windows_driver(machine: Machine) -> None:
    root = machine("wsl", {"wsl/nvidia-smi": "/usr/lib/wsl/lib"})
    rt = detect_runtime(str(root), {"PATH": "/usr/bin:/bin"}, timeout=5, run_programs=True)
    assert rt.system == "wsl"
    assert rt.driver == DriverVersion.parse("546.80") and rt.sources["driver"] == "nvidia-smi"
    assert [(g.name, str(g.compute_capability)) for g in rt.gpus] == [("NVIDIA GeForce RTX 3060 Laptop GPU", "8.6")]
    assert rt.driver_cuda is None  # "CUDA Version: ERR!"


def test_ldconfig_cache_decides_when_ld_library_path_does_not(machine: Machine) -> None:
    root = machine("modern", {"modern-ldconfig/ldconfig": "/sbin"})
    rt = detect_runtime(
        str(root), {"PATH": "/usr/bin:/bin", "VIRTUAL_ENV": "/home/user/venv"}, timeout=5, run_programs=True
    )
    first = sorted((str(c.version), c.path) for c in rt.cudnn if c.loads_first)
    assert first == [("8.9.7", "/usr"), ("9.0.0", "/usr/local/cuda-12.4")]
    by_path = {c.path: c for c in rt.cudnn}
    assert "loads first for libcudnn.so.9 (ldconfig cache: /usr/local/cuda-12.4/lib64/libcudnn.so.9)" in (
        by_path["/usr/local/cuda-12.4"].found_in
    )


def test_ld_library_path_comes_before_the_ldconfig_cache(machine: Machine) -> None:
    root = machine("modern", {"modern-ldconfig/ldconfig": "/sbin"})
    env = {"PATH": "/usr/bin:/bin", "VIRTUAL_ENV": "/home/user/venv", "LD_LIBRARY_PATH": f"{SITE}/nvidia/cudnn/lib"}
    rt = detect_runtime(str(root), env, timeout=5, run_programs=True)
    first = sorted((str(c.version), c.path) for c in rt.cudnn if c.loads_first)
    assert first == [("8.9.7", "/usr"), ("9.1.0", f"{SITE}/nvidia/cudnn")]


def test_no_programs_run_under_root_unless_asked(machine: Machine) -> None:
    root = machine("modern", {"two-gpus/nvidia-smi": "/usr/bin"})
    rt = detect_runtime(str(root), {"PATH": "/usr/bin:/bin"}, timeout=5)
    assert rt.gpus == []
    assert "nvidia-smi: not run under --root" in rt.notes
