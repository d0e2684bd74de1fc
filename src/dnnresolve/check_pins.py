"""What `check` says of one pin (a framework line): on the target (``_judge``), without the extras that bring its
CUDA libraries or the part that runs it, without a version; worked out once per distinct pin (``pin_findings``)."""

from __future__ import annotations

from packaging.specifiers import SpecifierSet

from .check_conda import build_cudas, conda_build_fix
from .check_pairs import Brought, Pin, Solved, Wheel
from .conda_builds import virtual_cuda_fix
from .cuda_builds import is_cuda_plugin
from .findings import CheckReport, Finding, Severity
from .machine import Runtime
from .matrix import Matrix
from .model import extras_of
from .plan import make_plan
from .plan_conda import as_conda_line
from .solve import nearest_known, under_its_own_name, unpublished
from .solve.checks import bundled_forms, evaluate, needs_system_cuda
from .solve.conflicts import pinned_specifiers, pins_of_form, specifiers_intersect
from .solve.results import Candidate, Check, RequirementResult, SolveResult, Status
from .specs import parse_requirement

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .check import _Memo


Fact = tuple[Severity, str, str, str, str]  # severity, rule, message, fix, source of one finding on a pin


def brought_wheels_key(brought: Brought) -> tuple[tuple[str, ...], ...]:
    return tuple((name, str(w.spec), w.by, w.where, w.package) for name, w in brought.items())


def pin_findings(
    report: CheckReport,
    pin: Pin,
    solved: Solved,
    runtime: Runtime,
    matrix: Matrix,
    has_target: bool,
    memo: _Memo,
    brought: Brought,
    brought_key: tuple[tuple[str, ...], ...],
    named: set[str],
) -> None:
    """What is wrong with one pin: on the target, without the part that runs it, without a version; worked out
    once per distinct pin (its verdict, the name and CUDA build it stands for, its conda version)."""
    conda = pin.located.conda
    exact = None if conda is None else (conda.exact_version, conda.version)
    key = (solved.number, pin.package, pin.variant_from, has_target, exact)
    found = memo.pin_facts.get(key)
    if found is None:
        result = solved.result
        rest = _no_runtime(pin, result, named) + _unpinned(pin, result)
        found = memo.pin_facts[key] = (_judge(pin, result, runtime, matrix, has_target), rest)
    judged, rest = found
    if judged is None:  # a pin the target runs: what it says may depend on the wheels beside it
        best = solved.best
        assert best is not None
        judged = memo.beside.get((key, brought_key))
        if judged is None:
            judged = _without_extras(pin, best, runtime, matrix, brought) or _caveats(pin, best)
            memo.beside[(key, brought_key)] = judged
    loc = pin.located
    for severity, rule, message, fix, source in (*judged, *rest):
        report.findings.append(Finding(loc.file, loc.line, pin.package, severity, rule, message, fix, source))


def _judge(
    pin: Pin, result: RequirementResult, runtime: Runtime, matrix: Matrix, has_target: bool
) -> list[Fact] | None:
    """What is wrong with one pin on the target; None where the target runs it and the answer depends on the
    wheels beside it (``_without_extras``, ``_caveats``)."""
    if not result.candidates:
        if pin.variant is not None and matrix.find(pin.package, _plain(pin.requirement.specifier)):
            message = f"{pin.requirement}: the matrix has no CUDA {pin.variant} build of it ({pin.variant_from})"
            fix = "use a CUDA index this release was built for"
            if pin.located.conda is not None:
                builds = ", ".join(str(b) for b in build_cudas(pin, matrix))
                fix = f"pin the CUDA of a build this release has ({builds}), or another release"
            return [(Severity.ERROR, "cuda-disagreement", message, fix, "")]
        renamed = under_its_own_name(pin.requirement, matrix)
        if renamed is not None:
            owner, last, row = renamed
            message = (
                f"{pin.requirement}: {pin.package} stops at {last} in the matrix; the framework goes on as {owner} "
                f"({owner} {row.version} satisfies {pin.requirement.specifier})"
            )
            return [(Severity.WARNING, "renamed", message, f"require {owner}{pin.requirement.specifier}", row.source)]
        missing = unpublished(pin.requirement, matrix) if pin.located.conda is None else ""
        if missing:
            return [(Severity.ERROR, "not-published", f"{pin.requirement}: {missing}", "pin a published release", "")]
        if not pin.cpu:
            near = nearest_known(pin.requirement, matrix)
            message = f"{pin.requirement}: no release in the matrix satisfies it; not checked" + (
                f" (the matrix knows {near})" if near else ""
            )
            return [(Severity.INFO, "not-checked", message, "", "")]
        return []
    best = result.best
    if best is None:
        return []
    if not _one_release(pin) and any(c.ok for c in result.candidates):
        return []  # a range: some matching release runs here (the unpinned warning says the rest)
    failures = [c for c in best.failures if (has_target or c.component != "os") and _concerns_pin(c, pin, best)]
    if not failures:
        return None if has_target else []
    where = {c.component: runtime.sources.get(c.component, "") for c in failures}
    if runtime.cuda:
        where["cuda"] = runtime.cuda[0].found_in
    if runtime.cudnn:
        where["cudnn"] = runtime.cudnn[0].found_in
    reasons = "; ".join(c.reason + (f" [{where[c.component]}]" if where.get(c.component) else "") for c in failures)
    rule = "target-incompatible"
    if pin.variant_from and any(c.component == "driver" for c in failures):
        rule = "cuda-disagreement"
        reasons += f" (CUDA {pin.variant} comes from the {pin.variant_from})"
    plan = make_plan(SolveResult([result]), runtime, matrix)
    fix = conda_build_fix(pin, runtime, matrix)
    held = next(
        (c for c in failures if c.component == "conda"), None
    )  # conda's __cuda filter alone: a driver it admits
    if held is not None and not fix and not any(c.component == "driver" for c in failures):
        fix = virtual_cuda_fix(held, runtime, matrix)
    if not fix and plan.requirements and plan.requirements[0].options:
        opt = plan.requirements[0].options[0]
        if pin.located.conda is not None:  # a conda line: conda's command for the build, not pip's
            opt = as_conda_line(opt)
        fix = "\n".join([opt.title, *("$ " + s.shell if s.kind != "manual" else s.description for s in opt.steps)])
    source = failures[0].source or best.release.source
    if not result.build_named and len({c.cuda for c in result.requested}) > 1:
        reasons += " (PyPI's build)"
    return [(Severity.ERROR, rule, f"{best.label} cannot run: {reasons}", fix, source)]


def _without_extras(
    pin: Pin, best: Candidate, runtime: Runtime, matrix: Matrix, brought: Brought
) -> list[tuple[Severity, str, str, str, str]]:
    """A pin without the extras that bring CUDA and cuDNN as nvidia-* wheels (``onnxruntime-gpu==1.23.2``, not
    ``onnxruntime-gpu[cuda,cudnn]==1.23.2``) installs the plain form, which loads them from the system: an error
    where the target's CUDA or cuDNN is known and does not fit, a warning where the framework it reuses them from
    brings every wheel the extras would (ONNX Runtime beside torch); nothing where the environment names every
    such wheel on lines of its own (a lock file of the extras). (Plans name the extras themselves.)"""
    if pin.requirement.extras or best.cuda is None or pin.package != best.release.package:
        return []  # (an alias, jaxlib==0.5.3, has no such extras)
    plain = best.release.without_extras()
    forms = sorted(",".join(sorted(f)) for f in bundled_forms(best.release, matrix) if f)
    if not forms:
        return []
    if plain is None:
        return _cpu_build_only(pin, best, forms[0], runtime, brought)
    if not needs_system_cuda(plain, matrix) or best.cuda not in plain.cuda:
        return []
    failing = [c for c in evaluate(plain, best.cuda, runtime, matrix) if c.status is Status.FAIL]
    if not failing or any(c.component not in ("cuda", "cudnn") for c in failing):
        return []
    reasons = "; ".join(c.reason for c in failing)
    extras = forms[0]
    message = (
        f"{pin.requirement} without [{extras}] loads CUDA and cuDNN from the system, and this target cannot give "
        f"them: {reasons}"
    )
    fix = f"{_require_with(pin, extras)} (the extras bring them as nvidia-* wheels), or install them on the target"
    lender = _lender(pin, best, frozenset(extras.split(",")), matrix, brought)
    if lender is not None and not lender.package:
        return []  # every wheel the extras bring is on a line of its own: the extras, written out
    if lender is not None:
        module, _, source = _REUSES[pin.package]
        message += (
            f"; the nvidia-* wheels those extras would bring come with {lender.by} ({lender.where}), "
            f"and {pin.package} uses the ones {lender.package} has loaded"
        )
        fix = f"import {lender.package} before {module} in every process, or {fix}"
        return [(Severity.WARNING, "needs-extras", message, fix, source)]
    return [(Severity.ERROR, "needs-extras", message, fix, failing[0].source or best.release.source)]


# A framework that uses the CUDA and cuDNN libraries another one has loaded into the process: ONNX Runtime
# "will reuse the CUDA and cuDNN DLLs loaded by pytorch as long as CUDA and cuDNN major versions are compatible".
# (package: its import name, the package whose libraries it reuses, the page)
_REUSES = {"onnxruntime-gpu": ("onnxruntime", "torch", "https://github.com/microsoft/onnxruntime/pull/23674")}


def _lender(pin: Pin, best: Candidate, extras: frozenset[str], matrix: Matrix, brought: Brought) -> Wheel | None:
    """Where this plain pin gets the nvidia-* wheels its extras would bring, when the environment has every one
    of them at a version the extras accept: lines of their own (the returned wheel names no package), or those
    lines and the framework it reuses the libraries of (torch for ONNX Runtime: the wheel names it)."""
    _, lender, _ = _REUSES.get(pin.package, ("", "", ""))
    rows = pins_of_form(best.release, extras, pin.requirement.specifier, matrix)
    needed = pinned_specifiers(rows[0].requires) if rows else {}
    given = [brought.get(name) for name in needed]
    have = [g for g in given if g is not None]
    if not needed or len(have) < len(given) or any(g.package not in ("", lender) for g in have):
        return None
    if not all(specifiers_intersect(spec, g.spec) for g, spec in zip(have, needed.values())):
        return None
    return next((g for g in have if g.package), have[0])


def _cpu_build_only(
    pin: Pin, best: Candidate, extras: str, runtime: Runtime, brought: Brought
) -> list[tuple[Severity, str, str, str, str]]:
    """A pin without extras of a release whose plain install is its CPU build (``jax==0.5.3``: 'CPU-only: pip
    install -U jax'): a warning on a target with a GPU, which that build leaves unused. Not where the environment
    names the framework's CUDA plugin itself (a lock file of ``jax[cuda12]``)."""
    cpu = best.release.recipe(None)
    if cpu is None or cpu.extras or not runtime.gpus or any(is_cuda_plugin(pin.package, n) for n in brought):
        return []
    message = (
        f"{pin.requirement} without [{extras}] installs the CPU build of {pin.package}: the target's "
        f"{runtime.gpus[0].name} goes unused"
    )
    fix = f"{_require_with(pin, extras)} for the CUDA build, if the GPU is meant"
    return [(Severity.WARNING, "needs-extras", message, fix, best.release.source)]


def _no_runtime(pin: Pin, result: RequirementResult, named: set[str]) -> list[Fact]:
    """A pin without extras of a release that runs only with one (``jax==0.4.25``: before 0.4.30 jax brings
    jaxlib only through its extras, ``jax[cpu]`` included): pip installs the package alone and its import
    fails, on any machine. The project may bring the missing part itself (a ``jaxlib`` line, a conda ``jax``)."""
    loc = pin.located
    if pin.requirement.extras or loc.conda is not None or not result.candidates:
        return []
    releases = [c.release for c in result.candidates]
    if any(r.runs_without_extras for r in releases) or pin.package != releases[0].package:
        return []  # (an alias pin, jaxlib==0.4.25, is the missing part itself)
    best = result.best or result.candidates[0]
    row = best.release
    if any(alias in named for alias in row.aliases):
        return []
    cpu = row.recipe(None)
    assert cpu is not None  # (runs_without_extras is True without one)
    missing = row.aliases[0] if row.aliases else "the part that runs"
    message = (
        f"{pin.requirement} names no extra, and {row.package} {row.version} installs {missing} only through one "
        f"(its CPU build is {cpu.requirement}): pip installs {row.package} alone, and `import {row.package}` fails"
    )
    spec = pin.requirement.specifier
    gpu = row.recipe(best.cuda) if best.cuda is not None else None
    gpu = gpu or next((r for r in row.install if r.kind == "pip" and r.cuda and r.extras), None)
    fixes = []
    if gpu is not None:
        where = f" with --find-links {gpu.find_links}" if gpu.find_links else ""
        fixes.append(f"require {_bare(gpu.requirement)}{spec} for its CUDA {gpu.cuda} build{where}")
    fixes.append(f"{_bare(cpu.requirement)}{spec} for the CPU build")
    if row.aliases:
        fixes.append(f"or pin {row.aliases[0]} beside it")
    return [(Severity.ERROR, "no-runtime", message, ", ".join(fixes), row.source)]


def _bare(requirement: str) -> str:
    """A recipe's requirement without its version (``jax[cuda12]==0.4.30`` -> ``jax[cuda12]``)."""
    req = parse_requirement(requirement)
    extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
    return f"{req.name}{extras}"


def _require_with(pin: Pin, extras: str) -> str:
    return f"require {pin.package}[{extras}]{pin.requirement.specifier}"


def _caveats(pin: Pin, best: Candidate) -> list[tuple[Severity, str, str, str, str]]:
    """A pin the target runs, with the warnings the plan gives (a driver that runs its CUDA only through
    minor-version compatibility, kernels the driver compiles from PTX at first use, a cuDNN only some features
    need): one warning naming them. What the matrix itself does not state is no caveat of the target."""
    warns = [c for c in best.checks if c.status is Status.WARN and not c.gap and _concerns_pin(c, pin, best)]
    if not warns:
        return []
    reasons = "; ".join(f"{c.component}: {c.reason}" for c in warns)
    runs = "may not run" if any(c.doubt for c in warns) else "runs, with a caveat"  # (it may lack code for the GPU)
    return [(Severity.WARNING, "target-caveat", f"{best.label} {runs}: {reasons}", "", warns[0].source)]


def _one_release(pin: Pin) -> bool:
    """An exact pin; conda's ``name=2.1.2`` too, a fuzzy match on 2.1.2 (builds differ, the version does not)."""
    conda = pin.located.conda
    return _exact(pin.requirement.specifier) or (
        conda is not None and bool(conda.exact_version) and "*" not in conda.version
    )


def _exact(spec: SpecifierSet) -> bool:
    return any(s.operator in ("==", "===") and "*" not in s.version for s in spec)


def _plain(spec: SpecifierSet) -> SpecifierSet:
    return SpecifierSet(",".join(f"{s.operator}{s.version.split('+')[0]}" for s in spec))


def _concerns_pin(check: Check, pin: Pin, best: Candidate) -> bool:
    """A failed check the pin answers for. The "install" check is about the command a plan gives (its recipe
    pins an extra, tensorflow[and-cuda]); a pin that does not ask for that extra is not installed that way. The
    "extras" check (what a pin without extras installs) is said by check's own rules, which also read the lines
    beside the pin (``_no_runtime``, ``_without_extras``)."""
    if check.component == "extras":
        return False
    if check.component != "install":
        return True
    rec = best.release.recipe(best.cuda)
    return rec is not None and bool(rec.extras & extras_of(str(pin.requirement)))


def _unpinned(pin: Pin, result: RequirementResult) -> list[Fact]:
    if not any(r.is_gpu for r in [c.release for c in result.candidates]) and result.candidates:
        return []
    spec = pin.requirement.specifier
    if _one_release(pin):
        return []
    how = f"only a range ({spec})" if str(spec) else "no version"
    newest = result.best.release.version if result.best else None
    fix = f"pin an exact version, e.g. {pin.package}=={newest}" if newest else "pin an exact version"
    message = f"{pin.package} has {how}: which release, and which CUDA it needs, depends on the day it is installed"
    held = result.best.check("conda") if result.best else None
    if held is not None and held.status is Status.OK:  # conda's fallback below the newest (conda_builds)
        message += f"; here {held.reason}"
    return [(Severity.WARNING, "unpinned", message, fix, "")]
