"""The solver: each candidate release checked against a runtime. A pure function of its inputs, no I/O.

For every requirement it finds the matrix rows that satisfy it, and for each row and CUDA variant it
checks Python, operating system, driver, GPU architecture, system CUDA and system cuDNN. Every
verdict carries its reason and the source of the matrix row that states the fact.

This module reads requirements (which rows, which builds); ``results`` holds what it answers, ``checks`` and
``gpu`` judge one build on a machine, ``conflicts`` judges releases installed together.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from ..artifact import Artifact, Target, index_build, may_exist, read, split_local, with_index
from ..machine import Runtime
from ..matrix import Matrix
from ..model import FrameworkRelease
from ..pkgname import canonicalize_name
from ..specs import InvalidRequirement, Requirement, exact_version, parse_requirement
from ..versions import CudaVersion
from .checks import evaluate, needs_system_cuda
from .conflicts import find_conflicts
from .installed import installed_build
from .results import Candidate as Candidate  # (plan_conda imports it and RequirementResult from here)
from .results import Check, SolveResult, Status
from .results import RequirementResult as RequirementResult


def solve(
    requirements: Sequence[Requirement], runtime: Runtime, matrix: Matrix, index_urls: tuple[str, ...] = ()
) -> SolveResult:
    """Each requirement solved; ``index_urls``: the indexes pip is configured with, which may choose the build."""
    results = [
        solve_requirement(req, runtime, matrix, artifact_of(req, runtime, matrix, index_urls) if index_urls else None)
        for req in requirements
    ]
    return SolveResult(results, conflicts=find_conflicts(results, matrix))


def solve_requirement(
    req: Requirement, runtime: Runtime, matrix: Matrix, art: Artifact | None = None, *, from_pypi: bool = True
) -> RequirementResult:
    """The candidates of one requirement, each variant checked against the runtime. ``art``: what the requirement
    installs (``artifact.read``; its index context included), worked out here when not given."""
    name = canonicalize_name(req.name)
    installed = next((p for p in runtime.packages if canonicalize_name(p.name) == name), None)
    if not matrix.knows(name):
        return RequirementResult(req, name, known=False, installed=installed)
    if art is None:
        art = artifact_of(req, runtime, matrix)
    spec, variant = art.specifier, art.cuda
    release = art.release
    if art.build_from.startswith("post") and release is not None and not matrix.find(name, spec):
        spec = SpecifierSet(f"=={release.base_version}")  # a row of 2.3.2 holds its builds 2.3.2.post112, ...
    rows = [r for r in matrix.find(name, spec) if runtime.os in r.os] or matrix.find(name, spec)
    if from_pypi and release is not None and exact_version(spec) is not None:  # (a conda build is not PyPI's)
        rows = [r for r in rows if r.version == release or may_exist(r, release)]
    if not from_pypi:  # a conda line installs the conda package, whose GPU code its own recipe may state
        rows = [r.as_conda() for r in rows]
    if release is not None:  # the row covering the release pip picks answers for that release, not its own
        base = Version(release.base_version)
        rows = [r.for_version(release) if r.matches(release) or r.matches(base) else r for r in rows]
        if exact_version(spec) is not None:
            rows = [r for r in rows if r.version == release] or rows
    if req.extras:  # the extras choose the form: jax[cuda12_local] loads the system's CUDA, jax[cuda12] brings it
        rows = [r.with_extras(req.extras) for r in rows]
    result = RequirementResult(req, name, known=True, installed=installed, build_named=art.build_named)
    if installed is not None and installed.by_conda and runtime.conda_prefix:
        result.conda_cuda = runtime.conda_cuda
    if art.cpu:
        variant = None
    # what is installed already is what runs (doctor reads its build); otherwise the form the requirement is in
    as_written = not req.extras and not (installed is not None and _has(spec, installed.version.split("+")[0]))
    for row in rows:
        variants: Iterable[CudaVersion | None] = row.cuda or [None]
        if art.cpu and row.recipe(None) is not None:  # a CPU build named (``+cpu``): the row's CPU recipe is it
            variants = [None]
        for cuda in variants:
            if variant is not None and (cuda is None or not variant.names_build(cuda)):
                continue
            if art.cpu and cuda is not None:
                continue
            checks = evaluate(row, cuda, runtime, matrix)
            form = _check_form(req, row, cuda, runtime, matrix) if as_written and row.package == name else None
            result.candidates.append(Candidate(row, cuda, checks + ([form] if form is not None else [])))
    if installed is not None:
        result.installed_build = installed_build(installed, runtime, matrix, result.conda_cuda)
    if result.conda_cuda is not None:
        own = [result.installed_build] if result.installed_build is not None else []
        _judge_by_environment_cuda([*result.candidates, *own], result.conda_cuda, runtime)
    return result


def _judge_by_environment_cuda(candidates: Sequence[Candidate], env: CudaVersion, runtime: Runtime) -> None:
    """A framework conda installed into an environment held to one CUDA (``env``) loads that CUDA, the environment's
    own libraries (conda's builds find its lib/ first), not the system toolkit: a build the environment's CUDA takes
    (``conda_cuda.takes``) is judged against it."""
    from ..conda_cuda import pins_series, takes

    own = next((c for c in runtime.cuda if runtime.conda_prefix and c.path == runtime.conda_prefix), None)
    have = own.version if own is not None else env
    where = f"conda's CUDA {have} of environment {runtime.conda_env or runtime.conda_prefix}"
    for cand in candidates:
        if cand.cuda is None:
            continue
        recipe = cand.release.recipe(cand.cuda, kind="conda")
        if not takes(cand.cuda, env, pinned=recipe is not None and pins_series(recipe)):
            continue
        for i, check in enumerate(cand.checks):
            if check.component == "cuda" and check.status is not Status.OK:
                reason = f"{where} serves a {cand.cuda} build (conda installed it there)"
                cand.checks[i] = Check("cuda", Status.OK, reason, check.needed, str(have), check.source)


def _check_form(
    req: Requirement, row: FrameworkRelease, cuda: CudaVersion | None, runtime: Runtime, matrix: Matrix
) -> Check | None:
    """What a requirement without extras installs of a release whose CUDA build comes with one: nothing that
    imports (jax before 0.4.30 brings jaxlib only through an extra), its CPU build (jax from 0.4.30: the GPU goes
    unused), or a form that loads CUDA and cuDNN from the system (onnxruntime-gpu without [cuda,cudnn]) where
    the system cannot give them. Component "extras": the pip step a plan gives names the extra."""
    rec = row.recipe(cuda)
    if cuda is None or rec is None or not rec.extras:
        return None
    form = f"{row.package}[{','.join(sorted(parse_requirement(rec.requirement).extras))}]"  # as the step spells them
    said = f"{req} names no extra"
    if not row.runs_without_extras:
        missing = row.aliases[0] if row.aliases else "the part that runs"
        reason = (
            f"{said}: {row.package} {row.version} brings {missing} only through one, so pip installs "
            f"{row.package} alone and `import {row.package}` fails"
        )
        return Check("extras", Status.FAIL, reason, form, str(req), row.source)
    plain = row.without_extras()
    if plain is None:
        cpu = row.recipe(None)
        if cpu is None or cpu.extras or not runtime.gpus:
            return None
        reason = f"{said}: pip installs the CPU build of {row.package}, and the {runtime.gpus[0].name} goes unused"
        return Check("extras", Status.WARN, reason, form, str(req), row.source)
    if needs_system_cuda(row, matrix) or not needs_system_cuda(plain, matrix) or cuda not in plain.cuda:
        return None  # (a row that loads the system's libraries in every form has those checks already)
    failing = [c for c in evaluate(plain, cuda, runtime, matrix) if c.status is Status.FAIL]
    if not failing or any(c.component not in ("cuda", "cudnn") for c in failing):
        return None
    reason = (
        f"{said}: it loads CUDA and cuDNN from the system, which cannot give them here "
        f"({'; '.join(c.reason for c in failing)}); {form} brings them as nvidia-* wheels"
    )
    return Check("extras", Status.FAIL, reason, form, str(req), failing[0].source)


def _has(spec: SpecifierSet, version: str) -> bool:
    try:
        return spec.contains(Version(version), prereleases=True)
    except InvalidVersion:
        return False


def under_its_own_name(req: Requirement, matrix: Matrix) -> tuple[str, Version, FrameworkRelease] | None:
    """For a requirement no row satisfies under the name it uses, when that name is an alias the framework no
    longer publishes under (tensorflow-gpu stops at 2.11.0, tensorflow goes on): the framework's own name, the
    newest release the matrix has under the alias, and the newest row of the framework that satisfies it."""
    name = canonicalize_name(req.name)
    rows = matrix.releases(name)
    owners = sorted({row.package for row in rows if row.package != name})
    if not owners:
        return None
    spec, _ = _split_local(req.specifier)
    for owner in owners:
        found = matrix.find(owner, spec)
        if found:
            return owner, max(row.version for row in rows), max(found, key=lambda row: row.version)
    return None


def unpublished(req: Requirement, matrix: Matrix) -> str:
    """An exact pin of a release a row covers but PyPI never published: say so, and name the published releases
    around it ("" where that is not why nothing answers)."""
    from ..artifact import published, recorded_on

    pinned = exact_version(req.specifier)
    name = canonicalize_name(req.name)
    known = published(name)
    if pinned is None or known is None:
        return ""
    version = Version(pinned.split("+")[0])
    if not any(
        row.matches(version) and not may_exist(row, version) for row in matrix.releases(canonicalize_name(req.name))
    ):
        return ""
    finals = sorted(v for v, kinds in known.items() if kinds and not v.is_prerelease)
    below = [f"{v} below" for v in finals if v < version][-1:]
    above = [f"{v} above" for v in finals if v > version][:1]
    near = " and ".join(below + above)
    return (
        f"PyPI has no release {name} {version} (its releases as recorded on {recorded_on()}), so pip finds nothing "
        "to install" + (f"; the nearest published are {near}" if near else "")
    )


def nearest_known(req: Requirement, matrix: Matrix, os_name: str | None = None) -> str:
    """For ``pkg==X`` that no row holds: the releases the matrix knows just below and just above X, worded
    ("3.2.1 below it and 3.3.0 above it"); "" when the requirement is not one release or the package has none."""
    spec, _ = _split_local(req.specifier)
    wanted = _exact_version(spec)
    if wanted is None:
        return ""
    versions = sorted({row.version for row in matrix.releases(req.name, os_name)})
    below = [v for v in versions if v < wanted]
    above = [v for v in versions if v > wanted]
    parts = ([f"{below[-1]} below it"] if below else []) + ([f"{above[0]} above it"] if above else [])
    return " and ".join(parts)


def _exact_version(spec: SpecifierSet) -> Version | None:
    """The one release ``==X`` names (no wildcard), else None."""
    text = exact_version(spec)
    try:
        return Version(text) if text is not None else None
    except InvalidVersion:
        return None


def artifact_of(req: Requirement, runtime: Runtime, matrix: Matrix, index_urls: tuple[str, ...] = ()) -> Artifact:
    """What ``req`` installs on the runtime (``artifact.read``), with the builds the matrix's recipes name: each post
    release's CUDA (Paddle's ``.post116``) and the CUDA of each index URL a recipe gives."""
    name = canonicalize_name(req.name)
    target = Target(runtime.os, runtime.python, runtime.machine, index_urls)
    art = read(req, target, lambda: post_builds(matrix, name))
    if index_urls and art.checkable and not art.build_named:
        art = with_index(art, *index_build(index_urls, served_indexes(matrix, name)))
    return art


def post_builds(matrix: Matrix, package: str) -> dict[int, CudaVersion]:
    """The CUDA build each post number of the package's recipes names (Paddle's ``.post116`` -> 11.6, ``.post97`` ->
    9.0): the same on every release that has it."""
    out: dict[int, CudaVersion] = {}
    for row in matrix.releases(package):
        for rec in row.install:
            if rec.kind != "pip" or not rec.cuda or ".post" not in rec.requirement:
                continue
            text = exact_version(_specifier_of(rec.requirement))
            try:
                pinned = Version(text) if text else None
            except InvalidVersion:
                continue
            if pinned is not None and pinned.post is not None and not pinned.local:
                out.setdefault(pinned.post, CudaVersion.parse(rec.cuda))
    return out


def served_indexes(matrix: Matrix, package: str) -> dict[str, tuple[CudaVersion | None, str]]:
    """Each index URL a recipe of the package gives for one build only, with that build (None: a CPU index). An index
    named for builds of several CUDA versions is a mirror of PyPI (mirror.baidu.com for Paddle): it serves PyPI's
    default build and selects none."""
    builds: dict[str, tuple[set[str], str]] = {}
    for row in matrix.releases(package):
        for rec in row.install:
            if rec.kind == "pip" and rec.index_url:
                builds.setdefault(rec.index_url.rstrip("/"), (set(), rec.index_url))[0].add(rec.cuda)
    return {
        url: (CudaVersion.parse(next(iter(cudas))) if next(iter(cudas)) else None, named)
        for url, (cudas, named) in builds.items()
        if len(cudas) == 1
    }


def _specifier_of(requirement: str) -> SpecifierSet:
    try:
        return parse_requirement(requirement).specifier
    except InvalidRequirement:
        return SpecifierSet()


def _split_local(spec: SpecifierSet) -> tuple[SpecifierSet, CudaVersion | None]:
    """``==2.1.0+cu118`` -> (``==2.1.0``, CUDA 11.8): the local label picks a variant."""
    plain, cuda, _, _ = split_local(spec)
    return plain, cuda
