"""The build an installed package is, judged on the machine as any candidate is (``RequirementResult.installed_build``):
a requirement that the installed release meets is met only where that build runs, whatever the best pick for the
machine is. Pure: no I/O.

Which build: the one its local tag names (``+cu118``, ``+cpu``), or its conda build string
(``py3.9_cuda11.3_cudnn8.3.2_0``); an untagged conda package (Anaconda's ``tensorflow-gpu 1.14.0 h0d30ee6_0``) is the
build the CUDA its environment holds takes (conda installed it there, with that ``cudatoolkit``); an untagged wheel is
the index's default build.
"""

from __future__ import annotations

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from ..machine import InstalledPackage, Runtime
from ..matrix import Matrix
from ..model import FrameworkRelease
from ..pkgname import canonicalize_name
from ..versions import CudaVersion
from .checks import evaluate
from .results import Candidate, env_takes, is_pypi_build


def installed_build(
    installed: InstalledPackage, runtime: Runtime, matrix: Matrix, env: CudaVersion | None
) -> Candidate | None:
    """``installed`` as the build it is, with its checks on ``runtime``; ``env``: the CUDA its conda environment holds
    (conda installed it there). None where the matrix has no row of its release or names no build of it."""
    try:
        version = Version(installed.version.split("+")[0])
    except InvalidVersion:
        return None
    rows = matrix.find(canonicalize_name(installed.name), SpecifierSet(f"=={version}"))
    rows = [r.for_version(version) if r.matches(version) else r for r in rows if runtime.os in r.os]
    found = [
        Candidate(row, cuda, evaluate(row, cuda, runtime, matrix))
        for row in rows
        for cuda in row.cuda or [None]
        if _is(installed, row, cuda, env)
    ]
    return min(found, key=lambda c: len(c.failures)) if found else None


def _is(installed: InstalledPackage, row: FrameworkRelease, cuda: CudaVersion | None, env: CudaVersion | None) -> bool:
    tag = installed.build_tag()
    if tag.kind == "cpu":
        return cuda is None
    if tag.is_cuda and tag.cuda is not None:
        return cuda is not None and tag.cuda.names_build(cuda)
    if tag.kind:  # ROCm, a label of another index's: a build the matrix does not name
        return False
    if not row.cuda:
        return True
    if installed.by_conda and env is not None:
        return cuda is not None and env_takes(row, cuda, env)
    return is_pypi_build(row, cuda)
