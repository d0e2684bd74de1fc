"""Installed frameworks that run without their CUDA build, and the planner's commands for it. Pure: no I/O.

Four cases, each read from the installed packages' metadata and the matrix's install recipes:
- a CPU build by its local version label (torch 2.1.0+cpu);
- a release whose plain install is its CPU build (jax from 0.4.30: a CPU recipe without extras) installed
  without the CUDA plugin its GPU form adds (jax-cuda12-plugin), or a CUDA jaxlib;
- a release that runs only through an extra, even as its CPU build (jax before 0.4.30: ``jax[cpu]``), installed
  without the companion that extra brings (jaxlib): it does not run at all;
- a CUDA plugin of another release than the core library it is built with (jax-cuda12-plugin 0.5.0 beside
  jaxlib 0.4.35): it does not load, and the framework runs on the CPU.
``doctor`` reports them; ``explain`` puts the command first for its messages of kind no_cuda_build ("Torch not
compiled with CUDA enabled", JAX's "CUDA-enabled jaxlib is not installed", a plugin's failed initialize).
"""

from __future__ import annotations

import re

from .machine import InstalledPackage, Runtime
from .matrix import Matrix
from .pkgname import canonicalize_name
from .plan import make_plan
from .records import record, replace
from .solve import solve_requirement
from .solve.results import SolveResult
from .specs import InvalidRequirement, parse_requirement
from .steps import Step
from .versions import parse_build_tag

CPU_BUILD = "cpu-build"
NO_RUNTIME = "no-runtime"
PLUGIN_MISMATCH = "plugin-mismatch"

# JAX's CUDA backend from 0.4.30 on: a plugin package per CUDA major (jax-cuda12-plugin, jax-cuda13-plugin), built
# with jaxlib and pinned to jaxlib's release by jax's extras (jax 0.6.1[cuda12]: jaxlib and the plugin ==0.6.1).
_PLUGINS = {"jax": ("jaxlib", re.compile(r"jax-cuda\d+-plugin"))}


def is_cuda_plugin(package: str, name: str) -> bool:
    """Whether ``name`` is a CUDA plugin package of the framework ``package`` (jax-cuda12-plugin of jax)."""
    plugins = _PLUGINS.get(package, ("", None))[1]
    return plugins is not None and plugins.fullmatch(canonicalize_name(name)) is not None


@record(frozen=True)
class BuildGap:
    package: str  # as installed
    version: str  # as installed, local label included: "2.1.0+cpu"
    kind: str  # CPU_BUILD, NO_RUNTIME or PLUGIN_MISMATCH
    reason: str
    steps: tuple[Step, ...] = ()  # the pip steps that install the CUDA build of the same release
    companion: str = ""  # the package installed with it whose state it shares (jaxlib beside jax)

    @property
    def commands(self) -> str:
        """The steps as one line, for a fix: the installed CPU build is removed first where pip would keep it."""
        if not self.steps:
            return ""
        # pip keeps an installed 2.1.0+cpu for torch==2.1.0: it has to go first
        first = f"`pip uninstall -y {self.package}`; then " if "+" in self.version else ""
        return first + "; then ".join(f"`{s.shell}`" for s in self.steps)


def build_gaps(runtime: Runtime, matrix: Matrix) -> list[BuildGap]:
    """Every installed framework of ``runtime`` that runs without its CUDA build (its own name, not an alias)."""
    out = []
    for p in runtime.packages:
        gap = build_gap(p, runtime, matrix)
        if gap is not None:
            out.append(gap)
    return out


def build_gap(installed: InstalledPackage, runtime: Runtime, matrix: Matrix) -> BuildGap | None:
    name = canonicalize_name(installed.name)
    tag = parse_build_tag(installed.version)
    release = installed.version.split("+")[0]
    if tag.is_cuda:
        return None
    try:
        rows = matrix.find(name, f"=={release}")
    except ValueError:
        return None
    row = next((r for r in reversed(rows) if r.package == name), None)
    if row is None:
        return None
    others = {canonicalize_name(p.name): p for p in runtime.packages}
    companion = next((others[a] for a in row.aliases if a in others), None)  # jaxlib beside jax
    cuda_companion = companion is not None and parse_build_tag(companion.version).is_cuda
    core = _PLUGINS.get(name, ("", None))[0]
    plugin = next((p for n, p in others.items() if is_cuda_plugin(name, n)), None)
    lib = others.get(core)
    cpu = row.recipe(None)
    if tag.kind == "cpu":
        reason = f"{name} {installed.version} is a CPU-only build (its version label +{tag.label})"
        kind = CPU_BUILD
    elif not row.runs_without_extras and companion is None:
        assert cpu is not None
        missing = row.aliases[0] if row.aliases else "its compiled part"
        reason = (
            f"{name} {installed.version} is installed without {missing}: before it was a dependency, {missing} "
            f"came only with an extra ({cpu.requirement} for the CPU build), so `import {name}` fails"
        )
        kind = NO_RUNTIME
    elif plugin is not None and lib is not None and plugin.version != lib.version:
        reason = (
            f"{name} {installed.version}'s CUDA plugin, {plugin.name} {plugin.version}, is not of its {core}'s "
            f"release ({lib.version}): {name} cannot load it ('Jax plugin configuration error') and runs on the CPU"
        )
        kind = PLUGIN_MISMATCH
    elif cpu is not None and row.without_extras() is None and not (cuda_companion or plugin):
        # every GPU form is an extra (jax[cuda12]), so a plain install is the CPU build
        what = f"{companion.name} {companion.version}" if companion is not None else f"the plain {name}"
        reason = f"{name} {installed.version} is its CPU build ({what}, no CUDA plugin or CUDA build installed)"
        kind = CPU_BUILD
    else:
        return None
    if kind == CPU_BUILD and runtime.gpus:
        reason += f": the {runtime.gpus[0].name} goes unused"
    steps = tuple(cuda_build_steps(name, release, runtime, matrix))
    return BuildGap(installed.name, installed.version, kind, reason, steps, companion.name if companion else "")


def cuda_build_steps(package: str, release: str, runtime: Runtime, matrix: Matrix) -> list[Step]:
    """The planner's pip steps for the CUDA build of ``package==release`` on this machine, judged as if nothing
    were installed (the installed build is the problem), among the release's CUDA builds only."""
    try:
        req = parse_requirement(f"{package}=={release}")
    except InvalidRequirement:
        return []
    bare = replace(runtime, packages=[])
    result = solve_requirement(req, bare, matrix)
    result.candidates = [c for c in result.candidates if c.cuda is not None]
    options = make_plan(SolveResult([result]), bare, matrix).requirements[0].options
    return [s for s in options[0].steps if s.kind == "pip"] if options else []
