"""What the solver answers: each candidate build with its checks (``Check``, ``Status``), the verdict every
command gives for it, and the result per requirement (``RequirementResult``) and for all of them."""

from __future__ import annotations

import enum

from packaging.version import InvalidVersion, Version

from ..artifact import split_local
from ..machine import InstalledPackage
from ..model import FrameworkRelease
from ..pkgname import canonicalize_name
from ..records import field, record
from ..specs import Requirement
from ..versions import CudaVersion


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
    # a warning that it may run here or may not: the sources leave open what the build carries (the build
    # scripts changed the day it was built); such a build is never offered as one that runs
    doubt: bool = False
    requires: str = ""  # a requirement that, installed with the release, clears this warning (a wheel's pin)


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
    # the build installed, judged as itself (``solve.installed``); None where the matrix names no build of it
    installed_build: Candidate | None = None

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
            held = [c for c in cands if c.cuda is not None and env_takes(c.release, c.cuda, self.conda_cuda)]
            if held:
                return held
        return [c for c in cands if is_pypi_build(c.release, c.cuda)] or cands

    @property
    def best(self) -> Candidate | None:
        """The candidate the requirement installs that fails least; the other builds are alternatives a plan
        may offer (``plan_options.other_variants``), never what the requirement is judged by."""
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
        2.1.0+cpu as 2.1.0 and keeps it, so the tag decides. An untagged version is the index's default build. Never
        where the build installed, judged as itself (``installed_build``), cannot run here."""
        best = self.best
        if self.installed is None or best is None:
            return False
        if self.installed_build is not None and not self.installed_build.ok:
            return False  # the pick may run here; the build installed is what runs, and it cannot
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


def env_takes(row: FrameworkRelease, cuda: CudaVersion, env: CudaVersion) -> bool:
    """Whether conda installs this build into an environment held to CUDA ``env`` (``conda_cuda.takes``)."""
    from ..conda_cuda import pins_series, takes

    recipe = row.recipe(cuda, kind="conda")
    return recipe is not None and takes(cuda, env, pinned=pins_series(recipe))


def _preference(row: FrameworkRelease, cuda: CudaVersion | None) -> tuple[bool, int]:
    """How a variant ranks among its release's: the default build (the plain PyPI wheel's CUDA) first, then
    the newest CUDA major; within a major the matrix's order stands (``sorted``/``min`` keep it)."""
    d = row.cuda_default
    is_default = d is not None and cuda is not None and d.series == cuda.series
    return not is_default, -(cuda.major if cuda else 0)


def is_pypi_build(row: FrameworkRelease, cuda: CudaVersion | None) -> bool:
    """Whether ``pip install package==version`` from PyPI gets this build: the release's default CUDA."""
    d = row.cuda_default
    return row.on_pypi and d is not None and cuda is not None and d.series == cuda.series


def preferred_variants(row: FrameworkRelease) -> list[CudaVersion | None]:
    """The release's CUDA variants in the order a plan offers them (``None``: a release without CUDA builds)."""
    if not row.cuda:
        return [None]
    return sorted(row.cuda, key=lambda cuda: _preference(row, cuda))
