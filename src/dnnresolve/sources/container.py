"""The environment a Dockerfile builds: facts of its image, each with the line that set it.

A container meets the host's driver and GPUs (``--driver``, ``--target``) and brings the rest itself: its base
image's CUDA, cuDNN, OS and Python, or what its own steps install (``apt-get install python3.10``,
``libcudnn8=8.9.7.29-1+cuda12.2``, ``conda install python=3.9 cudatoolkit=11.3``), which win over the image's.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from ..findings import Finding, Severity
from ..machine import CudaInstall, CudnnInstall, Runtime
from ..records import field, record
from ..versions import CudaVersion, CudnnVersion, PythonVersion

if TYPE_CHECKING:
    from ..matrix import Matrix
    from .interface import SourceFile


@record
class Container:
    """What the final stage of a Dockerfile sets; ``where`` says, per fact, which line set it."""

    image: str = ""
    os: str = ""
    cuda: CudaVersion | None = None
    cudnn: CudnnVersion | None = None
    python: PythonVersion | None = None
    where: dict[str, str] = field(default_factory=dict)  # fact -> "Dockerfile:3 (FROM ...)"
    stepped: set[str] = field(default_factory=set)  # facts a step of the Dockerfile set (over the image's)
    absent: set[str] = field(default_factory=set)  # "cuda", "cudnn": known not to be in the container
    # NVIDIA_* the Dockerfile's ENV sets (NVIDIA_DISABLE_REQUIRE, NVIDIA_REQUIRE_CUDA), each's line in where["ENV name"]
    env: dict[str, str] = field(default_factory=dict)
    resolved: bool = False

    def resolve(self, matrix: Matrix, source: SourceFile) -> None:
        """Fill in what the base image brings; a deleted or unknown image, and the framework an image carries,
        go into ``source`` (a finding, a requirement at the FROM line)."""
        if self.resolved or not self.image:
            return
        self.resolved = True
        from ..base_image import os_python, resolve
        from .interface import LocatedRequirement, parse_requirement

        file, _, rest = self.where["image"].partition(":")
        line = int(rest.split(" ", 1)[0])
        image = resolve(self.image, matrix)
        where = self.where["image"]
        for note in image.notes:
            source.findings.append(Finding(file, line, "", Severity.INFO, "image-not-checked", note))
        if image.deleted:
            fix = (
                f"use {image.replacement}"
                if image.replacement
                else "no published nvidia/cuda tag has this CUDA and cuDNN"
            )
            message = (
                f"{self.image} is no longer published: NVIDIA deletes EOL CUDA image tags from Docker Hub and NGC, "
                "so the build cannot pull it"
            )
            source.findings.append(
                Finding(file, line, "", Severity.WARNING, "image-deleted", message, fix, image.source)
            )
        for key in ("os", "cuda", "cudnn", "python"):
            value = getattr(image, key)
            if value and (key not in self.stepped or _refines(value, getattr(self, key))):
                setattr(self, key, value)
                self.where[key] = where
        for key in image.absent:
            if getattr(self, key) is None:
                self.absent.add(key)
                self.where[key] = f"{where}: none in this image"
        if self.python is None and self.os and "python3" in self.where:
            python, page = os_python(self.os, matrix)
            if python is not None:
                self.python = python
                self.where["python"] = f"{self.where['python3']}, {self.os}'s python3 [{page}]"
        if image.framework:
            req = parse_requirement(image.framework)
            source.requirements.insert(
                0, LocatedRequirement(file, line, image.framework, "pip", requirement=req, group=f"FROM {self.image}")
            )

    def runtime(self, target: Runtime | None) -> Runtime:
        """The target's driver and GPUs, with what the container brings in place of the host's own."""
        runtime = copy.deepcopy(target) if target is not None else Runtime(python=None)
        runtime.os = "linux"
        runtime.cuda = [CudaInstall(self.cuda, "", self.where["cuda"])] if self.cuda is not None else []
        runtime.cudnn = (
            [CudnnInstall(self.cudnn, "", self.where["cudnn"], loads_first=True)] if self.cudnn is not None else []
        )
        runtime.python = self.python
        runtime.absent = set(self.absent)
        runtime.conda_prefix = runtime.conda_env = ""
        runtime.conda_cuda = None
        runtime.modules = []
        runtime.packages = []
        for key in ("cuda", "cudnn", "python"):
            runtime.sources.pop(key, None)
            if key in self.where:
                runtime.sources[key] = self.where[key]
        runtime.sources["os"] = self.where.get("os", self.where.get("image", ""))
        return runtime


def _refines(image: object, stepped: object) -> bool:
    """Whether the image's value is the release a step names, only more precisely (11.8.0 for a step's 11.8)."""
    theirs, ours = str(image).split("."), str(stepped).split(".")
    return len(theirs) > len(ours) and theirs[: len(ours)] == ours
