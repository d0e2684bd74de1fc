"""What an environment module provides, read from the naming styles sites use. Pure parsing.

``cudnn/5.1``, ``cudnn/5.1-cuda8.0``, ``cuDNN/8.2.1.32-CUDA-11.3.1`` (EasyBuild), ``cudnn/v7.6.5``,
``cuda/11.8.0``, ``CUDA/12.1.1``, ``cudatoolkit/10.1``, ``nvidia/cuda-11.8``.
"""

from __future__ import annotations

import re

from .machine import Module
from .records import record
from .versions import CudaVersion, CudnnVersion, VersionError

_CUDNN_NAMES = {"cudnn", "nvidia-cudnn", "libcudnn"}
_CUDA_NAMES = {"cuda", "cudatoolkit", "cuda-toolkit", "cuda_toolkit", "nvidia-cuda"}


@record(frozen=True)
class ModuleOffer:
    module: Module
    component: str  # "cuda" or "cudnn"
    cuda: CudaVersion | None = None  # the toolkit the module is for (or is)
    cudnn: CudnnVersion | None = None


def read_module(module: Module) -> ModuleOffer | None:
    """The component and versions a module provides, or None for modules that are neither CUDA nor cuDNN."""
    name = module.name.strip().lower()
    version = module.version.strip()
    if "/" in name:  # nested naming: nvidia/cuda-11.8 given as name "nvidia/cuda-11.8"
        name = name.rsplit("/", 1)[-1]
    m = re.match(r"(cudnn|cuda|cudatoolkit)[-_]?(\d.*)$", name)
    if m and not version:
        name, version = m.group(1), m.group(2)
    try:
        if name in _CUDNN_NAMES:
            m = re.match(r"v?(\d+(?:\.\d+){0,3})", version)
            if not m:
                return None
            parts = m.group(1).split(".")
            cudnn = CudnnVersion.parse(".".join(parts[:3]))
            return ModuleOffer(module, "cudnn", cuda=_cuda_suffix(version[m.end() :]), cudnn=cudnn)
        if name in _CUDA_NAMES:
            m = re.match(r"v?(\d+\.\d+(?:\.\d+)?)", version)
            if not m:
                return None
            return ModuleOffer(module, "cuda", cuda=CudaVersion.parse(m.group(1)))
    except VersionError:
        return None
    return None


def _cuda_suffix(rest: str) -> CudaVersion | None:
    """``-cuda8.0`` / ``-CUDA-11.3.1`` / ``_cuda10.1`` -> the CUDA it was built for."""
    m = re.search(r"cuda[-_]?(\d+\.\d+)", rest, re.IGNORECASE)
    if not m:
        return None
    try:
        return CudaVersion.parse(m.group(1))
    except VersionError:
        return None
