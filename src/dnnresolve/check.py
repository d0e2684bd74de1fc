"""The `check` command's decisions: requirement files (already read) against a target and the matrix.

Pure: no I/O. Each file is one environment (a conda file's pip: list joins its conda packages). The
solver (``solve``) judges each pin against the runtime; a conda file's python, cudatoolkit / cuda-version
and cudnn stand in for the target's inside that environment. Packages the matrix does not know are
never passed silently: GPU-related ones get an info finding each, the rest are listed as not checked.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from typing import Any

from packaging.specifiers import SpecifierSet

from .artifact import Artifact, wheel_requirement
from .check_conda import (
    CONDA_CUDA,
    CONDA_CUDA_VARIANT,
    conda_build_fix,
    cuda_mix,
    feature_cuda,
    is_environment,
    select_build,
)
from .check_names import cuda_name_finding
from .check_pairs import (
    Brought,
    Pin,
    RunMemo,
    Solved,
    Wheel,
    cuda_agreement,
    environment_wheels,
    pair_findings,
    wheel_line_findings,
)
from .cuda_builds import is_cuda_plugin
from .findings import CheckedPin, CheckReport, Finding, Severity
from .matrix import Matrix
from .model import COMPANIONS, CudaInstall, CudnnInstall, Runtime, extras_of
from .plan import make_plan
from .solve import artifact_of, nearest_known, solve_requirement, under_its_own_name
from .solve.checks import bundled_forms, evaluate, needs_system_cuda
from .solve.conflicts import pinned_specifiers, pins_of_form, specifiers_intersect
from .solve.results import CANNOT_RUN, RUNS, RUNS_WARNED, Candidate, Check, RequirementResult, SolveResult, Status
from .sources.interface import IndexContext, LocatedRequirement, SourceFile
from .specs import Requirement, parse_requirement
from .versions import CudaVersion, CudnnVersion, PythonVersion, VersionError

# what an environment file names to set up the environment itself (its Python, CUDA, cuDNN, pip), not to install
_ENVIRONMENT = frozenset((*CONDA_CUDA, *CONDA_CUDA_VARIANT, "cudnn", "python", "pip"))
_GPU_NAME = re.compile(r"cuda|cudnn|gpu|nvidia|tensorrt|cupy|triton|(^|-)cu\d+")


class _Memo:
    """Answers that repeat across the lines and files of one run, worked out once each.

    A monorepo's files name the same few requirements again and again; each distinct requirement is
    solved once per environment, and each distinct pair compared once (``check_pairs``). Keys hold the
    full content of what decides an answer, as text (a requirement's, an environment's repr), never
    an object's identity: equal inputs share an answer, different ones never do.
    """

    def __init__(self, matrix: Matrix) -> None:
        self.matrix = matrix
        self.packages = frozenset(matrix.packages())
        self._conda_names: dict[str, str] | None = None
        self.artifacts: dict[tuple[str, tuple[str, ...], str], Artifact] = {}
        # each distinct pin's findings: what the target says of it (None where that depends on the wheels beside
        # it: then once per distinct set of them, in ``beside``), and the rest
        self.pin_facts: dict[tuple[object, ...], tuple[list[_Fact] | None, list[_Fact]]] = {}
        self.beside: dict[tuple[object, ...], list[_Fact]] = {}
        self.gpu_related: dict[str, bool] = {}
        self.slips: dict[str, str] = {}  # a name the matrix does not know -> "did you mean ...?" or ""
        self.run = RunMemo()

    @property
    def conda_names(self) -> dict[str, str]:
        """The matrix package each conda package name installs (``Matrix.conda_names``: its conda recipes)."""
        if self._conda_names is None:
            self._conda_names = self.matrix.conda_names()
        return self._conda_names


def check_sources(sources: Sequence[SourceFile], target: Runtime | None, matrix: Matrix) -> CheckReport:
    memo = _Memo(matrix)
    report = CheckReport(files=[s.path for s in sources])
    report.target = describe_target(target)
    if target is None:
        report.notes.append(
            "no target machine given (--target, --driver/--gpu/--python/--cuda, or [tool.dnnresolve]): "
            "only internal consistency was checked"
        )
    shared = copy.deepcopy(target) if target is not None else Runtime()  # for files that set nothing of their own
    shared_key = repr(shared)
    project_cuda: list[tuple[str, CudaVersion, LocatedRequirement]] = []
    # pins of a CUDA build, each with whether its release loads CUDA from the system rather than its wheels
    project_variants: list[tuple[Pin, bool]] = []
    unknown: dict[str, None] = {}
    checked: dict[str, None] = {}
    judged: list[tuple[Pin, Solved]] = []  # each framework line with its verdict, in file order
    named = {memo.run.name(r) for s in sources for r in s.requirements}  # what the project installs, in any file
    for source in sources:
        for s in source.skipped:
            report.findings.append(Finding(s.file, s.line, "", Severity.INFO, "skipped", f"{s.raw}: {s.reason}"))
        if source.container is not None:
            source.container.resolve(matrix, source)
        report.findings.extend(source.findings)
        runtime, env_cuda = _environment(source, target, shared)
        if source.container is not None:
            report.containers.append(_container_target(source, runtime))
        env = shared_key if runtime is shared else repr(runtime)
        project_cuda.extend(env_cuda)
        pins = []
        others: list[LocatedRequirement] = []
        for located in source.requirements:
            art = _artifact(located, runtime, memo, source.pip_index)
            if art is not None and art.skipped:  # not installed on this target
                report.findings.append(
                    Finding(located.file, located.line, "", Severity.INFO, "skipped", f"{located.raw}: {art.skipped}")
                )
                continue
            pin = _pin(located, source, matrix, memo, art)
            if pin is None:
                name = memo.run.name(located)
                if name not in _ENVIRONMENT and not (located.conda is not None and is_environment(name)):
                    others.append(located)
                continue
            checked.setdefault(pin.package, None)
            pins.append(pin)
        solved = [_solve(pin, env, runtime, matrix, memo) for pin in pins]
        brought = environment_wheels(pins, solved, source.requirements, memo.run)
        # (only what the target says of a pin it runs reads the wheels beside it)
        brought_key = _brought_key(brought) if target is not None else ()
        for located in others:  # an nvidia-* wheel a framework here pins is checked against those pins
            if not wheel_line_findings(report, located, pins, solved, memo.run):
                if cuda_name_finding(report, located, runtime, matrix):  # (nvidia-cudnn-cu12, cudatoolkit...)
                    checked.setdefault(memo.run.name(located), None)
                else:
                    _unknown(report, located, memo, unknown)
            else:
                checked.setdefault(memo.run.name(located), None)
        judged.extend(zip(pins, solved))
        for pin, verdict in zip(pins, solved):
            _pin_findings(report, pin, verdict, runtime, matrix, target is not None, memo, brought, brought_key, named)
            if pin.variant is not None and pin.variant_from:
                system_cuda = verdict.best is not None and needs_system_cuda(verdict.best.release, matrix)
                # a container loads its image's CUDA, not the target's (the solver judged it against the image)
                system_cuda = system_cuda and source.container is None
                project_variants.append((pin, system_cuda))
        pair_findings(report, pins, solved, matrix, memo.run)
        cuda_mix(report, pins, solved)
    cuda_agreement(report, project_cuda, project_variants, target)
    report.not_checked = sorted(unknown)
    report.checked = sorted(checked)
    report.pins = _checked_pins(report.findings, judged, target is not None)
    return report


_WORDS = {Severity.ERROR: CANNOT_RUN, Severity.WARNING: RUNS_WARNED}


def _checked_pins(
    findings: Sequence[Finding], judged: Sequence[tuple[Pin, Solved]], on_target: bool
) -> list[CheckedPin]:
    """Each framework line with the release it stands for and its worst finding (every rule counts: a pin the
    solver passes may still be one pip cannot install beside another); on a target, the verdict in plan's
    words. Lines no release of the matrix satisfies are left out: their note says so."""
    worst: dict[tuple[str, int, str], Severity] = {}
    for f in findings:
        key = (f.file, f.line, f.package)
        if f.severity is not Severity.INFO and worst.get(key) is not Severity.ERROR:
            worst[key] = f.severity
    out = []
    for pin, verdict in judged:
        if verdict.best is None:
            continue
        loc = pin.located
        severity = worst.get((loc.file, loc.line, pin.package))
        words = (_WORDS.get(severity, RUNS) if severity else RUNS) if on_target else None
        best = verdict.best
        build = f" for CUDA {best.cuda}" if best.cuda else ", CPU build"
        release = f"{best.release.package} {best.release.version}{build}"
        out.append(CheckedPin(loc.file, loc.line, pin.package, release, severity, words))
    return out


# ------------------------------------------------------------------ environments and pins


def _environment(
    source: SourceFile, target: Runtime | None, shared: Runtime
) -> tuple[Runtime, list[tuple[str, CudaVersion, LocatedRequirement]]]:
    if source.container is not None:  # a Dockerfile: its image, on the target's driver and GPUs
        return source.container.runtime(target), []
    if not any(r.conda is not None and r.conda.exact_version for r in source.requirements):
        return shared, []
    runtime = copy.deepcopy(target) if target is not None else Runtime()
    env_cuda = []
    for r in source.requirements:
        if r.conda is None:
            continue
        version = r.conda.exact_version
        if not version:
            continue
        try:
            if r.name == "python":
                runtime.python = PythonVersion.parse(version)
                runtime.sources["python"] = r.where
            elif r.name in CONDA_CUDA:
                cuda = CudaVersion.parse(version)
                runtime.cuda = [CudaInstall(cuda, "", r.where)]
                env_cuda.append((r.name, cuda, r))
            elif r.name in CONDA_CUDA_VARIANT:
                env_cuda.append((r.name, CudaVersion.parse(version), r))
            elif (feature := feature_cuda(r.name)) is not None:
                env_cuda.append((r.name, feature, r))
            elif r.name == "cudnn":
                runtime.cudnn = [CudnnInstall(CudnnVersion.parse(version), "", r.where, loads_first=True)]
        except VersionError:
            continue
    return runtime, env_cuda


def _artifact(
    located: LocatedRequirement, runtime: Runtime, memo: _Memo, pip_index: IndexContext | None = None
) -> Artifact | None:
    """What a pip line installs on this environment (``solve.artifact_of``, the file's index lines in force over
    ``pip_index``, pip's own configuration), once per distinct line, index and target; None for a conda line. A
    marker is read only where the Python is known (the target's or the environment's): without one, the file's own
    consistency is all that is checked."""
    req = located.requirement
    if req is None or located.conda is not None:
        return None
    index = pip_index.merged(located.index) if pip_index is not None and pip_index.urls else located.index
    key = (str(req), index.urls, repr((runtime.os, runtime.python, runtime.machine)))
    found = memo.artifacts.get(key)
    if found is None:
        known = runtime if runtime.python is not None or req.marker is None else None
        found = artifact_of(req if known is not None else _without_marker(req), runtime, memo.matrix, key[1])
        memo.artifacts[key] = found
    return found


def _without_marker(req: Requirement) -> Requirement:
    from .records import replace

    return replace(req, marker=None)


def _matrix_name(located: LocatedRequirement, memo: _Memo) -> str | None:
    """The matrix package a requirement names; a conda name maps through the rows' conda recipes."""
    name = memo.run.name(located)
    if name in memo.packages:
        return name
    if located.conda is None:
        return None
    return memo.conda_names.get(name)


def _pin(
    located: LocatedRequirement, source: SourceFile, matrix: Matrix, memo: _Memo, art: Artifact | None
) -> Pin | None:
    if located.constraint:
        return None
    package = _matrix_name(located, memo)
    if package is None:
        return None
    if located.requirement is not None:
        # a wheel URL is the release and build its file name says (torch==2.1.0+cu118), as pip installs it
        req = wheel_requirement(located.requirement) or located.requirement
    else:
        assert located.conda is not None
        spec = located.conda.specifier or SpecifierSet()
        req = parse_requirement(f"{package}{spec}")
    pin = Pin(located, req, package)
    if art is not None and art.build_named:  # a local tag, a post release or an index line names the build
        pin.variant, pin.cpu, pin.variant_from = art.cuda, art.cpu, art.build_from
    select_build(pin, source.requirements, matrix)
    return pin


def _solve(pin: Pin, env: str, runtime: Runtime, matrix: Matrix, memo: _Memo) -> Solved:
    """The solver's verdict on one pin, narrowed to the CUDA build the pin selects; once per distinct pin and
    environment (``env``: the runtime's repr)."""
    key = (str(pin.requirement), repr(pin.variant) if pin.variant else "", pin.cpu, env)
    found = memo.run.solved.get(key)
    if found is None:
        result = solve_requirement(pin.requirement, runtime, matrix)
        if pin.variant is not None:
            variant = pin.variant  # a whole major (jaxlib's +cuda12.cudnn89) takes any build of it
            result.candidates = [c for c in result.candidates if c.cuda is not None and variant.names_build(c.cuda)]
        elif pin.cpu:
            result.candidates = [c for c in result.candidates if c.cuda is None]
        result.build_named = result.build_named or pin.variant is not None or pin.cpu
        found = memo.run.add(key, result, matrix)
    return found


# ------------------------------------------------------------------ per requirement


_Fact = tuple[Severity, str, str, str, str]  # severity, rule, message, fix, source of one finding on a pin


def _brought_key(brought: Brought) -> tuple[tuple[str, ...], ...]:
    return tuple((name, str(w.spec), w.by, w.where, w.package) for name, w in brought.items())


def _pin_findings(
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
) -> list[_Fact] | None:
    """What is wrong with one pin on the target; None where the target runs it and the answer depends on the
    wheels beside it (``_without_extras``, ``_caveats``)."""
    if not result.candidates:
        if pin.variant is not None and matrix.find(pin.package, _plain(pin.requirement.specifier)):
            message = f"{pin.requirement}: the matrix has no CUDA {pin.variant} build of it ({pin.variant_from})"
            fix = "use a CUDA index this release was built for"
            if pin.located.conda is not None:
                rows = matrix.find(pin.package, _plain(pin.requirement.specifier))
                builds = ", ".join(str(b) for b in sorted({c for row in rows for c in row.cuda}))
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
    if not fix and plan.requirements and plan.requirements[0].options:
        opt = plan.requirements[0].options[0]
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


def _no_runtime(pin: Pin, result: RequirementResult, named: set[str]) -> list[_Fact]:
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
    return [(Severity.WARNING, "target-caveat", f"{best.label} runs, with a caveat: {reasons}", "", warns[0].source)]


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


def _unpinned(pin: Pin, result: RequirementResult) -> list[_Fact]:
    if not any(r.is_gpu for r in [c.release for c in result.candidates]) and result.candidates:
        return []
    spec = pin.requirement.specifier
    if _one_release(pin):
        return []
    how = f"only a range ({spec})" if str(spec) else "no version"
    newest = result.best.release.version if result.best else None
    fix = f"pin an exact version, e.g. {pin.package}=={newest}" if newest else "pin an exact version"
    message = f"{pin.package} has {how}: which release, and which CUDA it needs, depends on the day it is installed"
    return [(Severity.WARNING, "unpinned", message, fix, "")]


def _unknown(report: CheckReport, located: LocatedRequirement, memo: _Memo, unknown: dict[str, None]) -> None:
    """A package the matrix does not know: a note where it is GPU-related or a slip for one it knows
    (``tensorfow-gpu``), else a name in the summary's "not checked"."""
    name = memo.run.name(located)
    related = memo.gpu_related.get(name)
    if related is None:
        from .suggest import did_you_mean, package_suggestions

        memo.slips[name] = did_you_mean(package_suggestions(name, memo.packages))
        related = bool(_GPU_NAME.search(name)) or name in COMPANIONS
        memo.gpu_related[name] = related
    slip = memo.slips[name]
    if related or slip:
        what = "GPU-related but not in the compatibility matrix" if related else "not in the compatibility matrix"
        report.findings.append(
            Finding(
                located.file,
                located.line,
                name,
                Severity.INFO,
                "not-checked",
                f"{name} is {what}: not checked" + (f"; {slip}" if slip else ""),
            )
        )
    else:
        unknown.setdefault(name, None)


def _container_target(source: SourceFile, runtime: Runtime) -> dict[str, Any]:
    """What `check` judged a Dockerfile's lines against: its image's OS, CUDA, cuDNN and Python, each with the
    line that set it, on the target's driver and GPUs."""
    assert source.container is not None
    described = describe_target(runtime)
    if source.container.os:
        described["os"] = source.container.os
    return {"file": source.path, "image": source.container.image, **described}


def describe_target(target: Runtime | None) -> dict[str, Any]:
    """Each fact of the target alone, and where it came from under ``sources`` (profile.machine_json)."""
    from .profile import machine_json

    return {} if target is None else machine_json(target)
