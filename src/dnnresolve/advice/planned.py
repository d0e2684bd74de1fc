"""Explain through the planner: the machine as the flags, the detection and the log describe it, and the release
of the failing framework as the log names it or the runtime has it installed, planned as `plan` would plan it
there. The diagnosis gets the planner's verdict on that release and its first option as the leading fix; with
no release known, the planner's pick for the machine (the release and build that carry the GPU's code, the
driver it needs). No I/O."""

from __future__ import annotations

from ..errors import UserError
from ..explain.diagnosis import Diagnosis
from ..explain.logfacts import read_facts
from ..machine import InstalledPackage, Runtime
from ..pkgname import canonicalize_name
from ..records import field, record, replace
from ..specs import InvalidRequirement, parse_requirement

TYPE_CHECKING = False
if TYPE_CHECKING:  # the planner loads when a diagnosis is planned: most messages of a log are not
    from typing import Any

    from ..matrix import Matrix
    from ..plan_options import Option

# The catalog names frameworks; these are the PyPI names their releases go by, where they differ.
_PACKAGE_PREFIXES = {
    "pytorch": ("torch",),
    "caffe2": ("torch",),
    "paddle": ("paddlepaddle",),
    "onnxruntime": ("onnxruntime",),
}
# the package `plan` is asked about when no release is known (CuPy's name depends on the CUDA: not guessed)
_PLANNED_PACKAGE = {
    "pytorch": "torch",
    "tensorflow": "tensorflow",
    "jax": "jax",
    "onnxruntime": "onnxruntime-gpu",
    "paddle": "paddlepaddle-gpu",
}
PLANNED_KINDS = frozenset({"cudnn_version_mismatch", "cuda_version_mismatch", "driver_too_old", "arch_unsupported"})
# (and no_cuda_build: the CUDA build of the release installed)
# what a kind's fix depends on: planned without a known release only where the machine says it (a cuDNN or CUDA
# mismatch is about the release: the catalog names those built for what was loaded)
_NEEDS = {"arch_unsupported": ("gpu",), "driver_too_old": ("driver",)}


@record
class Planned:
    """What the planner adds to a diagnosis: leading fixes, and the record for ``--json`` (``Diagnosis.plan``)."""

    fixes: list[str] = field(default_factory=list)
    record: dict[str, Any] | None = None  # its "fix_source": the matrix row the leading fix rests on, if it leads


def installed_release(framework: str, runtime: Runtime, matrix: Matrix) -> InstalledPackage | None:
    """The installed package of the framework: the one named as it is (jax rather than jaxlib), else the first
    whose name starts so (paddlepaddle-gpu for paddle)."""
    prefixes = _PACKAGE_PREFIXES.get(framework, (framework,))
    known = set(matrix.packages())
    found = [p for p in runtime.packages if (n := canonicalize_name(p.name)) in known and n.startswith(prefixes)]
    return next((p for p in found if canonicalize_name(p.name) in prefixes), found[0] if found else None)


def machine_for(d: Diagnosis, runtime: Runtime, matrix: Matrix) -> Runtime:
    """``runtime`` with what the message and the lines around it say of the machine that failed (its GPU's
    compute capability, the cuDNN it loaded, the driver and Python it printed), where neither the flags nor
    detection said it."""
    from ..detect.overrides import runtime_from_flags

    given = {c for c in ("gpu", "driver", "cuda", "cudnn", "python") if _known(runtime, c)}
    facts: dict[str, tuple[str, str]] = {}  # component -> (value, where)
    for key, (value, line) in read_facts(d.nearby, d.nearby_from).machine.items():
        facts[key] = (value, f"the log, line {line}")
    said = {"compute_capability": "gpu", "cudnn": "cudnn"}
    if d.kind == "cuda_version_mismatch":
        said["cuda"] = "cuda"
    for key, component in said.items():
        if key in d.found:
            facts[component] = (d.found[key], f"the message, line {d.line}")
    rt = runtime
    for component, (value, where) in facts.items():
        if component in given:
            continue
        try:
            rt = runtime_from_flags(rt, matrix=matrix, **{component: value})
        except UserError:
            continue  # a GPU name the matrix does not know, a version that does not parse: not a fact here
        _said_by(rt, component, where)
    return rt


def _said_by(rt: Runtime, component: str, where: str) -> None:
    label = f"given (--{component})"
    rt.sources["gpus" if component == "gpu" else component] = where
    rt.gpus = [replace(g, found_in=where) if g.found_in.startswith(label) else g for g in rt.gpus]
    rt.cuda = [replace(c, found_in=where) if c.found_in == label else c for c in rt.cuda]
    rt.cudnn = [replace(c, found_in=where) if c.found_in == label else c for c in rt.cudnn]


def plan_diagnosis(d: Diagnosis, runtime: Runtime, matrix: Matrix) -> Planned:
    """The planner's verdict and first option for the release the diagnosis is about, on ``runtime`` (already
    ``machine_for`` the diagnosis); nothing where neither the release nor the part of the machine that matters
    is known. A release the log names (pip's "Successfully installed ...") is taken as installed there, with the
    packages named beside it (jax's CUDA plugin), as ``doctor`` would find them."""
    if not d.framework:
        return Planned()
    prefixes = _PACKAGE_PREFIXES.get(d.framework, (d.framework,))
    logged = read_facts(d.nearby, d.nearby_from).releases
    if any(n.startswith(prefixes) for n in logged):
        packages = [InstalledPackage(n, v, f"the log, line {line}") for n, (v, line) in logged.items()]
        runtime = replace(runtime, packages=packages)
    installed = installed_release(d.framework, runtime, matrix)
    if installed is not None:
        return _for_release(d, installed, runtime, matrix)
    package = _PLANNED_PACKAGE.get(d.framework)
    if package is None or d.kind not in _NEEDS or not any(_known(runtime, c) for c in _NEEDS[d.kind]):
        return Planned()
    return _for_machine(d, package, runtime, matrix)


def _known(runtime: Runtime, component: str) -> bool:
    parts = {"gpu": runtime.gpus, "driver": runtime.driver, "cuda": runtime.cuda, "cudnn": runtime.cudnn}
    return bool(parts[component]) if component in parts else runtime.python is not None


def _for_release(d: Diagnosis, installed: InstalledPackage, runtime: Runtime, matrix: Matrix) -> Planned:
    """The installed (or logged) release planned on the machine: its verdict, as doctor gives it (the build it is
    counts: a CPU build runs on the CPU only), and the first option as the leading fix."""
    from ..cuda_builds import build_gap
    from ..doctor import verdict_with_build
    from ..plan import make_plan
    from ..solve import solve
    from ..solve.results import RUNS

    name, version = installed.name, installed.version
    logged = installed.location.startswith("the log")
    where = installed.location.removeprefix("the log, ")
    what = f"{name} {version} (named on {where})" if logged else f"the installed {name} {version}"
    try:
        req = parse_requirement(f"{name}=={version}")
    except InvalidRequirement:
        return Planned()
    rp = make_plan(solve([req], runtime, matrix), runtime, matrix).requirements[0]
    best = rp.result.best
    if best is None and "+" in version:  # a build the matrix lists no recipe of (+cpu): the release, and the gap
        req = parse_requirement(f"{name}=={version.split('+', 1)[0]}")
        rp = make_plan(solve([req], runtime, matrix), runtime, matrix).requirements[0]
        best = rp.result.best
    if best is None:
        return Planned()
    gap = build_gap(installed, runtime, matrix)
    verdict = verdict_with_build(rp.result.verdict, gap.kind if gap is not None else None)
    record = {
        "package": rp.result.package,
        "version": version,
        "build": f"CUDA {best.cuda}" if best.cuda else "CPU",
        "verdict": verdict,
        "machine": _machine(runtime),
        "option": rp.options[0].title if rp.options else None,
        "source": best.release.source,
        "fix_source": None,
    }
    if gap is not None and gap.steps and d.kind in PLANNED_KINDS | {"missing_library", "no_cuda_build"}:
        # it runs without its CUDA build (jax's CPU build, a +cpu torch): the CUDA build of the same release
        return Planned(
            [f"for {what}: install its CUDA build: {gap.commands}"], {**record, "fix_source": record["source"]}
        )
    if d.kind not in PLANNED_KINDS | {"missing_library"} or not rp.options:
        return Planned(record=record)
    if rp.options[0].title.startswith("nothing to do") and verdict != RUNS:
        return Planned(record=record)
    if verdict == RUNS:
        line = (
            f"for {what}: the planner finds that this machine runs it ({_machine(runtime)}); what the failing "
            "process loaded differs from that: `dnnresolve doctor` reads what loads"
        )
        return Planned([line], {**record, "fix_source": best.release.source})
    option = rp.options[0]
    fix = f"for {what}: {option.title.split(': ', 1)[-1]}{_needs(option, d, runtime, matrix)}: {_steps(option)}"
    source = option.candidate.release.source if option.candidate else best.release.source
    return Planned([fix], {**record, "fix_source": source})


def _for_machine(d: Diagnosis, package: str, runtime: Runtime, matrix: Matrix) -> Planned:
    """No release known: what `plan PACKAGE` picks for this machine (its newest release, or the newest that runs
    here)."""
    from ..plan import make_plan
    from ..solve import solve

    rp = make_plan(solve([parse_requirement(package)], runtime, matrix), runtime, matrix).requirements[0]
    if not rp.options or rp.options[0].candidate is None:
        return Planned()
    option = rp.options[0]
    cand = option.candidate
    assert cand is not None
    build = f"its CUDA {cand.cuda} build" if cand.cuda else "its CPU build"
    title = option.title.split(": ", 1)[0].removesuffix(", but not with pip")
    if title.startswith("install it"):
        title = f"{cand.release.package} {cand.release.version} runs here"
    machine = _machine(runtime, _NEEDS[d.kind])
    fix = f"for this machine ({machine}): {title}, {build}{_needs(option, d, runtime, matrix)}: {_steps(option)}"
    record = {
        "package": cand.release.package,
        "version": None,
        "build": f"CUDA {cand.cuda}" if cand.cuda else "CPU",
        "verdict": None,
        "machine": machine,
        "option": option.title,
        "source": cand.release.source,
        "fix_source": cand.release.source,
    }
    return Planned([fix], record)


def _steps(option: Option) -> str:
    return "; then ".join(f"`{s.shell}`" if s.argv or s.env else s.description for s in option.steps)


def _needs(option: Option, d: Diagnosis, runtime: Runtime, matrix: Matrix) -> str:
    """What the option's build needs that the fix should say: the code its wheels carry for the GPU (a message of
    a missing architecture), the driver it needs where this one is not known to run it (with no driver known,
    the least that runs it, through minor-version compatibility, and the one for full support)."""
    from ..solve.results import Status

    cand = option.candidate
    if cand is None:
        return ""
    out = []
    cc = cand.check("compute_capability")
    if d.kind == "arch_unsupported" and cc is not None and cc.found:
        out.append(f"its {cc.reason}" if cc.reason.startswith("wheels") else cc.reason)
    driver = cand.check("driver")
    if driver is not None and driver.needed and driver.status is not Status.OK:
        has = {
            Status.WARN: f" (driver {driver.found} runs it with a caveat)",
            Status.FAIL: f" (this is {driver.found})",
        }
        major = cand.cuda.major if cand.cuda is not None else 0
        least = matrix.driver_table(runtime.os).family_min_driver(major)
        full = driver.needed.removeprefix(">= ")
        if driver.status is Status.UNKNOWN and least is not None and str(least) != full:
            out.append(
                f"it needs driver >= {least} (CUDA {major}.x minor-version compatibility; >= {full} for full support)"
            )
        else:
            out.append(f"it needs driver {driver.needed}" + has.get(driver.status, ""))
    return "; " + "; ".join(out) if out else ""


def _machine(runtime: Runtime, relevant: tuple[str, ...] = ("gpu", "driver", "cuda", "cudnn")) -> str:
    """The parts of the machine the plan went by that were told (flags, the log) or that the message is about,
    each with where it was told: ``Tesla K80 (sm_37, --gpu), driver 470.82.01 (line 3)``."""
    parts = []

    def add(component: str, text: str, where: str) -> None:
        if component in relevant or _told(where):
            parts.append(text + _told(where, " (", ")"))

    if runtime.gpus:
        g = runtime.gpus[0]
        cc = g.compute_capability.sm if g.compute_capability else "compute capability ?"
        gpu = f"a GPU of {cc}" if g.name.startswith("compute capability") else f"{g.name}, {cc}"
        add("gpu", gpu, runtime.sources.get("gpus", ""))
    if runtime.driver is not None:
        add("driver", f"driver {runtime.driver}", runtime.sources.get("driver", ""))
    if runtime.cuda:
        add("cuda", f"CUDA {runtime.cuda[0].version}", runtime.cuda[0].found_in)
    if runtime.active_cudnn is not None:
        add("cudnn", f"cuDNN {runtime.active_cudnn.version}", runtime.active_cudnn.found_in)
    if runtime.python is not None:
        add("python", f"Python {runtime.python.series}", runtime.sources.get("python", ""))
    return ", ".join(parts) or "nothing known"


def _told(where: str, before: str = ", ", after: str = "") -> str:
    """Where a fact was told, shortly (``--gpu``, ``line 3``); nothing for what detection found."""
    if where.startswith("given (--"):
        return f"{before}{where.removeprefix('given (').split(')')[0]}{after}"
    if where.startswith(("the log, ", "the message, ")):
        return f"{before}{where.split(', ', 1)[1]}{after}"
    return ""


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
