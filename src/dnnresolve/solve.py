"""The solver: each candidate release checked against a runtime. A pure function of its inputs, no I/O.

For every requirement it finds the matrix rows that satisfy it, and for each row and CUDA variant it
checks Python, operating system, driver, GPU architecture, system CUDA and system cuDNN. Every
verdict carries its reason and the source of the matrix row that states the fact.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Iterable, Sequence

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from .artifact import Artifact, Target, index_build, read, split_local, unresolvable, with_index
from .compat import (
    DEPENDS,
    FULL,
    MINOR_VERSION_COMPAT,
    UNKNOWN,
    CudnnRule,
    binary_runs_on,
    cudnn_compatible,
    cudnn_rule_text,
)
from .matrix import Matrix
from .model import CudnnInstall, FrameworkRelease, InstalledPackage, Runtime, WheelPins
from .pkgname import canonicalize_name
from .records import field, record
from .specs import InvalidRequirement, Requirement, exact_version, parse_requirement
from .versions import ComputeCapability, CudaVersion, CudnnVersion

# Frameworks whose early releases compare cuDNN like TensorFlow did, when a row names no rule.
_DEFAULT_RULES = {"torch": CudnnRule.TORCH, "jax": CudnnRule.AT_LEAST, "jaxlib": CudnnRule.AT_LEAST}


class Status(str, enum.Enum):
    OK = "ok"
    FAIL = "fail"
    WARN = "warn"
    UNKNOWN = "unknown"


@record(frozen=True)
class Check:
    """One verdict: a component of the runtime against what the release needs."""

    component: str  # python, os, driver, compute_capability, cuda, cudnn
    status: Status
    reason: str
    needed: str = ""
    found: str = ""
    source: str = ""
    gap: bool = False  # a warning about what the matrix does not state, not about the machine


@record
class Candidate:
    """A matrix row with one CUDA variant (None: a CPU build), and its checks."""

    release: FrameworkRelease
    cuda: CudaVersion | None
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.status is not Status.FAIL for c in self.checks)

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if c.status is Status.FAIL]

    def check(self, component: str) -> Check | None:
        for c in self.checks:
            if c.component == component:
                return c
        return None

    @property
    def label(self) -> str:
        cuda = f" (CUDA {self.cuda})" if self.cuda else " (CPU build)"
        return f"{self.release.package} {self.release.version}{cuda}"


RUNS, RUNS_WARNED, CANNOT_RUN = "runs", "runs, with a warning", "cannot run"


def verdict(c: Candidate, asked: frozenset[str] = frozenset()) -> str:
    """The answer every command gives for a build on a machine (plan, check, doctor, explain): a failed check
    stops it; a warning about the machine (not about what the matrix leaves unsaid) qualifies it. The
    "install" check is about the command a plan gives (an extra that pins a wheel with no build for this
    Python): it counts for a requirement that asks for that extra (``asked``, normalized) only."""
    rec = c.release.recipe(c.cuda)
    checks = [k for k in c.checks if k.component != "install" or (rec is not None and rec.extras & asked)]
    if any(k.status is Status.FAIL for k in checks):
        return CANNOT_RUN
    if any(k.status is Status.WARN and not k.gap for k in checks):
        return RUNS_WARNED
    return RUNS


@record
class RequirementResult:
    requirement: Requirement
    package: str
    known: bool
    candidates: list[Candidate] = field(default_factory=list)
    installed: InstalledPackage | None = None
    build_named: bool = False  # a local tag, a post release or an index picked the build (candidates hold only it)
    conda_cuda: CudaVersion | None = None  # conda installed the package, in an environment held to this CUDA

    @property
    def requested(self) -> list[Candidate]:
        """Candidates of the newest matching release (what pip would pick), all variants."""
        if not self.candidates:
            return []
        newest = max(c.release.version for c in self.candidates)
        return [c for c in self.candidates if c.release.version == newest]

    @property
    def installs(self) -> list[Candidate]:
        """The builds of the requested release that the requirement installs as written: the one it names, else
        the plain PyPI wheel's (``onnxruntime-gpu==1.17.0`` is its CUDA 11.8 build; the CUDA 12 one is a
        download), else any the matrix lists (a release whose default build it does not state)."""
        cands = self.requested
        if self.build_named:
            return cands
        if self.conda_cuda is not None:  # conda installs the build of the environment's CUDA, where there is one
            held = [c for c in cands if c.cuda is not None and c.cuda.series == self.conda_cuda and _has_conda(c)]
            if held:
                return held
        return [c for c in cands if _is_pypi_build(c.release, c.cuda)] or cands

    @property
    def best(self) -> Candidate | None:
        """The candidate the requirement installs that fails least; the other builds are alternatives a plan
        may offer (``plan._other_variants``), never what the requirement is judged by."""
        cands = self.installs
        if not cands:
            return None
        return min(cands, key=lambda c: (len(c.failures), _preference(c.release, c.cuda)))

    @property
    def verdict(self) -> str | None:
        """``verdict`` of the build the requirement installs; None when the matrix has none."""
        best = self.best
        return verdict(best, frozenset(canonicalize_name(e) for e in self.requirement.extras)) if best else None

    @property
    def satisfied(self) -> bool:
        """The machine runs the requested release as it is, and a matching version is installed."""
        best = self.best
        if best is None or not best.ok or self.installed is None:
            return False
        spec, _, _, _ = split_local(self.requirement.specifier)
        try:
            if not spec.contains(Version(self.installed.version.split("+")[0]), prereleases=True):
                return False
        except InvalidVersion:
            return False
        return self.installed_build_runs

    @property
    def installed_build_runs(self) -> bool:
        """Whether the build installed, as its local tag names it (``+cpu``, ``+cu118``), is one of the release's
        builds that run here where the plan needs a CUDA build, and the CPU build where it needs that: pip counts
        2.1.0+cpu as 2.1.0 and keeps it, so the tag decides. An untagged version is the index's default build."""
        best = self.best
        if self.installed is None or best is None:
            return False
        tag = self.installed.build_tag()
        if tag.kind == "cpu":
            return best.cuda is None
        if tag.is_cuda and tag.cuda is not None:
            built = tag.cuda
            return any(c.ok for c in self.requested if c.cuda is not None and built.names_build(c.cuda))
        return tag.kind in ("", "other")


@record
class SolveResult:
    results: list[RequirementResult]
    conflicts: list[str] = field(default_factory=list)

    @property
    def satisfied(self) -> bool:
        return all(r.satisfied for r in self.results) and not self.conflicts


def _has_conda(c: Candidate) -> bool:
    return c.release.recipe(c.cuda, kind="conda") is not None


def _preference(row: FrameworkRelease, cuda: CudaVersion | None) -> tuple[bool, int]:
    """How a variant ranks among its release's: the default build (the plain PyPI wheel's CUDA) first, then
    the newest CUDA major; within a major the matrix's order stands (``sorted``/``min`` keep it)."""
    d = row.cuda_default
    is_default = d is not None and cuda is not None and d.series == cuda.series
    return not is_default, -(cuda.major if cuda else 0)


def _is_pypi_build(row: FrameworkRelease, cuda: CudaVersion | None) -> bool:
    """Whether ``pip install package==version`` from PyPI gets this build: the release's default CUDA."""
    d = row.cuda_default
    return row.on_pypi and d is not None and cuda is not None and d.series == cuda.series


def preferred_variants(row: FrameworkRelease) -> list[CudaVersion | None]:
    """The release's CUDA variants in the order a plan offers them (``None``: a release without CUDA builds)."""
    if not row.cuda:
        return [None]
    return sorted(row.cuda, key=lambda cuda: _preference(row, cuda))


def needs_system_cuda(release: FrameworkRelease, matrix: Matrix | None = None) -> bool:
    """Whether the release loads CUDA (and cuDNN, unless it bundles that) from the system (modules, toolkits)
    rather than its wheels.

    A release whose pip install pins nvidia-* wheels (tensorflow[and-cuda], jax[cuda12]) brings its own; one that
    bundles cuDNN brings both, unless the matrix says it still loads CUDA from the system (MXNet before 1.8). A
    requirement that chose another form by its extras (``jax[cuda12_local]``) loads the system's.
    """
    if not release.is_gpu:
        return False
    if release.cudnn_rule is CudnnRule.BUNDLED:
        return release.system_cuda
    forms = bundled_forms(release, matrix) if matrix is not None else set()
    if release.form is not None:
        return release.form not in forms
    return not forms


def bundled_forms(release: FrameworkRelease, matrix: Matrix) -> set[frozenset[str]]:
    """The extras (none: the plain requirement) whose install brings the CUDA libraries as nvidia-* wheels, as
    far as the matrix's pins know."""
    return {pins.extras for pins in matrix.wheel_pins_covered(release.names, release.covers) if pins.requires}


def cudnn_rule_for(release: FrameworkRelease) -> CudnnRule:
    if release.cudnn_rule is not None:
        return release.cudnn_rule
    return _DEFAULT_RULES.get(release.package, CudnnRule.EXACT_SERIES)


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
    req: Requirement, runtime: Runtime, matrix: Matrix, art: Artifact | None = None
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
    return result


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


def evaluate(row: FrameworkRelease, cuda: CudaVersion | None, runtime: Runtime, matrix: Matrix) -> list[Check]:
    """Every check of one release variant against the runtime."""
    checks = [_check_os(row, runtime), _check_python(row, runtime)]
    recipe = _check_recipe(row, cuda, runtime)
    if recipe is not None:
        checks.append(recipe)
    if cuda is None:
        return checks
    platform = _check_platform(row, runtime)
    if platform is not None:
        checks.append(platform)
    checks.append(_check_driver(row, cuda, runtime, matrix))
    if matrix.cuda_name(row.package) is None:  # (an nvidia-* wheel, cudatoolkit: no GPU code requirement of its own)
        checks.append(_check_gpu(row, cuda, runtime, matrix))
    if needs_system_cuda(row, matrix):
        checks.append(_check_system_cuda(row, cuda, runtime))
        if row.cudnn_for(cuda) and row.cudnn_rule is not CudnnRule.BUNDLED:
            checks.append(_check_system_cudnn(row, cuda, runtime))
    return checks


def _check_os(row: FrameworkRelease, runtime: Runtime) -> Check:
    if runtime.os in row.os:
        return Check("os", Status.OK, f"built for {runtime.os}", ", ".join(row.os), runtime.os, row.source)
    # the matrix's word: a build it does not list may still exist (torch 2.15.0's Windows variants are unread)
    return Check("os", Status.FAIL, f"no {runtime.os} build in the matrix", ", ".join(row.os), runtime.os, row.source)


JETSON_BUILDS = "https://forums.developer.nvidia.com/t/pytorch-for-jetson/72048"


def _check_platform(row: FrameworkRelease, runtime: Runtime) -> Check | None:
    """A GPU build on a machine that is not an x86_64 desktop or server (said only when it is not).

    The matrix's rows describe the builds each project publishes for x86_64 (and the index URLs of those):
    a Jetson board runs the JetPack builds NVIDIA makes for it (per JetPack release, aarch64), and an
    aarch64 server needs the project's aarch64 CUDA wheels, which the matrix does not list."""
    if runtime.system == "jetson":
        return Check(
            "platform",
            Status.FAIL,
            "a Jetson board: these are the desktop and server builds; JetPack needs the builds NVIDIA publishes "
            f"for its JetPack release (for PyTorch: {JETSON_BUILDS})",
            "x86_64 build",
            "Jetson (aarch64, JetPack)",
            JETSON_BUILDS,
        )
    machine = runtime.machine.lower()
    if machine and machine not in ("x86_64", "amd64"):
        return Check(
            "platform",
            Status.WARN,
            f"the matrix does not say whether this release has CUDA builds for {runtime.machine}",
            "x86_64 build",
            runtime.machine,
            row.source,
        )
    return None


def _check_recipe(row: FrameworkRelease, cuda: CudaVersion | None, runtime: Runtime) -> Check | None:
    """The install step of this build names the Pythons it works on (TF 2.14's and-cuda extra pins a tensorrt with
    no 3.11 wheel) and this one is not among them, though the release itself has wheels for it. Component
    "install": it concerns the command a plan gives, not the release (``check`` keeps it for a pin that asks
    for that extra)."""
    rec = row.recipe(cuda)
    broken = unresolvable(rec.requirement) if rec is not None and rec.kind == "pip" else ""
    if rec is not None and broken:
        return Check("install", Status.FAIL, f"pip cannot install {rec.requirement}: {broken}", "", "", row.source)
    if rec is None or not rec.python or runtime.python is None:
        return None
    have = runtime.python.series
    if str(have) in rec.python or not any(p.series == have for p in row.python):
        return None
    only = ", ".join(rec.python)
    why = f": {rec.note}" if rec.note else ""
    reason = f"{rec.requirement} installs only on Python {only}{why}"
    return Check("install", Status.FAIL, reason, f"Python {only}", str(have), row.source)


def _check_python(row: FrameworkRelease, runtime: Runtime) -> Check:
    needed = ", ".join(str(p) for p in row.python)
    if runtime.python is None:
        return Check("python", Status.UNKNOWN, "Python version not known", needed, "", row.source)
    have = runtime.python.series
    if not row.python:  # (a [[cuda_name]] release: py3-none wheels, or a conda package of any Python)
        return Check("python", Status.OK, f"not tied to a Python version; {have} is fine", "any", str(have), row.source)
    if any(p.series == have for p in row.python):
        return Check("python", Status.OK, f"wheels exist for Python {have}", needed, str(have), row.source)
    if row.wheels_any_python:
        reason = (
            f"Python {have} is not among those this release states it supports ({needed}); its wheels are tagged "
            "for any CPython (py2.py3), so pip installs it there, untested"
        )
        return Check("python", Status.WARN, reason, needed, str(have), row.source)
    return Check("python", Status.FAIL, f"no wheels for Python {have} (only {needed})", needed, str(have), row.source)


def _check_driver(row: FrameworkRelease, cuda: CudaVersion, runtime: Runtime, matrix: Matrix) -> Check:
    table = matrix.driver_table(runtime.os)
    required = table.min_driver_for(cuda)
    cuda_row = matrix.cuda_release(cuda)
    source = cuda_row.source if cuda_row else row.source
    needed = f">= {required}" if required else ""
    if runtime.driver is None:
        return Check("driver", Status.UNKNOWN, "NVIDIA driver not known", needed, "", source)
    verdict = table.check(runtime.driver, cuda)
    found = runtime.driver.shown
    if verdict.how == FULL:
        return Check("driver", Status.OK, f"driver {found} runs CUDA {cuda}", needed, found, source)
    if verdict.how in (MINOR_VERSION_COMPAT, DEPENDS):  # a branch whose patch level decides: never a failure
        return Check("driver", Status.WARN, verdict.note, needed, found, source)
    if verdict.how == UNKNOWN:
        return Check("driver", Status.UNKNOWN, verdict.note, needed, found, source)
    reason = f"CUDA {cuda} needs driver {needed}; found {found}"
    family = table.family_min_driver(cuda.major)
    if family is not None:
        compat = f"CUDA {cuda.major}.x minor-version compatibility"
        reason += f" (a driver >= {family} runs it, with limits, through {compat})"
    return Check("driver", Status.FAIL, reason, needed, found, source)


# cudaErrorUnsupportedPtxVersion: "the PTX was generated by a compiler newer than what is supported by the CUDA
# driver and PTX JIT compiler" -- what a driver that runs a newer toolkit only through minor-version
# compatibility meets when it must compile that toolkit's PTX.
PTX_TOO_NEW_SOURCE = "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html"


def _check_gpu(row: FrameworkRelease, cuda: CudaVersion, runtime: Runtime, matrix: Matrix) -> Check:
    ccs = runtime.compute_capabilities
    if not ccs:
        return Check("compute_capability", Status.UNKNOWN, "GPU not known", "", "", row.source)
    cc = min(ccs)
    found = str(cc)
    sm, exact, ptx = _variant_code(row, cuda)
    if sm or exact or ptx:
        sass = ", ".join([*(s.sm for s in sm), *(f"{e.sm}a" for e in exact)])
        ptx_text = "PTX " + ", ".join(p.compute for p in ptx) if ptx else ""
        needed = " + ".join(text for text in (sass, ptx_text) if text)
        if binary_runs_on(cc, sm, exact=exact):
            return Check("compute_capability", Status.OK, f"wheels carry code for {cc.sm}", needed, found, row.source)
        if binary_runs_on(cc, (), ptx):
            code = max(p for p in ptx if p <= cc).compute
            table = matrix.driver_table(runtime.os)
            hows = table.check(runtime.driver, cuda).hows if runtime.driver is not None else frozenset()
            if MINOR_VERSION_COMPAT in hows:
                driver, required = runtime.driver.shown if runtime.driver else "", table.min_driver_for(cuda)
                if FULL not in hows:
                    return Check(
                        "compute_capability",
                        Status.FAIL,
                        f"wheels carry no {cc.sm} code, only PTX ({code}) built by CUDA {cuda}; driver {driver} "
                        f"cannot compile it (it runs CUDA {cuda} through minor-version compatibility only); "
                        f"driver {required} or newer can",
                        needed,
                        found,
                        PTX_TOO_NEW_SOURCE,
                    )
                return Check(  # a branch (535.x): its patch level decides whether the driver can compile the PTX
                    "compute_capability",
                    Status.WARN,
                    f"wheels carry no {cc.sm} code, only PTX ({code}) built by CUDA {cuda}: driver {driver} compiles "
                    f"it if it is {required} or newer (then at first use, which can take many minutes), not if older "
                    "(it runs that CUDA through minor-version compatibility only); give the full version (nvidia-smi) "
                    "to know",
                    needed,
                    found,
                    PTX_TOO_NEW_SOURCE,
                )
            return Check(
                "compute_capability",
                Status.WARN,
                f"wheels carry no {cc.sm} code: the driver compiles their PTX ({code}) "
                "for it at first use, which can take many minutes",
                needed,
                found,
                row.source,
            )
        return Check(
            "compute_capability", Status.FAIL, f"wheels carry {needed}; none runs on {cc.sm}", needed, found, row.source
        )
    minimum: ComputeCapability | None = row.compute_capability_min
    source = row.source
    cuda_row = matrix.cuda_release(cuda)
    newest = cuda_row.compute_capability_max if cuda_row else None
    if newest is not None and cc.major > newest.major:
        return Check(
            "compute_capability",
            Status.FAIL,
            f"built with CUDA {cuda}, which predates {cc.sm} (it knows up to {newest.sm}); "
            "a newer release built with a newer CUDA is needed",
            f"<= {newest} (CUDA {cuda})",
            found,
            cuda_row.source if cuda_row else row.source,
        )
    if minimum is None and cuda_row is not None and cuda_row.compute_capability_min is not None:
        # Only the toolkit's floor is known: a GPU below it surely fails; above it, the wheels may still
        # have dropped the architecture, so say so rather than pass it.
        floor = cuda_row.compute_capability_min
        if cc < floor:
            return Check(
                "compute_capability",
                Status.FAIL,
                f"CUDA {cuda} supports >= {floor}; GPU is {cc}",
                f">= {floor}",
                found,
                cuda_row.source,
            )
        return Check(
            "compute_capability",
            Status.WARN,
            f"CUDA {cuda} supports {cc}, but the matrix does not say which architectures these wheels carry",
            f">= {floor}",
            found,
            cuda_row.source,
            gap=True,
        )
    if minimum is None:
        return Check("compute_capability", Status.UNKNOWN, "minimum compute capability not stated", "", found, source)
    least = cuda_row.compute_capability_min if cuda_row is not None else None
    if least is not None and least > minimum and cc < least:
        # a page's floor for every build (CuPy's "3.0 or later") does not reach below what the build's CUDA
        # compiles for: CUDA 12 has no Kepler code, at build time or through NVRTC at run time
        return Check(
            "compute_capability",
            Status.FAIL,
            f"built with CUDA {cuda}, which supports >= {least}; GPU is {cc}",
            f">= {least} (CUDA {cuda})",
            found,
            cuda_row.source if cuda_row is not None else source,
        )
    needed = f">= {minimum}"
    if cc >= minimum:
        return Check("compute_capability", Status.OK, f"GPU {cc} meets {needed}", needed, found, source)
    return Check(
        "compute_capability", Status.FAIL, f"needs compute capability {needed}; GPU is {cc}", needed, found, source
    )


Archs = tuple[ComputeCapability, ...]


def _variant_code(row: FrameworkRelease, cuda: CudaVersion) -> tuple[Archs, Archs, Archs]:
    """The architectures this variant's binaries carry code for, as (SASS, arch-specific SASS, PTX): its
    recipe's lists, else the row's (the default wheel's)."""
    for rec in row.install:
        if (rec.sm or rec.sm_exact or rec.ptx) and rec.cuda and CudaVersion.parse(rec.cuda).series == cuda.series:
            return rec.sm, rec.sm_exact, rec.ptx
    if row.cuda_default is None or row.cuda_default.series == cuda.series or len(row.cuda) == 1:
        return row.sm, row.sm_exact, row.ptx
    return (), (), ()


def system_cuda_ok(build: CudaVersion, have: CudaVersion) -> bool:
    """Does a system toolkit ``have`` serve a release built with ``build``?

    Before CUDA 11 the libraries' sonames carry major.minor (libcudart.so.10.0), so the series must
    match; from CUDA 11 the sonames carry the major only (libcudart.so.11.0 for every 11.x), and a
    newer minor of the same major serves an older build (minor-version compatibility).
    """
    if build.major < 11:
        return have.series == build.series
    return have.major == build.major and have.series >= build.series


def _check_system_cuda(row: FrameworkRelease, cuda: CudaVersion, runtime: Runtime) -> Check:
    needed = f"CUDA {cuda}" + (" (same major.minor)" if cuda.major < 11 else f" (or a newer {cuda.major}.x)")
    if not runtime.cuda:
        if "cuda" in runtime.absent:
            why = f"built for CUDA {cuda}, which it loads from the system; there is none"
            return Check("cuda", Status.FAIL, why, needed, "none", row.source)
        return Check("cuda", Status.UNKNOWN, "no CUDA toolkit known on this machine", needed, "", row.source)
    active = runtime.cuda[0]
    if system_cuda_ok(cuda, active.version):
        return Check(
            "cuda", Status.OK, f"CUDA {active.version} serves a {cuda} build", needed, str(active.version), row.source
        )
    return Check(
        "cuda",
        Status.FAIL,
        f"built for CUDA {cuda}; CUDA {active.version} is in use",
        needed,
        str(active.version),
        row.source,
    )


def _check_system_cudnn(row: FrameworkRelease, cuda: CudaVersion, runtime: Runtime) -> Check:
    """The cuDNN in use against the release's builds. For a release that loads cuDNN only for some features
    (``cudnn_optional``: CuPy), none is fine and another release is a warning, not a failure."""
    rule = cudnn_rule_for(row)
    builds = row.cudnn_for(cuda)
    build = max(builds)
    active: CudnnInstall | None = runtime.active_cudnn
    optional = "(optional) " if row.cudnn_optional else ""
    if active is None:
        needed = optional + cudnn_rule_text(build, rule)
        if row.cudnn_optional:
            why = "no cuDNN known on this machine; the release runs without it, only its cuDNN features need one"
            return Check("cudnn", Status.OK, why, needed, "none", row.source)
        if "cudnn" in runtime.absent:
            why = "it loads cuDNN from the system; there is none"
            return Check("cudnn", Status.FAIL, why, needed, "none", row.source)
        return Check("cudnn", Status.UNKNOWN, "no cuDNN known on this machine", needed, "", row.source)
    has = str(active.version)
    accepting = [b for b in builds if cudnn_compatible(b, active.version, rule)]
    if accepting:  # of several builds (a wheel per cuDNN), the newest one the cuDNN in use serves
        needed = optional + cudnn_rule_text(max(accepting), rule)
        return Check("cudnn", Status.OK, f"cuDNN {active.version} is accepted", needed, has, row.source)
    rule_text = cudnn_rule_text(build, rule)
    if row.cudnn_optional:
        why = (
            f"built against cuDNN {build}; cuDNN {active.version} is loaded: the release runs, but its cuDNN "
            f"features need {rule_text}"
        )
        return Check("cudnn", Status.WARN, why, optional + rule_text, has, row.source)
    why = f"built against cuDNN {build}; cuDNN {active.version} is loaded; this release needs {rule_text}"
    return Check("cudnn", Status.FAIL, why, rule_text, has, row.source)


# ------------------------------------------------------------------ co-installability


def specifiers_intersect(a: SpecifierSet, b: SpecifierSet) -> bool:
    """Whether some version satisfies both sets, as pip's resolver would need one to exist.

    The versions worth trying are the boundaries the two sets name; an exact pin in either set is one.
    """
    probes: set[Version] = set()
    for s in (*a, *b):
        try:
            v = Version(s.version.replace(".*", ""))
        except InvalidVersion:
            continue
        probes.add(v)
        if s.operator in (">", "!="):
            probes.add(Version(f"{v}.post999"))
        if s.operator in ("<", "!="):
            probes.add(Version(_just_below(v)))
    return any(a.contains(v, prereleases=True) and b.contains(v, prereleases=True) for v in probes)


def _just_below(v: Version) -> str:
    release = list(v.release)
    for i in range(len(release) - 1, -1, -1):
        if release[i] > 0:
            release[i] -= 1
            return ".".join(str(x) for x in release[: i + 1]) + ".999"
    return "0"


@functools.lru_cache(maxsize=1024)
def pinned_specifiers(requires: tuple[str, ...]) -> dict[str, SpecifierSet]:
    """The nvidia-* pins of a wheel_pins row by package name, parsed once per process (check asks often)."""
    out: dict[str, SpecifierSet] = {}
    for text in requires:
        req = parse_requirement(text.split(";", 1)[0])  # the pin; its platform marker is not needed here
        out[canonicalize_name(req.name)] = req.specifier
    return out


def find_conflicts(results: Sequence[RequirementResult], matrix: Matrix) -> list[str]:
    """Pinned nvidia-* wheels of two requested releases that no single version satisfies."""
    pinned: list[tuple[str, dict[str, SpecifierSet]]] = []
    for r in results:
        best = r.best
        if best is None:
            continue
        wanted: dict[str, SpecifierSet] = {}
        for p in pins_met(r, best.release, matrix)[:1]:
            wanted.update(pinned_specifiers(p.requires))
        pinned.append((f"{r.requirement}", wanted))
    out = []
    for i, (name_a, a) in enumerate(pinned):
        for name_b, b in pinned[i + 1 :]:
            for dep in sorted(set(a) & set(b)):
                if not specifiers_intersect(a[dep], b[dep]):
                    out.append(
                        f"{name_a} needs {dep}{a[dep]} but {name_b} needs {dep}{b[dep]}: pip cannot install both"
                    )
    return out


def pins_met(r: RequirementResult, release: FrameworkRelease, matrix: Matrix) -> list[WheelPins]:
    """The nvidia-* pins pip would meet for this requirement: those of the extras it names (all of a row's
    extras, normalized: ``onnxruntime-gpu[cuda,cudnn]``, ``tensorflow[and_cuda]``; the row naming the most of
    them), the pinned patch release if the metadata of that one is known, else the newest known release the
    row covers. A requirement without extras meets the rows without one (torch's)."""
    asked = frozenset(canonicalize_name(e) for e in r.requirement.extras)
    return pins_of_form(release, asked, r.requirement.specifier, matrix)


def pins_of_form(
    release: FrameworkRelease, asked: frozenset[str], specifier: SpecifierSet, matrix: Matrix
) -> list[WheelPins]:
    """``pins_met`` for a requirement naming the (normalized) extras ``asked`` with ``specifier``."""
    pins = [p for p in matrix.wheel_pins_covered(release.names, release.covers) if p.extras <= asked]
    most = max((len(p.extras) for p in pins), default=0)
    pins = [p for p in pins if len(p.extras) == most]
    pinned, _ = _split_local(specifier)
    exact = [p for p in pins if pinned.contains(p.version, prereleases=True)]
    return sorted(exact or pins, key=lambda p: p.version, reverse=True)


def installed_cudnn_choices(runtime: Runtime, build: Sequence[CudnnVersion], rule: CudnnRule) -> list[CudnnInstall]:
    """cuDNN installs on the machine (not loaded first) that this release would accept."""
    return [c for c in runtime.cudnn if any(cudnn_compatible(b, c.version, rule) for b in build)]


def variant_code(row: FrameworkRelease, cuda: CudaVersion) -> tuple[Archs, Archs, Archs]:
    """The GPU code a CUDA variant of ``row`` carries: (SASS, arch-specific SASS, PTX)."""
    return _variant_code(row, cuda)


def gpu_check(row: FrameworkRelease, cuda: CudaVersion, runtime: Runtime, matrix: Matrix) -> Check:
    """The solver's verdict on the GPU of ``runtime`` for ``row``'s CUDA ``cuda`` build (the HTML page's)."""
    return _check_gpu(row, cuda, runtime, matrix)
