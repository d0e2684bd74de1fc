"""The runtime a command works against: detected, read from a profile, then overridden by flags."""

from __future__ import annotations

import argparse
import platform
import sys

from .errors import UserError
from .matrix import Matrix
from .model import CudaInstall, CudnnInstall, Gpu, Runtime
from .versions import ComputeCapability, CudaVersion, CudnnVersion, DriverVersion, PythonVersion, VersionError


def runtime_for(args: argparse.Namespace, matrix: Matrix) -> Runtime:
    """This machine (unless --no-detect), then --target, then the flags, each overriding the last."""
    runtime = Runtime(os=_this_os(), python=PythonVersion(sys.version_info[:3]))
    runtime.sources["python"] = "this interpreter"
    return apply_flags(runtime, args, matrix)


def _this_os() -> str:
    return {"Windows": "windows", "Darwin": "macos"}.get(platform.system(), "linux")


def apply_flags(runtime: Runtime, args: argparse.Namespace, matrix: Matrix) -> Runtime:
    try:
        if getattr(args, "os", None):
            runtime.os = args.os
        if getattr(args, "python", None):
            runtime.python = PythonVersion.parse(args.python)
            runtime.sources["python"] = "--python"
        if getattr(args, "driver", None):
            runtime.driver = DriverVersion.parse(args.driver)
            runtime.sources["driver"] = "--driver"
        if getattr(args, "cuda", None):
            runtime.cuda = [CudaInstall(CudaVersion.parse(args.cuda), "", "--cuda")]
        if getattr(args, "cudnn", None):
            runtime.cudnn = [CudnnInstall(CudnnVersion.parse(args.cudnn), "", "--cudnn", loads_first=True)]
        if getattr(args, "gpu", None):
            runtime.gpus = [gpu_from_flag(args.gpu, matrix)]
    except VersionError as exc:
        raise UserError(str(exc)) from exc
    return runtime


def gpu_from_flag(text: str, matrix: Matrix) -> Gpu:
    """``--gpu`` takes what nvidia-smi prints, the name without its brand prefix, or a compute capability."""
    try:
        return Gpu(f"compute capability {text}", ComputeCapability.parse(text), found_in="--gpu")
    except VersionError:
        pass
    model = matrix.gpu(text)
    if model is None:
        raise UserError(f"unknown GPU {text!r}: give its compute capability instead, e.g. --gpu 3.5")
    return Gpu(model.name, model.compute_capability, found_in="--gpu")
