"""`plan --format dockerfile`: the first option of each requirement as a Dockerfile whose image brings what it needs.

A release whose wheels load CUDA and cuDNN from the system gets an ``nvidia/cuda`` base: a published tag of the
matrix's ``[[cuda_image]]`` table (never a deleted one) whose CUDA and cuDNN the build runs on, Ubuntu whose own
``python3`` the release supports (``[[os_python]]``), installed into a venv. A release whose wheels bring their own
CUDA (torch, ``jax[cuda12]``, ``tensorflow[and-cuda]``) or a CPU build gets the lighter ``python:X.Y-slim``, with the
host driver it needs in a comment. Each base is tried as `check` reads it (the image's facts on the target's driver
and GPUs) and the first the solver passes is written, so `check` of the file finds nothing wrong
(tests/plan/test_plan_files.py); where the host's driver or GPU stands in the way, which no image changes, the
first that passes all else, said so. An image whose ``NVIDIA_REQUIRE_CUDA`` the host's driver fails (or may fail,
its GPU's brand unknown: ``image_require``) never starts there: it is written only where the driver stands in the way
anyway, with a comment. No published image fits, or the build is a download: a `UserError` saying what was needed.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from typing import TYPE_CHECKING

from packaging.version import Version

from ..errors import UserError
from ..pkgname import canonicalize_name
from ..plan import Plan, make_plan
from ..plan_options import Option
from ..solve import solve
from ..solve.checks import needs_system_cuda
from ..solve.results import Candidate, Status
from ..sources.container import Container
from ..sources.dockerrun import pip_arguments
from ..specs import InvalidRequirement, exact_version, parse_requirement
from ..versions import PythonVersion

if TYPE_CHECKING:
    from ..images import CudaImage
    from ..machine import Runtime
    from ..matrix import Matrix
    from ..specs import Requirement
    from ..steps import Step
    from ..versions import CudaVersion

VENV = "/opt/venv"
PYTHON_IMAGES = "https://hub.docker.com/_/python"
# EOL tags stay pullable, unmaintained: https://github.com/docker-library/python/issues/932
PYTHON_EOL = "https://github.com/docker-library/python/issues/932"
TOOLKIT_ENV = "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html"
_UBUNTU = ("ubuntu24.04", "ubuntu22.04", "ubuntu20.04", "ubuntu18.04")
_DRIVER_BOUND = {"driver", "compute_capability"}  # what the host brings: no image changes it


class _Base:
    """One image to try: its reference, the facts `check` reads from it, and why it was chosen."""

    def __init__(self, ref: str, python: PythonVersion, why: list[str], row: CudaImage | None = None) -> None:
        self.ref, self.python, self.why, self.row = ref, python, why, row
        self.refused = False  # the host's container toolkit would not start it (or might not: its GPU brand unknown)

    def runtime(self, target: Runtime | None, matrix: Matrix) -> Runtime:
        from ..sources.interface import SourceFile

        where = f"Dockerfile:1 (FROM {self.ref})"
        container = Container(image=self.ref, where={"image": where})
        if self.row is not None:
            container.where["python3"] = "Dockerfile:2 (python3)"
        container.resolve(matrix, SourceFile("Dockerfile", "dockerfile"))
        return container.runtime(target)


def to_dockerfile(plan: Plan, target: Runtime | None, matrix: Matrix) -> tuple[str, bool]:
    """The Dockerfile, and whether the target's driver and GPUs run what it installs."""
    wanted = _wanted(plan)
    if not wanted:
        raise UserError("plan --format dockerfile: no requirement has an option to install")
    base, options, held = _choose(wanted, target, matrix)
    lines = ["# written by `dnnresolve plan --format dockerfile`: " + ", ".join(str(r) for r, _ in wanted)]
    lines += [f"# {w}" for w in base.why]
    lines += _driver_note([o.candidate for o in options if o.candidate is not None], held)
    lines.append(f"FROM {base.ref}")
    if base.row is not None:
        lines += _ubuntu_python()
    else:
        lines.append(f"# the CUDA images set these: the container toolkit exposes the GPUs by them ({TOOLKIT_ENV})")
        lines.append("ENV NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute,utility")
    lines += [_run(step) for option in options for step in option.steps]
    return "\n".join(lines) + "\n", not held


def _wanted(plan: Plan) -> list[tuple[Requirement, Candidate]]:
    """Each requirement as its first option installs it: the requirement its pip step writes (the extras and
    release the option chose), else the asked one."""
    out = []
    for rp in plan.requirements:
        option = rp.options[0] if rp.options else None
        if option is None or option.candidate is None:
            continue
        c = option.candidate
        names = {canonicalize_name(n) for n in c.release.names}
        req = rp.result.requirement
        for step in option.steps:
            if step.kind != "pip":
                continue
            _, words = pip_arguments(step.pip_args()[1:])
            for word in words:
                try:
                    pinned = parse_requirement(word)
                except InvalidRequirement:
                    continue
                if canonicalize_name(pinned.name) in names:
                    req = pinned
                    break
        out.append((req, c))
    return out


def _choose(
    wanted: list[tuple[Requirement, Candidate]], target: Runtime | None, matrix: Matrix
) -> tuple[_Base, list[Option], bool]:
    """The first base on which each requirement's first option installs a build that runs, with nothing to do
    first; on a host whose driver or GPU no image changes, the first on which nothing else stands in the way
    (``held``)."""
    reqs = [req for req, _ in wanted]
    bases = list(_bases(wanted, target, matrix))
    for held in (False, True):
        allowed = _DRIVER_BOUND if held else set()
        for base in bases:
            if base.refused and not held:
                continue  # only where the driver stands in the way anyway (then a comment says so)
            runtime = base.runtime(target, matrix)
            planned = make_plan(solve(reqs, runtime, matrix), runtime, matrix)
            options = [rp.options[0] for rp in planned.requirements if rp.options]
            same = len(options) == len(reqs) and all(
                o.candidate is not None and o.candidate.release.package == c.release.package
                and _names(req, o.candidate.release.version)
                for o, (req, c) in zip(options, wanted)
            )  # fmt: skip
            # (not another release the plan offers on this image)
            if same and all(_installs(o, allowed) for o in options):
                return base, options, held
    manual = [str(req) for req, c in wanted if any(s.kind == "manual" for s in _first_steps(c))]
    if manual:
        raise UserError(
            f"plan --format dockerfile: {', '.join(manual)} installs from a download, not with pip or conda "
            "(see `dnnresolve plan`): no Dockerfile written"
        )
    raise UserError(_nothing_fits(wanted, matrix))


def _first_steps(c: Candidate) -> list[Step]:
    from ..plansteps import install_steps

    return install_steps(c.release, c.cuda)


def _names(req: Requirement, version: Version) -> bool:
    """Whether the requirement names this release (``==0.1.65+cuda110`` names 0.1.65's build)."""
    pinned = exact_version(req.specifier)
    if pinned is not None:
        return Version(pinned.split("+")[0]) == Version(version.public)
    return req.specifier.contains(version, prereleases=True)


def _installs(option: Option, allowed: set[str]) -> bool:
    c = option.candidate
    if c is None or {k.component for k in c.failures} - allowed:
        return False
    # on a host that stands in the way, its own fix (a driver upgrade, as root) stays a comment
    return all(s.kind in ("pip", "conda") or (allowed and s.needs_root and not s.argv) for s in option.steps)


def _bases(wanted: list[tuple[Requirement, Candidate]], target: Runtime | None, matrix: Matrix) -> Iterator[_Base]:
    releases = [c.release for _, c in wanted]
    asked = target.python if target is not None else None
    pythons = set.intersection(*({str(p.series) for p in r.python} for r in releases)) if releases else set()
    if not any(needs_system_cuda(r, matrix) for r in releases):
        first = [str(asked.series)] if asked is not None and str(asked.series) in pythons else []
        for series in first + sorted(pythons - set(first), key=_key, reverse=True):
            gpu = [r for r in releases if r.is_gpu]
            why = (
                [f"{', '.join(sorted({r.package for r in gpu}))}: the wheels bring their own CUDA and cuDNN, so a "
                 "Python image will do; the host brings only the driver"]
                if gpu
                else ["a CPU build: no CUDA image needed"]
            )  # fmt: skip
            yield _Base(f"python:{series}-slim", PythonVersion.parse(series), [*why, f"python:{series}-slim: "
                        f"{PYTHON_IMAGES} (tags of an ended Python stay pullable: {PYTHON_EOL})"])  # fmt: skip
        return
    from ..base_image import os_python

    devel = any(r.package in ("jax", "jaxlib") for r in releases)
    flavour = "devel" if devel else "runtime"
    uses_cudnn = any(r.cudnn or r.cudnn_rule is not None for r in releases)
    builds = {c.cuda.series for _, c in wanted if c.cuda is not None}
    rows = [
        r for r in matrix.cuda_images if not r.deleted and flavour in r.flavours and bool(r.cudnn_tag) == uses_cudnn
    ]
    from ..image_require import admitted_by, host_of, starts

    host = host_of(target, matrix)
    refused = {id(r) for r in rows if starts(r, host) is not True}
    # a toolkit the host driver supports first: past it, only minor-version compatibility starts the container
    top = target.driver_cuda if target is not None else None
    rows.sort(key=lambda r: (id(r) in refused, top is not None and r.cuda.series > top.series, _order(r, builds)))
    for row in rows:
        for os_name in _UBUNTU:
            if os_name not in row.os:
                continue
            python, page = os_python(os_name, matrix)
            if python is None or str(python.series) not in pythons:
                continue
            ref = f"nvidia/cuda:{row.name(flavour, os_name)}"
            why = [
                f"{ref}: CUDA {row.cuda}" + (f" and cuDNN {row.cudnn}" if row.cudnn else "")
                + f", a published tag ({row.source})",
                f"-{flavour}: "
                + ("JAX compiles its kernels with the toolkit's ptxas, which only -devel images carry"
                   if devel else "the CUDA and cuDNN libraries the wheels load; no compiler is needed"),
                f"Python {python}: {os_name}'s own python3 ({page})",
                *admitted_by(row, host),
            ]  # fmt: skip
            base = _Base(ref, python, why, row)
            base.refused = id(row) in refused
            if base.refused:
                base.why.append(
                    f"the host's driver refuses this image (its NVIDIA_REQUIRE_CUDA asks {_asks(row)}): no published "
                    "image that fits this build starts on it; a driver upgrade fixes both"
                )
            yield base


def _asks(row: CudaImage) -> str:
    return row.nvidia_require_cuda.split()[0] if row.nvidia_require_cuda else ""


def _order(row: CudaImage, builds: set[CudaVersion]) -> tuple[int, int, int, tuple[int, ...]]:
    """The build's own CUDA first, then the nearest newer toolkit, then older ones, newest first; within one
    toolkit the newest cuDNN first."""
    low = min(builds, default=None)
    cudnn = row.cudnn.parts if row.cudnn is not None else ()
    series = row.cuda.parts
    if row.cuda.series in builds:
        return (0, 0, 0, tuple(-p for p in cudnn))
    if low is None or row.cuda.series > low:
        return (1, 0, 0, (*series, *(-p for p in cudnn)))
    return (2, -series[0], -series[1], tuple(-p for p in cudnn))


def _key(series: str) -> tuple[int, ...]:
    return tuple(int(p) for p in series.split("."))


def _ubuntu_python() -> list[str]:
    install = ["apt-get", "install", "-y", "--no-install-recommends", "python3", "python3-venv"]
    return [
        "ENV DEBIAN_FRONTEND=noninteractive",
        "RUN apt-get update && " + shlex.join(install) + " && rm -rf /var/lib/apt/lists/*",
        "# a venv: the OS's own Python is the OS's to manage (from Ubuntu 23.04 pip refuses it, PEP 668)",
        f"RUN python3 -m venv {VENV}",
        f"ENV PATH={VENV}/bin:$PATH",
        "# the venv starts with the pip the OS bundles, which may predate the wheels' manylinux tags",
        "RUN python -m pip install --upgrade pip",
    ]


def _run(step: Step) -> str:
    if step.kind in ("pip", "conda", "shell") and step.argv:
        argv = list(step.argv)
        if step.kind == "conda" and argv[1:2] == ["install"] and "-y" not in argv:
            argv.insert(2, "-y")
        return "RUN " + (step.shell if step.template else shlex.join(argv))
    return f"# on the host, first: {step.description}"


def _driver_note(candidates: list[Candidate], held: bool) -> list[str]:
    """The host driver the container meets: the build's minimum, and the target's own where given."""
    out = []
    for c in candidates:
        check = c.check("driver")
        if check is None or not check.needed:
            continue
        host = f"; the target's is {check.found}" if check.found else ""
        if check.found and check.status is Status.WARN:
            host += ", which runs it with a caveat (see `dnnresolve plan`)"
        out.append(f"# host driver (the container uses the host's): {c.label} needs {check.needed}{host}")
    if held:
        out.append("# the target's driver or GPU cannot run this build: no image changes that (see `dnnresolve plan`)")
    return out


def _nothing_fits(wanted: list[tuple[Requirement, Candidate]], matrix: Matrix) -> str:
    needs = []
    for req, c in wanted:
        parts = [f"CUDA {c.cuda}"] if c.cuda is not None else []
        cudnn = c.check("cudnn")
        if cudnn is not None and cudnn.needed:
            parts.append(f"cuDNN {cudnn.needed}")
        python = c.check("python")
        if python is not None and python.needed:
            parts.append(f"Python {python.needed}")
        needs.append(f"{req} needs {', '.join(parts) or 'what no image brings'}")
    oldest = min((r.cuda for r in matrix.cuda_images if not r.deleted), default=None)
    older = oldest is not None and any(c.cuda is not None and c.cuda < oldest for _, c in wanted)
    tail = (
        f" (NVIDIA deleted the older tags; the oldest published is CUDA {oldest})"
        if older
        else " (the images that bring it do not run it on this host's GPU or driver: see `dnnresolve plan`)"
    )
    return f"plan --format dockerfile: no published nvidia/cuda image fits: {'; '.join(needs)}{tail}"
