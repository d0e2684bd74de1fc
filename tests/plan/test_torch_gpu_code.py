"""What the GPU code of torch's non-default CUDA variants (#21) changes for a user: the plans they are offered."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from typing import Any

RunCli = Callable[..., subprocess.CompletedProcess[str]]


def _plan(run_cli: RunCli, spec: str, *machine: str) -> dict[str, Any]:
    proc = run_cli("plan", spec, "--no-detect", "--json", *machine)
    assert proc.returncode in (0, 1), proc.stderr
    return dict(json.loads(proc.stdout)["requirements"][0])


def _gpu_check(run_cli: RunCli, spec: str, *machine: str) -> dict[str, Any]:
    [check] = [c for c in _plan(run_cli, spec, *machine)["checks"] if c["component"] == "compute_capability"]
    return dict(check)


K80 = ("--gpu", "Tesla K80", "--driver", "470.82.01", "--os", "linux", "--python", "3.11")


def test_a_k80_asking_for_torch_2_8_is_offered_2_7_1_in_its_cuda_11_8_build(run_cli: RunCli) -> None:
    # issue #21: the cu118 wheels of 2.7 carry sm_37 (build_cuda.sh: CUDA 11.8 adds 3.7;9.0; the 2.7.0 cuda11.8
    # image's torch.cuda.get_arch_list() lists sm_37), so the newest release that runs on a K80 with driver 470
    # is 2.7.1, in the Python already there, not 2.6.0
    first = _plan(run_cli, "torch==2.8.0", *K80)["options"][0]
    assert first["title"] == (
        "use torch 2.7.1 instead: it runs with what this machine has, through CUDA 11.x minor-version compatibility"
        " and with cuDNN turned off (cuDNN 9.1 does not support sm_37)"  # its cuDNN lists 5.0 and newer (#21)
    )
    assert first["steps"][-1]["command"] == (
        "python -m pip install torch==2.7.1 torchvision==0.22.1 torchaudio==2.7.1 "
        "--index-url https://download.pytorch.org/whl/cu118"
    )


def test_the_cuda_11_8_build_of_torch_2_7_names_the_sass_it_carries(run_cli: RunCli) -> None:
    check = _gpu_check(run_cli, "torch==2.7.1+cu118", *K80)
    assert check["status"] == "ok" and check["reason"] == "wheels carry code for sm_37"
    assert check["needed"] == "sm_37, sm_50, sm_60, sm_70, sm_75, sm_80, sm_86, sm_90"


WINDOWS = ("--driver", "576.02", "--os", "windows", "--python", "3.12")


def test_windows_torch_2_7_1_cuda_12_8_wheels_still_carry_pascal_code(run_cli: RunCli) -> None:
    # the Windows cu128 wheel of 2.7.1 reports sm_50..sm_120 with sm_61 (torch.cuda.get_arch_list(), CorridorKey
    # PR 141), unlike the Linux one that starts at sm_75: a GTX 1080 runs it
    check = _gpu_check(run_cli, "torch==2.7.1+cu128", "--gpu", "GeForce GTX 1080", *WINDOWS)
    assert check["status"] == "ok" and check["reason"] == "wheels carry code for sm_61"
    linux = _gpu_check(run_cli, "torch==2.7.1+cu128", "--gpu", "GeForce GTX 1080", "--driver", "575.51.03")
    assert linux["status"] == "fail"


def test_windows_torch_2_6_cuda_11_8_wheels_carry_kepler_sass_and_ptx(run_cli: RunCli) -> None:
    # windows/cuda118.bat: TORCH_CUDA_ARCH_LIST=3.7+PTX;5.0;6.0;6.1;7.0;7.5;8.0;8.6;9.0
    check = _gpu_check(run_cli, "torch==2.6.0+cu118", "--gpu", "Tesla K80", "--driver", "474.44", "--os", "windows")
    assert check["status"] == "ok" and check["reason"] == "wheels carry code for sm_37"
    assert check["needed"] == "sm_37, sm_50, sm_60, sm_61, sm_70, sm_75, sm_80, sm_86, sm_90 + PTX compute_37"
