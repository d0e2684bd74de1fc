"""Explain through the planner: when the machine's runtime says which release of the failing framework is
installed, the diagnosis gets the planner's first option for that release as its leading fixes. No I/O."""

from __future__ import annotations

from ..cuda_builds import build_gap
from ..matrix import Matrix
from ..model import InstalledPackage, Runtime
from ..pkgname import canonicalize_name
from ..plan import make_plan
from ..solve import solve
from ..specs import InvalidRequirement, parse_requirement
from .diagnosis import Diagnosis

# The catalog names frameworks; these are the PyPI names their releases go by, where they differ.
_PACKAGE_PREFIXES = {"pytorch": ("torch",), "caffe2": ("torch",), "paddle": ("paddlepaddle",)}
PLANNED_KINDS = frozenset({"cudnn_version_mismatch", "cuda_version_mismatch", "driver_too_old", "arch_unsupported"})
# (and no_cuda_build: the CUDA build of the release installed)


def installed_release(framework: str, runtime: Runtime, matrix: Matrix) -> InstalledPackage | None:
    """The installed package of the framework: the one named as it is (jax rather than jaxlib), else the first
    whose name starts so (paddlepaddle-gpu for paddle)."""
    prefixes = _PACKAGE_PREFIXES.get(framework, (framework,))
    known = set(matrix.packages())
    found = [p for p in runtime.packages if (n := canonicalize_name(p.name)) in known and n.startswith(prefixes)]
    return next((p for p in found if canonicalize_name(p.name) in prefixes), found[0] if found else None)


def planned_fixes(d: Diagnosis, runtime: Runtime, matrix: Matrix) -> list[str]:
    """The planner's first option for the installed release, as fix lines, or nothing."""
    if d.kind == "no_cuda_build" and d.framework:
        return _cuda_build(d.framework, runtime, matrix)
    if d.kind not in PLANNED_KINDS or not d.framework:
        return []
    installed = installed_release(d.framework, runtime, matrix)
    if installed is None:
        return []
    try:
        req = parse_requirement(f"{installed.name}=={installed.version}")
    except InvalidRequirement:
        return []
    plan = make_plan(solve([req], runtime, matrix), runtime, matrix)
    rp = plan.requirements[0]
    if not rp.options:
        return []
    option = rp.options[0]
    what = option.title.split(": ", 1)[-1]
    steps = "; then ".join(f"`{s.shell}`" if s.argv or s.env else s.description for s in option.steps)
    return [f"for the installed {installed.name} {installed.version}: {what}: {steps}"]


def _cuda_build(framework: str, runtime: Runtime, matrix: Matrix) -> list[str]:
    """For a framework that runs without its CUDA build (jax's CPU build, a +cpu torch, jax without jaxlib): the
    planner's commands for the CUDA build of the release installed. Nothing where a CUDA build is there (it
    failed to start: its own error says why)."""
    installed = installed_release(framework, runtime, matrix)
    gap = build_gap(installed, runtime, matrix) if installed is not None else None
    if gap is None or not gap.steps:
        return []
    return [f"for the installed {gap.package} {gap.version}: install its CUDA build: {gap.commands}"]


def merge_fixes(planned: list[str], generic: list[str]) -> list[str]:
    """The planner's fix first; the catalog's fixes after it, less those that repeat its commands."""
    said = " ".join(planned).replace('"', "").replace("'", "")
    out = list(planned)
    for fix in generic:
        command = fix.split(": ", 1)[-1].replace('"', "").replace("'", "").strip("`")
        if planned and command and command in said:
            continue
        out.append(fix)
    return out
