"""The planner: turns the solver's verdicts into ranked options of concrete steps. No I/O.

Ranking is least privilege first (a driver upgrade needs root), then least change: loading a module
the site already has beats a new environment, which beats another release, which beats a manual
download. This module plans each requirement; ``plan_options`` builds each kind of option it ranks.
"""

from __future__ import annotations

from collections.abc import Sequence

from .compat import CudnnRule
from .driver_levels import DRIVER_BOUND, driver_upgrade
from .machine import Runtime
from .matrix import Matrix
from .plan_conda import channel_builds, in_conda_env
from .plan_options import (
    WEIGHT_NOTHING,
    fixes_for_release,
    install_option,
    other_forms,
    other_release_options,
    other_variants,
    plain_form,
)
from .plan_options import Option as Option  # (plan_conda imports it from here)
from .records import field, record
from .solve import nearest_known, solve_requirement, under_its_own_name, unpublished
from .solve.checks import needs_system_cuda
from .solve.results import Candidate, RequirementResult, SolveResult, Status
from .specs import parse_requirement
from .steps import Step


@record
class RequirementPlan:
    result: RequirementResult
    options: list[Option]
    message: str = ""
    dropped: list[str] = field(default_factory=list)  # options --verify removed, and why


@record
class Plan:
    requirements: list[RequirementPlan]
    conflicts: list[str]
    satisfied: bool
    # lines that install nothing to check on this target, each with why (its marker excludes it, a local path)
    notes: list[tuple[str, str]] = field(default_factory=list)


def make_plan(solved: SolveResult, runtime: Runtime, matrix: Matrix) -> Plan:
    plans = [_plan_one(r, runtime, matrix) for r in solved.results]
    # each as planned: a channel's own builds in a conda environment judge it by what conda installs there
    return Plan(plans, list(solved.conflicts), all(p.result.satisfied for p in plans) and not solved.conflicts)


def _plan_one(r: RequirementResult, runtime: Runtime, matrix: Matrix) -> RequirementPlan:
    if not r.known:
        return RequirementPlan(r, [], f"{r.requirement.name} is not in the compatibility matrix; nothing checked")
    r = channel_builds(r, runtime, matrix)  # Anaconda's own TensorFlow in the active environment, not the wheel
    best = r.best
    if best is None:
        return _under_its_own_name(r, runtime, matrix) or RequirementPlan(r, [], _not_in_matrix(r, runtime, matrix))
    if r.satisfied:
        return RequirementPlan(r, [Option("nothing to do: this machine runs it as it is", [], WEIGHT_NOTHING)])
    options: list[Option] = []
    failing = {c.component for c in best.failures}
    if not failing:
        unknown = [c.component for c in best.checks if c.status is Status.UNKNOWN]
        warned = [c.component for c in best.checks if c.status is Status.WARN]
        title = "install it: this machine has what it needs"
        if unknown:  # say what was not checked rather than promise it runs
            title = f"install it: nothing known stands against it ({', '.join(unknown)} not known)"
        if warned:
            title = title.replace(": this machine has what it needs", ": nothing stands against it")
            if any(c.doubt for c in best.checks):  # (the build may lack code for this GPU)
                title = title.replace(": nothing stands against it", ", though it may not run here")
            title += f"; read the warnings first ({', '.join(warned)})"
        options.append(install_option(best, runtime, title, WEIGHT_NOTHING))
    else:
        keep, upgrade = best, None
        if failing & set(DRIVER_BOUND):
            # for the builds the driver stands in the way of (another that runs as it is is an option of its own)
            # (in a conda environment, the builds conda installs there: the one installed among them)
            held = r.installs if r.conda_cuda is not None else r.requested
            blocked = [c for c in held if any(k.component in DRIVER_BOUND for k in c.failures)]
            upgrade = driver_upgrade(blocked, runtime, matrix)
            keep = upgrade.candidate if upgrade is not None else best
        kept = {c.component for c in keep.failures}
        options.extend(fixes_for_release(keep, runtime, matrix, kept, _installed_is(r, keep), upgrade))
        options.extend(plain_form(best, runtime, matrix))
        options.extend(other_forms(best, runtime, matrix))
        options.extend(other_variants(r, best, runtime))
        options.extend(other_release_options(r, runtime, matrix))
    options = in_conda_env(r, options, runtime)
    options.sort(key=lambda o: (o.needs_root, o.weight))
    _replacing_installed(r, options)
    _why_not_installed(r, options, runtime)
    message = _newest_for_this_os(r, runtime, matrix) if not options and "os" in failing else ""
    return RequirementPlan(r, _dedupe(options), message)


def _not_in_matrix(r: RequirementResult, runtime: Runtime, matrix: Matrix) -> str:
    """No row holds the release asked for: say so, and name the known releases around it to plan instead."""
    text = f"no release of {r.package} in the matrix satisfies {r.requirement}"
    missing = unpublished(r.requirement, matrix)
    if missing:
        return missing
    near = nearest_known(r.requirement, matrix, runtime.os)
    if not near:
        return text
    first = near.split(" ", 1)[0]
    return (
        f"{text}; the matrix knows {near}: `dnnresolve plan {r.package}=={first}` says what that "
        "one takes (a release the matrix does not list may need something else)"
    )


def _newest_for_this_os(r: RequirementResult, runtime: Runtime, matrix: Matrix) -> str:
    """When the release has no build for this operating system: the newest release that has one, and what it
    needs (it was not offered because something it needs is not known here or does not fit)."""
    rows = [row for row in matrix.releases(r.package, runtime.os) if row.is_gpu]
    if not rows:
        return f"the matrix has no {runtime.os} GPU build of {r.package}"
    row = max(rows, key=lambda x: (x.version, x.package == r.package))  # the name asked for, on a tie
    needs = [f"Python {', '.join(str(p) for p in row.python)}", f"CUDA {', '.join(str(c) for c in row.cuda)}"]
    if row.cudnn and needs_system_cuda(row, matrix) and row.cudnn_rule is not CudnnRule.BUNDLED:
        needs.append(f"cuDNN {', '.join(str(c) for c in row.cudnn)}")
    return (
        f"the matrix has no {runtime.os} build of this release; its newest {runtime.os} GPU build is "
        f"{row.package} {row.version} ({'; '.join(needs)}): `dnnresolve plan {row.package}=={row.version}` "
        "with your CUDA and cuDNN says what it takes"
    )


# ------------------------------------------------------------------ option builders


def _under_its_own_name(r: RequirementResult, runtime: Runtime, matrix: Matrix) -> RequirementPlan | None:
    """A release asked for under a name the framework no longer publishes (tensorflow-gpu stops at 2.11.0):
    planned under the framework's own name, the reason first."""
    renamed = under_its_own_name(r.requirement, matrix)
    if renamed is None:
        return None
    owner, last, _ = renamed
    other = solve_requirement(parse_requirement(f"{owner}{r.requirement.specifier}"), runtime, matrix)
    if other.best is None:
        return None
    version = other.best.release.version
    message = (
        f"{r.package} has no release that satisfies {r.requirement.specifier} (the matrix's newest under that "
        f"name is {last}); the same framework goes on as {owner}, and {owner} {version} satisfies it "
        f"(`dnnresolve matrix {owner}=={version}` has the details)"
    )
    options = []
    for o in _plan_one(other, runtime, matrix).options:
        title = o.title.removeprefix("install it: ") if o.title.startswith("install it: ") else None
        title = f"install {owner} {version} instead: {title}" if title else f"with {owner} instead: {o.title}"
        options.append(Option(title, o.steps, o.weight, o.resolves, o.notes, o.driver_upgrade, o.candidate))
    return RequirementPlan(r, options, message)


def _installed_is(r: RequirementResult, c: Candidate) -> bool:
    """Whether the installed distribution is the build ``c``: its version is the release, and the build it is
    (``installed_build``: a conda package's by its environment's CUDA) or its local tag (if any) names that build
    (``+cpu`` the CPU build, ``+cu118`` the CUDA 11.8 one)."""
    if r.installed is None or str(c.release.version) != r.installed.version.split("+")[0]:
        return False
    if r.installed_build is not None:
        return r.installed_build.cuda == c.cuda
    tag = r.installed.build_tag()
    if tag.kind == "cpu":
        return c.cuda is None
    if tag.is_cuda and tag.cuda is not None:
        return c.cuda is not None and tag.cuda.names_build(c.cuda)
    return tag.kind in ("", "other")


def _replacing_installed(r: RequirementResult, options: list[Option]) -> None:
    """pip keeps an installed 2.1.0+cpu for ``torch==2.1.0`` (a local tag still matches): an option that installs
    another build of the installed release removes that one first."""
    installed = r.installed
    if installed is None or installed.by_conda or installed.build_tag().kind in ("", "other"):
        return
    for o in options:
        c = o.candidate
        if c is None or c.release.package != r.package or _installed_is(r, c):
            continue
        if str(c.release.version) != installed.version.split("+")[0]:
            continue
        at = next((i for i, s in enumerate(o.steps) if s.argv[3:4] == ("install",) and s.kind == "pip"), None)
        if at is None:
            continue
        remove = Step(
            "pip",
            f"remove the installed {r.package} {installed.version} (pip counts it as {c.release.version} and keeps it)",
            ("python", "-m", "pip", "uninstall", "-y", r.package),
        )
        o.steps = [*o.steps[:at], remove, *o.steps[at:]]


def _why_not_installed(r: RequirementResult, options: list[Option], runtime: Runtime) -> None:
    """Where the release installed meets the requirement but its build cannot run here (``installed_build``), each
    option says so: the best pick may run, the build installed does not."""
    own, installed = r.installed_build, r.installed
    if (
        own is None
        or installed is None
        or own.ok
        or not r.requirement.specifier.contains(str(own.release.version), prereleases=True)
    ):
        return
    build = f"CUDA {own.cuda} build" if own.cuda is not None else "CPU build"
    if installed.by_conda:
        pin = runtime.sources.get("conda_cuda", "")
        named = installed.build_tag().cuda is not None  # (the build string names it: py3.9_cuda11.3_cudnn8.3.2_0)
        held = f", as the environment's {pin.removeprefix('conda ')} says" if pin and not named and own.cuda else ""
        what = f"conda's {installed.name} {installed.version} in this environment (build {installed.build}: its {build}"
        what += f"{held})"
    else:
        what = f"the installed {installed.name} {installed.version} (its {build})"
    note = f"{what} cannot run here: {'; '.join(k.reason for k in own.failures)}"
    for o in options:
        if o.candidate is None or not _installed_is(r, o.candidate):  # (one that keeps it says what it takes)
            o.notes = [*o.notes, note]


def _dedupe(options: Sequence[Option]) -> list[Option]:
    seen: set[tuple[str, ...]] = set()
    out = []
    for o in options:
        key = tuple(s.shell for s in o.steps)
        if key in seen:
            continue
        seen.add(key)
        out.append(o)
    return out


def needs_summary(c: Candidate) -> dict[str, str]:
    """What the release variant needs, component by component, for the summary."""
    return {k.component: k.needed for k in c.checks if k.needed}


def uses_system_libraries(c: Candidate) -> bool:
    return needs_system_cuda(c.release)
