"""Other releases a plan offers when the one asked for cannot run here. A pure function of the solver's result,
the runtime and the matrix; no I/O.

Each offer is its own option, so that the least change is visible and no caveat is hidden: the newest release
that runs in the Python already there (caveats named: minor-version compatibility, PTX compiled at first use),
the newest that runs with no caveat where that is another release, and one of the series asked for. A new
environment (another Python) is offered only where no release of the same major runs in the Python there.
"""

from __future__ import annotations

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from .artifact import newest_release, published
from .compat import DEPENDS, MINOR_VERSION_COMPAT
from .machine import Runtime
from .matrix import Matrix
from .model import FrameworkRelease
from .plansteps import env_python
from .records import record, replace
from .solve.checks import cudnn_supports_gpu, evaluate
from .solve.results import Candidate, Check, RequirementResult, Status, preferred_variants

SERIES, NEWEST, CLEAN, WHOLE = "series", "newest", "clean", "whole"


@record
class Offer:
    """Another release that runs: its build, whether it takes a new environment, and its caveats (short phrases
    for a title; the full reasons are the candidate's WARN checks)."""

    candidate: Candidate
    kind: str  # SERIES, NEWEST or CLEAN
    new_env: bool = False
    caveats: tuple[str, ...] = ()

    @property
    def warnings(self) -> list[Check]:
        return [c for c in self.candidate.checks if c.status is Status.WARN and not c.gap]


@record
class _Runs:
    """How one release runs here: its best build in the Python there (clean, else with caveats) and in a new
    environment."""

    clean: Candidate | None = None
    caveated: Candidate | None = None
    env_clean: Candidate | None = None
    env_caveated: Candidate | None = None

    @property
    def here(self) -> Candidate | None:
        return self.clean or self.caveated

    @property
    def env(self) -> Candidate | None:
        return self.env_clean or self.env_caveated


def other_releases(r: RequirementResult, runtime: Runtime, matrix: Matrix) -> list[Offer]:
    """The offers for requirement ``r``, in the order a plan lists them: the series asked for, the newest, the
    newest without caveats, the newest that keeps cuDNN where the newest runs only with cuDNN off, then those in a
    new environment."""
    best = r.best
    must_pass = {c.component for c in best.failures} if best else set()
    requested = {c.release.version for c in r.requested}
    wants_gpu = any(x.cuda for x in r.requested)
    rows = sorted(_releases(r.package, runtime.os, matrix, requested), key=lambda x: x.version, reverse=True)
    runs = {id(row): _how_it_runs(row, runtime, matrix, wants_gpu, must_pass) for row in rows}
    here = [(row, runs[id(row)]) for row in rows if runs[id(row)].here is not None]
    series = {v.release[:2] for v in requested}
    out: list[Offer] = []
    picks: list[tuple[str, Candidate | None]] = [
        (SERIES, next((x.here for row, x in here if row.version.release[:2] in series), None)),
        (NEWEST, here[0][1].here if here else None),
        (CLEAN, next((x.clean for _, x in here if x.clean is not None), None)),
    ]
    if here and _without_cudnn(here[0][1].here):  # the newest loses its cuDNN operations on this GPU: the newest
        keeps = (x.here for _, x in here if x.here is not None and _keeps_cudnn(x.here, runtime, matrix))
        picks.append((WHOLE, next(keeps, None)))  # whose cuDNN NVIDIA's matrix says supports it
    for kind, cand in picks:
        if cand is not None and all(o.candidate.release is not cand.release for o in out):
            out.append(Offer(cand, kind, False, caveats(cand, runtime, matrix)))
    if must_pass == {"python"}:
        return out  # the release asked for runs in a new environment: the plan offers that one
    # a new environment only for what the Python there cannot give: no release of the same major runs here (for
    # the newest), or runs here without caveats (for the clean one)
    runs_here = {row.version.major for row, _ in here}
    clean_here = {row.version.major for row, x in here if x.clean is not None}
    newest_here = here[0][0].version if here else None
    env = [(row, runs[id(row)]) for row in rows if runs[id(row)].env is not None]
    newest = next(((row, x.env) for row, x in env if newest_here is None or row.version > newest_here), None)
    clean = next(((row, x.env_clean) for row, x in env if x.env_clean is not None), None)
    env_picks = [
        (NEWEST, newest, runs_here),
        (CLEAN, None if any(o.kind == CLEAN for o in out) else clean, clean_here),
    ]
    for kind, pick, families in env_picks:
        if pick is None or pick[0].version.major in families:
            continue
        cand = pick[1]
        if cand is not None and all(o.candidate.release is not cand.release for o in out):
            out.append(Offer(cand, kind, True, caveats(cand, runtime, matrix)))
    return out


def _releases(package: str, os_name: str, matrix: Matrix, requested: set[Version]) -> list[FrameworkRelease]:
    """Each row as the release pip would install of it: the newest its index publishes of those the row covers,
    other than the one asked (the row of 2.15.0 offers 2.15.1, its same series; the 2.14 row is 2.14.1, so a title
    names what its step installs). A row whose index list is not recorded stands for its own release."""
    out = []
    for row in matrix.releases(package, os_name):
        if published(row.package) is None:
            if row.version not in requested:
                out.append(row)
            continue
        others = ",".join(f"!={v}" for v in sorted(requested))
        spec = SpecifierSet(",".join(t for t in (str(row.covers), others) if t))
        newest = newest_release(row.package, spec, os_name)
        if newest is not None:
            out.append(row.for_version(newest))
    return out


def _how_it_runs(
    row: FrameworkRelease, runtime: Runtime, matrix: Matrix, wants_gpu: bool, must_pass: set[str]
) -> _Runs:
    out = _Runs()
    env_runtime: Runtime | None = None
    for cuda in preferred_variants(row):
        if cuda is None and wants_gpu:
            continue
        checks = evaluate(row, cuda, runtime, matrix)
        failing = {c.component for c in checks if c.status is Status.FAIL}
        # another Python is what a new environment changes: a Python with no wheels, or one the install step's
        # extra has no wheels for (tensorflow[and-cuda]==2.14.1 on 3.11)
        if failing - {"python", "install"} or not _known(checks, runtime, must_pass):
            continue
        if not _passes(checks, must_pass - {"python", "install", "extras"}):
            continue
        if not failing:
            cand = Candidate(row, cuda, checks)
            if _clean(checks):
                out.clean = cand
                break  # the best this release does here (its other builds need not be judged)
            out.caveated = out.caveated or cand
            continue
        if runtime.python is None or not row.python or out.here is not None or out.env_clean is not None:
            continue  # (a release that runs here is offered here, never in a new environment)
        # judged again with the Python a new environment would have: its install step may differ
        env_runtime = env_runtime or replace(runtime, python=env_python(row, runtime))
        checks = evaluate(row, cuda, env_runtime, matrix)
        if any(c.status is Status.FAIL for c in checks) or not _known(checks, env_runtime, must_pass):
            continue
        cand = Candidate(row, cuda, checks)
        if _clean(checks):
            out.env_clean = out.env_clean or cand
        else:
            out.env_caveated = out.env_caveated or cand
    return out


def _without_cudnn(cand: Candidate | None) -> bool:
    """Whether the build runs here only with cuDNN turned off (the GPU is below its cuDNN's floor)."""
    return cand is not None and any(
        c.component == "cudnn_gpu" and c.status is Status.WARN and not c.requires for c in cand.checks
    )  # (a warning a pin clears, 'nvidia-cudnn-cu12<9.11', keeps cuDNN: the pin is in the option's command)


def _keeps_cudnn(cand: Candidate, runtime: Runtime, matrix: Matrix) -> bool:
    return cudnn_supports_gpu(cand.release, cand.cuda, runtime, matrix)


def _passes(checks: list[Check], components: set[str]) -> bool:
    """What failed for the release asked for is checked here and passes, with a caveat at most (a check this
    release does not make, such as a cuDNN it brings itself, is another form than the one asked for)."""
    status = {c.component: c for c in checks}
    return all(
        ((c := status.get(k)) is not None and (c.status is Status.OK or (c.status is Status.WARN and not c.gap)))
        or (c is None and k == "cudnn_gpu")  # (said only where the GPU is below the floor)
        for k in components
    )


def _clean(checks: list[Check]) -> bool:
    return not any(c.status is Status.WARN and not c.gap for c in checks)


def _known(checks: list[Check], runtime: Runtime, must_pass: set[str]) -> bool:
    """Whether every check this machine could answer is answered: a build whose GPU code, driver minimum, CUDA or
    cuDNN the matrix leaves unsaid is not one that runs (the machine's unknowns stay unknown for every release;
    a GPU check that was a failure for the release asked for must pass here)."""
    known = {
        "driver": runtime.driver is not None,
        "compute_capability": bool(runtime.compute_capabilities),
        "cuda": True,
        "cudnn": True,
    }
    for c in checks:
        if (c.status is Status.UNKNOWN and known.get(c.component, False)) or c.doubt:
            return False  # (a build that may lack code for this GPU is no offer of one that runs)
        if c.status is Status.WARN and c.gap and (known.get(c.component, False) or c.component in must_pass):
            return False
    return True


def caveats(cand: Candidate, runtime: Runtime, matrix: Matrix) -> tuple[str, ...]:
    """Short words for the caveats of a build that runs: "through CUDA 11.x minor-version compatibility",
    "its PTX compiled for sm_37 at first use"."""
    out: list[str] = []
    for c in cand.checks:
        if c.status is not Status.WARN or c.gap:
            continue
        if c.component == "driver" and cand.cuda is not None and runtime.driver is not None:
            how = matrix.driver_table(runtime.os).check(runtime.driver, cand.cuda).how
            if how == MINOR_VERSION_COMPAT:
                out.append(f"through CUDA {cand.cuda.major}.x minor-version compatibility")
            elif how == DEPENDS:
                out.append(f"if driver {runtime.driver.shown} is new enough for CUDA {cand.cuda} (its patch level)")
            else:
                out.append("with a driver caveat")
        elif c.component == "compute_capability" and c.doubt:
            out.append(f"if its build carries code for {_sm(c.found)}")
        elif c.component == "compute_capability":
            out.append(f"its PTX compiled for {_sm(c.found)} at first use")
        elif c.component == "cudnn_gpu" and c.requires:
            out.append(f"with {c.requires} beside it, whose cuDNN supports {_sm(c.found)}")
        elif c.component == "cudnn_gpu":
            out.append(f"with cuDNN turned off ({c.needed.split(':')[0]} does not support {_sm(c.found)})")
        else:
            out.append(f"with a caveat ({c.component})")
    return tuple(out)


def _sm(found: str) -> str:
    return "sm_" + found.replace(".", "") if found else "this GPU"
