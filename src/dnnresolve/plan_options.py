"""The options a plan offers for one requirement: what an ``Option`` is (its steps, its weight: lower is better),
and each kind: keep the release and change the machine around it, its plain wheel, another CUDA build of it,
another release, a conda environment of its own packages. No I/O."""

from __future__ import annotations

from typing import Any

from .compat import MINOR_VERSION_COMPAT
from .driver_levels import DRIVER_BOUND, DriverUpgrade
from .machine import Runtime
from .matrix import Matrix
from .other_releases import WHOLE, caveats, other_releases
from .plansteps import (
    env_name,
    env_python,
    environment_steps,
    install_steps,
    installed_library_steps,
    manual_library_steps,
    module_load_steps,
    module_notes,
    module_search_steps,
)
from .records import field, record
from .solve.checks import evaluate, needs_system_cuda
from .solve.results import Candidate, RequirementResult, Status
from .steps import Step
from .versions import PythonVersion

# Lower is better. Options with equal weight keep the order they were made in.
WEIGHT_NOTHING, WEIGHT_MODULE, WEIGHT_VARIANT, WEIGHT_ENV, WEIGHT_OTHER_RELEASE, WEIGHT_MANUAL, WEIGHT_ROOT = range(7)


@record
class Option:
    title: str
    steps: list[Step]
    weight: int
    resolves: list[str] = field(default_factory=list)  # components this option fixes
    notes: list[str] = field(default_factory=list)
    driver_upgrade: DriverUpgrade | None = None  # the driver it upgrades to, and what each level buys
    candidate: Candidate | None = None  # the build it installs, with its checks and its row's source

    @property
    def needs_root(self) -> bool:
        return any(s.needs_root for s in self.steps)

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "needs_root": self.needs_root,
            "resolves": self.resolves,
            "steps": [s.to_dict() for s in self.steps],
            "notes": self.notes,
            "driver_upgrade": self.driver_upgrade.to_dict() if self.driver_upgrade is not None else None,
        }


def fixes_for_release(
    best: Candidate,
    runtime: Runtime,
    matrix: Matrix,
    failing: set[str],
    installed: bool = False,
    upgrade: DriverUpgrade | None = None,
) -> list[Option]:
    """Keep the requested release; change the machine around it (``upgrade``: the least driver that runs
    ``best``, when the driver stands in its way)."""
    row = best.release
    out: list[Option] = []
    if "os" in failing:
        return out
    if failing & set(DRIVER_BOUND) and upgrade is None:
        return out  # no driver makes a build run on this GPU, and no change of software does: other releases only
    if "platform" in failing:
        return out  # these builds are not for this kind of machine: the check names where its builds are
    if "cudnn_gpu" in failing:
        return out  # its cuDNN does not support this GPU: another release (an older cuDNN) is the way
    if any(c.component == "install" and not c.needed for c in best.failures):
        return out  # no index serves what its install step pins (on any Python): another release, another build
    env_steps = environment_steps(row, runtime) if failing & {"python", "install"} else []
    if env_steps is None:
        return out
    lib_fixes: list[tuple[list[Step], int, list[str], list[str]]] = []
    if failing & {"cuda", "cudnn"}:
        module_steps = module_load_steps(best, runtime, failing)
        if module_steps:
            names = " and ".join(s.argv[-1] for s in module_steps if s.argv[:2] == ("module", "load"))
            lib_fixes.append(
                (
                    module_steps,
                    WEIGHT_MODULE,
                    [f"load {names} (modules available on this machine)"],
                    module_notes(module_steps, runtime),
                )
            )
        elif runtime.modules:  # environment modules, none listed fits: the site may have one by another name
            search = module_search_steps(best, failing)
            if search:
                lib_fixes.append((search, WEIGHT_MANUAL, ["a site module, if `module avail` lists one"], []))
        present = installed_library_steps(best, runtime, failing)
        if present:
            lib_fixes.append((present, WEIGHT_VARIANT, [present[0].description], []))
        manual = manual_library_steps(best, matrix, failing, runtime.os)
        if manual:
            lib_fixes.append((manual, WEIGHT_MANUAL, ["install the libraries by hand"], []))
    else:
        lib_fixes.append(([], WEIGHT_NOTHING, [], []))
    driver_steps: list[Step] = []
    driver_notes: list[str] = []
    if upgrade is not None:
        driver_steps.append(
            Step(
                "manual",
                f"upgrade the NVIDIA driver to >= {upgrade.least} (needs root; then reboot or reload the module)",
                needs_root=True,
            )
        )
        driver_notes = upgrade.notes()
    extras = best.check("extras")
    for steps, weight, words, notes in lib_fixes:
        title_parts = list(words)
        if extras is not None and "extras" in failing:  # the pip step below names them
            title_parts.append(f"install it as {extras.needed}")
        if env_steps:
            title_parts.append(f"a new environment with Python {env_steps[0].argv[-1].split('=')[-1]}")
        if upgrade is not None:
            title_parts.append(f"a driver >= {upgrade.least}" + _upgrade_terms(upgrade))
        install = [] if installed and not env_steps else install_steps(row, best.cuda, with_=pins_of(best))
        all_steps = driver_steps + steps + env_steps + install
        title = (
            f"keep {row.package} {row.version}: " + ", ".join(title_parts) if title_parts else f"install {row.package}"
        )
        w = max(weight, WEIGHT_ENV if env_steps else 0, WEIGHT_ROOT if driver_steps else 0)
        out.append(Option(title, all_steps, w, sorted(failing), [*driver_notes, *notes], upgrade, best))
    conda = _conda_env_option(best, runtime, failing)
    if conda is not None:
        out.append(conda)
    return out


def plain_form(best: Candidate, runtime: Runtime, matrix: Matrix) -> list[Option]:
    """The release asked, as its plain wheel, where the form with an extra cannot be installed (pip refuses
    ``tensorflow[and-cuda]==2.15.0``: its extra pins a tensorrt no index serves): the plain wheel loads CUDA and
    cuDNN from the system, so it runs where the system's fit (else the fixes that bring them)."""
    if not any(c.component == "install" and not c.needed for c in best.failures) or best.cuda is None:
        return []
    row = best.release
    whole = next((x for x in matrix.releases(row.package) if x.row == row.row), row).for_version(row.version)
    plain = whole.without_extras()
    if plain is None or best.cuda not in plain.cuda:
        return []
    cand = Candidate(plain, best.cuda, evaluate(plain, best.cuda, runtime, matrix))
    failing = {c.component for c in cand.failures}
    if failing - {"cuda", "cudnn"}:
        return []
    if failing:
        return fixes_for_release(cand, runtime, matrix, failing)
    libs = [c for c in cand.checks if c.component in ("cuda", "cudnn")]
    names = {"cuda": "CUDA", "cudnn": "cuDNN"}
    known = all(c.status is Status.OK and c.found for c in libs)
    if known:
        title = " and ".join(f"{names[c.component]} {c.found}" for c in libs)
        title = f"keep {row.package} {row.version} as its plain wheel: it loads {title} from the system"
    else:  # the system's CUDA or cuDNN is not known: after the releases that bring their own
        title = " and ".join(c.needed if c.component == "cuda" else f"cuDNN ({c.needed})" for c in libs)
        title = f"keep {row.package} {row.version} as its plain wheel, where the system has {title}"
    warned = [c.component for c in cand.checks if c.status is Status.WARN and not c.gap]
    if warned:
        title += f"; read the warnings first ({', '.join(warned)})"
    option = install_option(cand, runtime, title, WEIGHT_VARIANT if known else WEIGHT_MANUAL)
    option.notes = [c.reason for c in cand.checks if c.status is Status.WARN and not c.gap]
    return [option]


def _upgrade_terms(upgrade: DriverUpgrade) -> str:
    """How the least driver runs the build the option installs: " (the CUDA 12.6 build, through minor-version
    compatibility)"; nothing when that is full support of the release's only build."""
    cand = upgrade.candidate
    level = next((x for x in upgrade.levels if x.driver == upgrade.least and cand.cuda in x.cuda), None)
    compat = level is not None and level.how == MINOR_VERSION_COMPAT
    build = f"the CUDA {cand.cuda} build" if cand.cuda is not None and len(cand.release.cuda) > 1 else ""
    terms = [t for t in (build, "through minor-version compatibility" if compat else "") if t]
    return f" ({', '.join(terms)})" if terms else ""


def _conda_env_option(best: Candidate, runtime: Runtime, failing: set[str]) -> Option | None:
    """The release's own conda packages (from its install page) in a new environment, when the
    environment is what needs changing (the Python) and the packages bring their CUDA libraries.

    Only where the recipe states the Pythons its channel has builds for: a plan never names a conda
    package that may not exist for that Python.
    """
    row = best.release
    rec = row.recipe(best.cuda, kind="conda")
    if rec is None or not rec.python or not failing <= {"python", "cuda", "cudnn"} or "python" not in failing:
        return None
    if failing & {"cuda", "cudnn"} and not any(
        p.startswith(("cudatoolkit", "pytorch-cuda", "cuda-version", "cudnn")) for p in rec.packages
    ):
        return None
    have = runtime.python.series if runtime.python else None
    pythons = sorted(PythonVersion.parse(p).series for p in rec.python)
    py = next((p for p in pythons if have is not None and p > have), pythons[-1])
    name = env_name(row)
    packages = list(rec.packages) + [f"{n}=={v}" for n, v in rec.companions]
    argv = ["conda", "create", "-y", "-n", name]
    for channel in rec.channels:
        argv += ["-c", channel]
    argv += [f"python={py}", *packages]
    steps = [
        Step("conda", f"create a conda environment with Python {py} and the official conda packages", tuple(argv)),
        Step("conda", "activate it", ("conda", "activate", name)),
    ]
    title = f"keep {row.package} {row.version}: a conda environment with Python {py} and its conda packages"
    return Option(
        title, steps, WEIGHT_ENV, sorted(failing), [f"packages as the install page gives them ({row.source})"]
    )


def other_variants(r: RequirementResult, best: Candidate, runtime: Runtime) -> list[Option]:
    """Another CUDA variant of the same release (torch cu118 instead of cu121 for an older driver)."""
    out = []
    for c in r.requested:
        if c is best or not c.ok or c.cuda is None:
            continue
        option = install_option(
            c, runtime, f"use the CUDA {c.cuda} build of {c.release.package} {c.release.version}", WEIGHT_VARIANT
        )
        option.notes = [k.reason for k in c.checks if k.doubt]  # (it may lack code for this GPU)
        out.append(option)
    return out[:2]


def other_forms(best: Candidate, runtime: Runtime, matrix: Matrix) -> list[Option]:
    """The release asked in another form its extras name, where the asked form cannot run (``jax[cuda12]==0.11.1``
    for ``jax[cuda13]==0.11.1`` on a GPU CUDA 13 no longer builds for): each other GPU form with a build that runs
    here, the newest CUDA first, as an option of its own (as ``other_variants`` offers torch's other CUDA builds)."""
    row = best.release
    if not row.form:  # asked without extras: the row's own variants are the candidates already
        return []
    # only where the GPU or the driver stands against the asked form: a system library it loads can be fixed in it
    if not {c.component for c in best.failures} & {"compute_capability", "cudnn_gpu", "driver"}:
        return []
    whole = next((x for x in matrix.releases(row.package) if x.row == row.row), row).for_version(row.version)
    forms = {rec.extras for rec in whole.install if rec.kind == "pip" and rec.cuda and rec.extras}
    out = []
    for form in sorted(forms - {row.form}, key=sorted):
        shaped = whole.with_extras(form)
        for cuda in sorted(shaped.cuda, reverse=True):
            cand = Candidate(shaped, cuda, evaluate(shaped, cuda, runtime, matrix))
            # (a form that loads the system's CUDA or cuDNN is offered only where the system's are known to fit)
            unknown = any(c.component in ("cuda", "cudnn") and c.status is Status.UNKNOWN for c in cand.checks)
            if not cand.ok or unknown:
                continue
            title = f"use the CUDA {cuda} build of {row.package} {row.version}, {row.package}[{','.join(sorted(form))}]"
            title += ": it runs with what this machine has"
            said = caveats(cand, runtime, matrix)
            if said:
                title += ", " + " and ".join(said)
            warned = [c for c in cand.checks if c.status is Status.WARN and not c.gap]
            option = install_option(cand, runtime, title, WEIGHT_VARIANT)
            option.notes = [c.reason for c in warned]
            out.append(option)
            break
    return out[:2]


def other_release_options(r: RequirementResult, runtime: Runtime, matrix: Matrix) -> list[Option]:
    """Each release ``other_releases`` offers as an option of its own, its caveats in the title."""
    out = []
    for offer in other_releases(r, runtime, matrix):
        c = offer.candidate
        row = c.release
        title = f"use {row.package} {row.version} instead"
        if offer.new_env:
            title += f", in a new environment with Python {env_python(row, runtime)}"
        title += ": it runs with what this machine has"
        if offer.caveats:
            title += ", " + " and ".join(offer.caveats)
        if offer.kind == WHOLE:
            title += "; its cuDNN supports this GPU"
        option = install_option(c, runtime, title, WEIGHT_OTHER_RELEASE)
        option.notes = [w.reason for w in offer.warnings]
        if offer.new_env:
            env_steps = environment_steps(row, runtime)
            if env_steps is None:
                continue
            option.steps = env_steps + option.steps
        out.append(option)
    return out


def pins_of(c: Candidate) -> tuple[str, ...]:
    """The requirements the candidate's warnings ask to install beside it (``nvidia-cudnn-cu12<9.11``)."""
    return tuple(check.requires for check in c.checks if check.requires)


def install_option(c: Candidate, runtime: Runtime, title: str, weight: int) -> Option:
    active = runtime.active_cudnn
    cudnn = active.version if active is not None and needs_system_cuda(c.release) else None
    steps = install_steps(c.release, c.cuda, cudnn, pins_of(c))
    if steps[0].kind == "manual":
        title += ", but not with pip"
    return Option(title, steps, weight, candidate=c)
