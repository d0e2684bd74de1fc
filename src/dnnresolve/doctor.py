"""`doctor`: the frameworks installed on this machine, each checked as a pinned requirement, and the GPU code
their own libraries carry held against the machine's GPUs. No I/O."""

from __future__ import annotations

from collections.abc import Sequence

from .compat import binary_runs_on
from .cuda_builds import NO_RUNTIME
from .machine import InstalledCode, Runtime
from .matrix import Matrix
from .pkgname import canonicalize_name
from .records import record
from .solve.results import CANNOT_RUN, RUNS_WARNED, Status
from .specs import InvalidRequirement, Requirement, parse_requirement
from .versions import ComputeCapability


def installed_requirements(runtime: Runtime, matrix: Matrix) -> list[Requirement]:
    """``name==version`` (local label kept: ``torch==2.1.0+cu118`` picks that variant) per known framework."""
    known = set(matrix.packages())
    out = []
    for p in runtime.packages:
        if canonicalize_name(p.name) not in known:
            continue
        try:
            out.append(parse_requirement(f"{p.name}=={p.version}"))
        except InvalidRequirement:
            continue
    return out


def machine_facts(runtime: Runtime) -> list[tuple[str, str]]:
    """What doctor read, as (label, value) lines: the Python whose frameworks it checks (version and path),
    the driver, the GPUs, and the CUDA and cuDNN in use (others found after them). Said also when none."""
    if runtime.python is not None:  # under --root the version may come from a directory's name, not a program
        where = runtime.python_executable or (
            f"read from {runtime.sources['python']}" if "python" in runtime.sources else ""
        )
        python = ", ".join(x for x in (str(runtime.python), where) if x)
    else:
        python = "none found ($VIRTUAL_ENV, $CONDA_PREFIX, python3 on PATH)"
    gpus: dict[str, int] = {}
    for g in runtime.gpus:
        name = g.name + (f", compute capability {g.compute_capability}" if g.compute_capability else "")
        gpus[name] = gpus.get(name, 0) + 1
    cudnns = sorted(runtime.cudnn, key=lambda c: c is not runtime.active_cudnn)  # the one that loads first
    return [
        ("Python", python),
        ("driver", str(runtime.driver) if runtime.driver else "no NVIDIA driver found"),
        ("GPU", "; ".join(f"{n} x {name}" if n > 1 else name for name, n in gpus.items()) or "none found"),
        ("CUDA", _in_use([(str(c.version), c.path) for c in runtime.cuda])),
        ("cuDNN", _in_use([(str(c.version), c.path) for c in cudnns])),
    ]


def _in_use(found: list[tuple[str, str]]) -> str:
    """``12.4.127, /usr/local/cuda-12.4 (also 12.1.105)``: the first is the one in use."""
    if not found:
        return "none found"
    (version, path), others = found[0], found[1:]
    also = f" (also {', '.join(v for v, _ in others)})" if others else ""
    return ", ".join(x for x in (version, path) if x) + also


def verdict_with_build(verdict: str | None, gap_kind: str | None) -> str | None:
    """An installed framework's verdict once its build is read (``cuda_builds``): one that does not import cannot
    run; a CPU build, or a CUDA plugin that does not load, runs on the CPU only (``build_gaps`` reports a CPU
    build where there is a GPU to leave unused)."""
    if gap_kind is None or verdict == CANNOT_RUN:
        return verdict
    return CANNOT_RUN if gap_kind == NO_RUNTIME else RUNS_WARNED


def code_packages(matrix: Matrix) -> set[str]:
    """The packages whose wheels carry compiled GPU code the matrix states (torch, TensorFlow, onnxruntime-gpu,
    Paddle, MXNet): their installed libraries are worth reading. JAX and CuPy compile at run time."""
    names: set[str] = set()
    for row in matrix.frameworks:
        if row.sm or row.ptx or row.sm_exact or any(r.sm or r.ptx or r.sm_exact for r in row.install):
            names.update(row.names)
    return names


@record(frozen=True)
class CodeFinding:
    """One installed framework's own GPU code held against one GPU of the machine."""

    package: str
    version: str
    code: str  # "sm_50 sm_60 sm_90a + PTX compute_90"; "" when its libraries carry none
    libraries: int  # how many of its libraries hold GPU code
    gpu: str  # "" when no GPU is known
    capability: str
    status: Status
    reason: str


def code_findings(codes: Sequence[InstalledCode], runtime: Runtime) -> list[CodeFinding]:
    """For each installed framework and each GPU: does the code its libraries carry run there?"""
    out = []
    gpus = [(g.name, g.compute_capability) for g in runtime.gpus] or [("", None)]
    for c in codes:
        sass = [f"{cc.sm}{a}" for cc, a in sorted([(s, "") for s in c.sm] + [(e, "a") for e in c.sm_exact])]
        code = " ".join(sass) + (" + PTX " + " ".join(p.compute for p in c.ptx) if c.ptx else "")
        for name, cc in gpus:
            status, reason = _verdict(c, cc, code)
            out.append(
                CodeFinding(c.package, c.version, code.strip(), len(c.libraries), name, str(cc or ""), status, reason)
            )
    return out


def _verdict(c: InstalledCode, cc: ComputeCapability | None, code: str) -> tuple[Status, str]:
    if not code:
        return Status.FAIL, (
            f"none of its {c.files_read} libraries carries GPU code: a CPU-only build; install a CUDA build"
        )
    if cc is None:
        return Status.UNKNOWN, "the GPU's compute capability is not known"
    if binary_runs_on(cc, c.sm, exact=c.sm_exact):
        return Status.OK, f"its SASS runs on {cc.sm}"
    if binary_runs_on(cc, (), c.ptx):
        newest = max(p for p in c.ptx if p <= cc)
        return Status.WARN, (
            f"no {cc.sm} code: the driver compiles its PTX ({newest.compute}) at first use, which can take minutes"
        )
    return Status.FAIL, (
        f"no code for {cc.sm}: CUDA calls fail with 'no kernel image is available for execution on the device'; "
        f"`dnnresolve plan {c.package} --gpu {cc}` names a build that carries it"
    )
