"""The machine `explain` gives fixes for, from command-line flags only (no detection).

A shared helper that also reads --target profiles and detection is being written elsewhere; this small
function is the one place `explain` builds its Runtime, so it can be swapped for that helper.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import TypeVar

from ..errors import UserError
from ..matrix import Matrix
from ..model import CudaInstall, CudnnInstall, Gpu, Runtime
from ..versions import ComputeCapability, CudaVersion, CudnnVersion, DriverVersion, PythonVersion, VersionError

__all__ = ["runtime_from_flags"]

V = TypeVar("V")


def runtime_from_flags(args: argparse.Namespace, matrix: Matrix | None) -> Runtime | None:
    """A Runtime from --cuda/--cudnn/--driver/--gpu/--python/--os, or None when none is given."""
    for flag in ("target", "root"):
        if getattr(args, flag, None):
            raise UserError(
                f"--{flag} is not read by explain yet; describe the machine with --cuda, --cudnn, "
                "--driver, --gpu and --python"
            )
    keys = ("cuda", "cudnn", "driver", "gpu", "python", "os")
    if not any(getattr(args, k, None) for k in keys):
        return None
    rt = Runtime(os=getattr(args, "os", None) or "linux")
    if args.cuda:
        rt.cuda.append(CudaInstall(_parse("cuda", args.cuda, CudaVersion.parse), "", "--cuda"))
    if args.cudnn:
        rt.cudnn.append(CudnnInstall(_parse("cudnn", args.cudnn, CudnnVersion.parse), "", "--cudnn", True))
    if args.driver:
        rt.driver = _parse("driver", args.driver, DriverVersion.parse)
    if args.python:
        rt.python = _parse("python", args.python, PythonVersion.parse)
    if args.gpu:
        rt.gpus.append(_gpu(args.gpu, matrix))
    for key in keys:
        if getattr(args, key, None):
            rt.sources[key] = f"--{key}"
    return rt


def _parse(flag: str, text: str, parse: Callable[[str], V]) -> V:
    try:
        return parse(text)
    except VersionError as exc:
        raise UserError(f"--{flag}: {exc}") from exc


def _gpu(text: str, matrix: Matrix | None) -> Gpu:
    if re.fullmatch(r"\s*(?:sm_?|compute_)?\d+(?:\.\d)?[af]?\s*", text, re.IGNORECASE):
        try:
            return Gpu(name="", compute_capability=ComputeCapability.parse(text), found_in="--gpu")
        except VersionError as exc:
            raise UserError(f"--gpu: {exc}") from exc
    model = matrix.gpu(text) if matrix is not None else None
    return Gpu(name=text, compute_capability=model.compute_capability if model else None, found_in="--gpu")
