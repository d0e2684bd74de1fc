"""Options in an active conda environment whose framework conda installed. No I/O.

One conda environment holds one CUDA (``check_conda``): a pip install of the framework over conda's package leaves
two installers fighting over one package, and a conda install whose build needs another cudatoolkit /
cuda-version / pytorch-cuda than the environment holds either fails to solve or replaces the CUDA every other package
there was built for. So, where conda installed the package an option would install with pip: a ``conda install``
into this environment where the release's own conda recipe keeps the environment's CUDA, else a new environment
(``conda create``) with the recipe's packages and channels, or with the option's own pip steps where the release has
no conda recipe. Which CUDA a conda build takes is ``conda_cuda.takes``, the rule ``check`` applies to environment
files. Another framework whose build the environment's CUDA does not take goes to a new environment too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from packaging.specifiers import SpecifierSet

from .conda_builds import by_channel, candidates, channel_name, installed_build, is_own_build
from .conda_cuda import held_cuda, holders, pins_series, sets_cuda, takes
from .machine import InstalledPackage, Runtime
from .matrix import Matrix
from .model import FrameworkRelease, InstallRecipe
from .pkgname import canonicalize_name
from .plansteps import env_name, env_python
from .records import replace
from .solve import Candidate, RequirementResult
from .specs import InvalidRequirement, parse_requirement
from .steps import Step
from .versions import CudaVersion, PythonVersion, VersionError

if TYPE_CHECKING:
    from .plan import Option

WEIGHT_IN_ENV = 2  # plan.WEIGHT_VARIANT: a build of the release that fits what the environment has
WEIGHT_NEW_ENV = 3  # plan.WEIGHT_ENV


def conda_framework(r: RequirementResult, runtime: Runtime) -> InstalledPackage | None:
    """The package conda installed that the requirement's options would install over, if any."""
    if not runtime.conda_prefix:
        return None
    names = {r.package}
    if r.best is not None:
        names |= set(r.best.release.names)
    return next((p for p in runtime.packages if p.by_conda and canonicalize_name(p.name) in names), None)


def channel_builds(r: RequirementResult, runtime: Runtime, matrix: Matrix) -> RequirementResult:
    """Where a channel that builds the framework itself (``conda_builds.OWN_BUILDS``: Anaconda's defaults,
    conda-forge) installed it in the active environment: the requirement as that channel's builds of the releases it
    allows, each judged as itself (its CUDA and cuDNN conda packages, not a system toolkit), since ``conda install``
    there installs one of them, not a wheel; ``r`` itself for any other."""
    installed = conda_framework(r, runtime)
    if installed is None:
        return r
    channel = channel_name(installed.channel)
    found = by_channel(matrix, r.package, r.requirement.specifier).get(channel)
    if not found:
        return _as_conda(r, runtime, matrix)
    own = by_channel(matrix, r.package, SpecifierSet(f"=={installed.version}")).get(channel, [])
    mine = installed_build(own, installed, runtime, matrix) or r.installed_build
    return replace(r, candidates=candidates(found, runtime, matrix), installed_build=mine)


def _as_conda(r: RequirementResult, runtime: Runtime, matrix: Matrix) -> RequirementResult:
    """Where conda installed the framework from a project's channel (PyTorch's): what conda installs there is that
    channel's package, whose GPU code its conda recipe may state (``FrameworkRelease.as_conda``); ``r`` with each
    candidate's GPU check on that code."""
    from .solve.gpu import gpu_check

    def judged(c: Candidate | None) -> Candidate | None:
        if c is None or c.cuda is None:
            return c
        row = c.release.as_conda()
        if row.install == c.release.install:
            return c
        checks = [
            gpu_check(row, c.cuda, runtime, matrix) if k.component == "compute_capability" else k for k in c.checks
        ]
        return Candidate(row, c.cuda, checks)

    cands = [j for c in r.candidates if (j := judged(c)) is not None]
    return replace(r, candidates=cands, installed_build=judged(r.installed_build))


def in_conda_env(r: RequirementResult, options: Sequence[Option], runtime: Runtime) -> list[Option]:
    """``options`` with every pip install over conda's framework replaced by the conda way to the same build."""
    installed = conda_framework(r, runtime)
    if installed is None:
        return [_beside(o, runtime) for o in options] if holders(runtime) else list(options)
    out: list[Option] = []
    for o in options:
        c = o.candidate
        if c is None or not any(s.kind == "pip" and _installs(s, installed.name) for s in o.steps):
            out.append(o)
            continue
        out.append(_conda_way(o, c, r, runtime, installed))
    return out


def _conda_way(o: Option, c: Candidate, r: RequirementResult, runtime: Runtime, installed: InstalledPackage) -> Option:
    from .plan import Option

    env = runtime.conda_cuda
    held = f"CUDA {env} ({runtime.sources.get('conda_cuda', 'conda')})" if env is not None else "no CUDA pin"
    fit = _fitting_build(c, r, runtime)
    if fit is not None:
        pick, same = fit
        cuda = _recipe_cuda(same)
        argv = ["conda", "install", "-y", *_channels(same), *_packages(same, pick, env)]
        if cuda is None:
            build = "its CPU build"
        elif env is not None and cuda != env:
            build = f"its CUDA {cuda} conda build takes any CUDA {cuda.major}.x and so"
        else:
            build = f"its CUDA {cuda} build{_whose(same)}"
        title = (
            f"install {pick.release.package} {pick.release.version} with conda into this environment: {build} keeps "
            f"the environment's {held} (pip would install over conda's {installed.describe()})"
        )
        step = Step("conda", f"install {pick.release.package} {pick.release.version} with conda", tuple(argv))
        steps = _replaced(o.steps, [installed.name], [step])
        return Option(title, steps, max(o.weight, WEIGHT_IN_ENV), o.resolves, o.notes, o.driver_upgrade, pick)
    swap = _in_place(o, c, r, runtime, installed)
    if swap is not None:
        return swap
    row = c.release
    name = env_name(row)
    rec = row.recipe(c.cuda, kind="conda")
    py = _python(row, rec, runtime)
    create = ["conda", "create", "-y", "-n", name]
    if rec is not None:
        # a channel's own build whose Pythons no source names: no pin, conda picks a Python its build has
        python = [f"python={py}"] if py is not None else []
        made = "create a conda environment with" + (f" Python {py} and" if py is not None else "")
        create += [*_channels(rec), *python, *_packages(rec, c, None)]
        steps = [
            Step("conda", f"{made} the {'official ' if py is not None else ''}conda packages", tuple(create)),
            Step("conda", "activate it", ("conda", "activate", name)),
        ]
        # this create brings the Python too: the option's own new environment (a Python fix) goes
        own_env = [s for s in o.steps if s.argv[:2] in (("conda", "create"), ("conda", "activate"))]
        steps = _replaced([s for s in o.steps if s not in own_env], [installed.name], steps)
        why = _why_new(c, rec, runtime, held)
        if own_env:
            title = f"{o.title} and its conda packages ({why})"
            return Option(
                title, steps, max(o.weight, WEIGHT_NEW_ENV), o.resolves, _recipe_note(o, rec, row), o.driver_upgrade, c
            )
    else:
        steps = [
            Step("conda", f"create a conda environment with Python {py}", (*create, f"python={py}")),
            Step("conda", "activate it", ("conda", "activate", name)),
            *o.steps,
        ]
        why = f"conda has no package of it, and pip would install over conda's {installed.describe()} here"
    title = f"{o.title}, in a new conda environment ({why})"
    notes = _recipe_note(o, rec, row) if rec is not None else o.notes
    return Option(title, steps, max(o.weight, WEIGHT_NEW_ENV), o.resolves, notes, o.driver_upgrade, c)


def _in_place(
    o: Option, c: Candidate, r: RequirementResult, runtime: Runtime, installed: InstalledPackage
) -> Option | None:
    """Where the release conda installed meets the requirement but its build cannot run here (``installed_build``),
    and nothing else conda installed in the environment holds its CUDA: the option's conda build installed over it,
    into this environment, its CUDA packages replacing the environment's (``conda install`` swaps both); a new
    environment would leave a broken one behind. None otherwise, or where the build was not made for the
    environment's Python or has no conda recipe."""
    from .plan import Option

    own = r.installed_build
    rec = c.release.recipe(c.cuda, kind="conda")
    if own is None or own.ok or rec is None or not _python_fits(rec, runtime):
        return None
    if not r.requirement.specifier.contains(installed.version, prereleases=True):
        return None  # another release asked for: this environment's stays as it is, the new one beside it
    if "python" in {k.component for k in c.failures} or not all(_same(p, installed) for p in holders(runtime)):
        return None
    argv = ("conda", "install", "-y", *_channels(rec), *_packages(rec, c, None))
    cuda = _recipe_cuda(rec)
    build = f"CUDA {cuda} build{_whose(rec)}" if cuda is not None else "CPU build"
    held = f"CUDA {runtime.conda_cuda} ({runtime.sources.get('conda_cuda', 'conda')})"
    title = (
        f"replace conda's {installed.describe()} with {c.release.package} {c.release.version}'s {build}, in this "
        f"environment: nothing else conda installed here was built for its {held}, which this install replaces"
    )
    step = Step("conda", f"install {c.release.package} {c.release.version} with conda", argv)
    steps = _replaced(o.steps, [installed.name], [step])
    return Option(
        title, steps, max(o.weight, WEIGHT_IN_ENV), o.resolves, _recipe_note(o, rec, c.release), o.driver_upgrade, c
    )


def _same(p: InstalledPackage, installed: InstalledPackage) -> bool:
    """Whether ``p`` is part of the framework conda installed as ``installed``: the package itself, or one of the
    same release from the same channel (Anaconda's tensorflow-gpu stands on its tensorflow of that release)."""
    return p.name == installed.name or (
        p.version == installed.version and channel_name(p.channel) == channel_name(installed.channel)
    )


def _why_new(c: Candidate, rec: InstallRecipe, runtime: Runtime, held: str) -> str:
    """Why a release's conda build goes to a new environment: a Python it was not made for, a CUDA the environment's
    does not take (``conda_cuda.takes``), or both."""
    env = runtime.conda_cuda
    cuda = _recipe_cuda(rec)
    reasons = []
    other_python = "python" in {k.component for k in c.failures} and runtime.python is not None
    if other_python:
        made = ", ".join(str(PythonVersion.parse(p).series) for p in rec.python) or "other Pythons"
        reasons.append(f"its conda build was made for Python {made}, and this environment has Python {runtime.python}")
    if not other_python or cuda is None or env is None or not takes(cuda, env, pins_series(rec)):
        needs = f"its conda build needs CUDA {rec.cuda}" if rec.cuda else "its conda build is the CPU one"
        reasons.append(f"{needs}, and this environment holds {held}: one conda environment holds one CUDA")
    return "; ".join(reasons)


def _recipe_note(o: Option, rec: InstallRecipe, row: FrameworkRelease) -> list[str]:
    given = "its recipe gives them" if is_own_build(rec) else "the install page gives them"
    return [*o.notes, f"packages as {given} ({rec.url or row.source})"]


def _beside(o: Option, runtime: Runtime) -> Option:
    """An option for a framework conda did not install, in an environment where conda installed others for the CUDA
    it holds: where that CUDA does not take the option's build (its conda recipe's rule where it has one), the
    option in a new environment."""
    from .plan import Option

    c = o.candidate
    env = runtime.conda_cuda
    if c is None or c.cuda is None or env is None or not any(s.kind in ("pip", "conda") for s in o.steps):
        return o
    rec = c.release.recipe(c.cuda, kind="conda")
    if takes(c.cuda, env, rec is not None and pins_series(rec)):
        return o
    why = (
        f"{c.release.package} {c.release.version}'s CUDA {c.cuda} build cannot share one CUDA with this environment: "
        f"{held_cuda(runtime)}; one conda environment holds one CUDA"
    )
    if any(s.argv[:2] == ("conda", "create") for s in o.steps):  # a new environment already
        return Option(o.title, o.steps, o.weight, o.resolves, [*o.notes, why], o.driver_upgrade, c)
    name = env_name(c.release)
    py = _python(c.release, None, runtime)
    create = [
        Step(
            "conda",
            f"create a conda environment with Python {py}",
            ("conda", "create", "-y", "-n", name, f"python={py}"),
        ),
        Step("conda", "activate it", ("conda", "activate", name)),
    ]
    at = next(i for i, s in enumerate(o.steps) if s.kind in ("pip", "conda"))
    steps = [*o.steps[:at], *create, *o.steps[at:]]
    title = f"{o.title}, in a new conda environment ({why})"
    return Option(title, steps, max(o.weight, WEIGHT_NEW_ENV), o.resolves, o.notes, o.driver_upgrade, c)


def as_conda_line(o: Option) -> Option:
    """An option as a conda line of an environment file takes it: its pip install of the framework as the conda
    install of the same build, from its conda recipe (a channel's own build, PyTorch's channel); where conda has no
    package of that build, the pip install stays, said to belong in the file's ``pip:`` section."""
    from .plan import Option

    c = o.candidate
    if c is None:
        return o
    pips = [s for s in o.steps if s.kind == "pip" and any(_installs(s, n) for n in c.release.names)]
    rec = c.release.recipe(c.cuda, kind="conda")
    if not pips:
        return o
    if rec is None:
        title = f"{o.title} (conda has no package of this build: pip installs it, from the file's pip: section)"
        return Option(title, o.steps, o.weight, o.resolves, o.notes, o.driver_upgrade, c)
    argv = ("conda", "install", "-y", *_channels(rec), *_packages(rec, c, None))
    step = Step("conda", f"install {c.release.package} {c.release.version} with conda", argv)
    steps = _replaced(o.steps, c.release.names, [step])
    return Option(o.title, steps, o.weight, o.resolves, o.notes, o.driver_upgrade, c)


def _replaced(steps: Sequence[Step], names: Sequence[str], by: list[Step]) -> list[Step]:
    """``steps`` with the pip steps that install the framework (any of ``names``) replaced by ``by`` (where the first
    stood); the others (a module to load, a driver, cuDNN put on the library path) stay."""
    out: list[Step] = []
    for s in steps:
        if s.kind == "pip" and any(_installs(s, n) for n in names):
            out.extend(by)
            by = []
        else:
            out.append(s)
    return out + by


def _installs(step: Step, name: str) -> bool:
    try:
        args = step.pip_args()
    except ValueError:
        return False
    for arg in args[1:] if args[:1] == ["install"] else []:
        if arg.startswith("-"):
            continue
        try:
            if canonicalize_name(parse_requirement(arg).name) == canonicalize_name(name):
                return True
        except InvalidRequirement:
            continue
    return False


def _fitting_build(c: Candidate, r: RequirementResult, runtime: Runtime) -> tuple[Candidate, InstallRecipe] | None:
    """A build of the option's release that runs here, whose conda recipe's build the environment's CUDA takes
    (``conda_cuda.takes``), in the environment's Python: the option's own build first, then the release's others the
    requirement solved."""
    env = runtime.conda_cuda
    if env is None or "python" in {k.component for k in c.failures}:
        return None
    same = [x for x in r.candidates if x.release.version == c.release.version and x.release.row == c.release.row]
    for pick in [c, *(x for x in same if x is not c and x.ok)]:
        if pick.failures and pick is not c:
            continue
        own = pick.release.recipe(pick.cuda, kind="conda")
        others = [x for x in pick.release.install if x.kind == "conda" and x is not own and pick.cuda is not None]
        for rec in [own, *others] if own is not None else others:
            cuda = _recipe_cuda(rec)
            if cuda is None or not takes(cuda, env, pins_series(rec)) or not _python_fits(rec, runtime):
                continue
            # another recipe is another build: not one judged not to run here, nor one of another CUDA major (what
            # the driver asks of it is not what it asks of this one)
            if rec is own:  # (the option's own build: what it changes makes it run)
                return pick, rec
            judged = [x for x in same if x.cuda is not None and x.cuda.series == cuda]
            if judged and not any(x.ok for x in judged):
                continue
            if judged or (pick.cuda is not None and pick.cuda.major == cuda.major):
                return pick, rec
    return None


def _whose(rec: InstallRecipe) -> str:
    """`` from defaults`` for a channel's own build (``conda_builds``), else nothing."""
    return f" from {rec.channels[0]}" if is_own_build(rec) else ""


def _recipe_cuda(rec: InstallRecipe) -> CudaVersion | None:
    try:
        return CudaVersion.parse(rec.cuda).series if rec.cuda else None
    except VersionError:
        return None


def _python_fits(rec: InstallRecipe, runtime: Runtime) -> bool:
    if not rec.python or runtime.python is None:
        return True
    return any(PythonVersion.parse(p).series == runtime.python.series for p in rec.python)


def _python(row: FrameworkRelease, rec: InstallRecipe | None, runtime: Runtime) -> PythonVersion | None:
    """The new environment's Python: the recipe's own list where it states one (a channel's own build: the Pythons
    it was made for), else the row's (``env_python``); None where neither names any."""
    if rec is not None and not rec.python and not row.python:
        return None
    if rec is not None and rec.python:
        pythons = sorted(PythonVersion.parse(p).series for p in rec.python)
        have = runtime.python.series if runtime.python else None
        return next((p for p in pythons if have is not None and p >= have), pythons[-1])
    return env_python(row, runtime)


def _channels(rec: InstallRecipe) -> list[str]:
    return [a for ch in rec.channels for a in ("-c", ch)]


def _packages(rec: InstallRecipe, c: Candidate, env: CudaVersion | None) -> list[str]:
    """The recipe's packages: the framework pinned to the release where the page leaves it unpinned (``cupy``: conda
    would install its newest), and its CUDA setting held to the environment's where it installs into one."""
    packages = list(rec.packages)
    if packages and not any(ch in packages[0] for ch in "=<>! ") and not sets_cuda(packages[0]):
        packages[0] = f"{packages[0]}=={c.release.version}"
    if env is not None:
        packages = [f"{p.split('=', 1)[0]}={env}" if sets_cuda(p) and "=" in p else p for p in packages]
    return [*packages, *(f"{n}=={v}" for n, v in rec.companions)]
