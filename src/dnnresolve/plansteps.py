"""The steps of a plan's options, as a user pastes them: the pip command that installs a build (or where to
download a build that is not on PyPI, and the command for the file), a new environment, `module load` lines for
the modules a machine offers (or `module avail` where none fits), a cuDNN already on disk, and CUDA and cuDNN by
hand. Each step is one command, or a short instruction with no command inside it. No I/O."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .compat import cudnn_compatible, cudnn_rule_text
from .machine import Runtime
from .matrix import Matrix
from .model import FrameworkRelease, InstallRecipe
from .modulenames import ModuleOffer, read_module
from .solve.checks import cudnn_rule_for, installed_cudnn_choices, system_cuda_ok
from .solve.results import Candidate
from .specs import InvalidRequirement, parse_requirement
from .steps import Step
from .versions import CudaVersion, CudnnVersion, PythonVersion


def _recipe(row: FrameworkRelease, cuda: CudaVersion | None, cudnn: CudnnVersion | None) -> InstallRecipe | None:
    """The pip recipe of this variant; of a variant built for several cuDNN releases (jaxlib 0.3.0's CUDA 11
    wheels for cuDNN 8.2 and 8.0.5), the newest build the cuDNN in use (``cudnn``) serves."""
    rec = row.recipe(cuda)
    if rec is None or cudnn is None or not rec.cudnn:
        return rec
    rule = cudnn_rule_for(row)
    fits = [
        r
        for r in row.install
        if r.kind == "pip" and r.cuda == rec.cuda and any(cudnn_compatible(b, cudnn, rule) for b in r.cudnn)
    ]
    if not fits or rec in fits:
        return rec
    return max(fits, key=lambda r: max(r.cudnn))


def install_steps(
    row: FrameworkRelease, cuda: CudaVersion | None, cudnn: CudnnVersion | None = None, with_: tuple[str, ...] = ()
) -> list[Step]:
    """The steps that install this build: one pip command, or for a build that is a download the install page
    links (torch 0.4.1's Windows wheels, onnxruntime-gpu 1.17's CUDA 12 build), where to get the wheel and the
    command that installs it once it is here. ``with_``: requirements the pip command installs beside it (a
    cuDNN wheel held below a release whose code the GPU is too old for)."""
    rec = _recipe(row, cuda, cudnn)
    plain = row.on_pypi and row.cuda_default is not None and cuda is not None and cuda.series == row.cuda_default.series
    manual = row.recipe(cuda, "manual") if rec is None and not plain else None
    if manual is None or not manual.url:
        return [_pip_step(row, cuda, cudnn, with_)]
    build = f"CUDA {manual.cuda} build" if manual.cuda else "CPU build"
    said = f" ({manual.note})" if manual.note else ""
    # the file itself where the page links one, else the pattern of its name (PEP 427) for the shell to expand
    linked = manual.url.rsplit("/", 1)[-1]
    wheel = linked if linked.endswith(".whl") else f"{re.sub(r'[-_.]+', '_', row.package)}-{row.version}-*.whl"
    return [
        Step(
            "manual",
            f"download the {row.package} {row.version} wheel for your Python ({build}) from {manual.url}{said}",
        ),
        Step("shell", "install that file", ("python", "-m", "pip", "install", wheel), template=True),
    ]


def _pip_step(
    row: FrameworkRelease, cuda: CudaVersion | None, cudnn: CudnnVersion | None = None, with_: tuple[str, ...] = ()
) -> Step:
    rec = _recipe(row, cuda, cudnn)
    argv = ["python", "-m", "pip", "install"]
    if rec is None and not row.on_pypi:
        return Step(
            "manual",
            f"{row.package} {row.version} is no longer on PyPI and the matrix knows no other source: "
            "build it from source, or choose a release pip can still install",
        )
    if rec is None:
        argv += [f"{row.package}=={row.version}", *with_]
        return Step("pip", f"install {row.package} {row.version}", tuple(argv))
    pinned = _pinned(rec.requirement, row)
    argv.append(pinned)
    argv.extend(f"{name}=={version}" for name, version in rec.companions)
    argv.extend(with_)
    if rec.index_url:
        argv += ["--index-url", rec.index_url]
    if rec.extra_index_url:
        argv += ["--extra-index-url", rec.extra_index_url]
    if rec.find_links:
        argv += ["--find-links", rec.find_links]
    what = f"install {rec.requirement}"
    if row.through(rec.requirement) not in (None, rec.requirement):  # another package's release brings this one
        what = f"install {row.package} {row.version} through {pinned}, whose extra pins it"
    what += f" (CUDA {rec.cuda} build)" if rec.cuda else ""
    return Step("pip", what, tuple(argv))


def _pinned(requirement: str, row: FrameworkRelease) -> str:
    """An install page's ``jax[cuda12]`` pinned to the release the plan is about: ``jax[cuda12]==0.4.30``, or to the
    release whose extra pins it (``FrameworkRelease.through``)."""
    through = row.through(requirement)
    if through is not None and through != requirement:
        return through
    try:
        req = parse_requirement(requirement)
    except InvalidRequirement:
        return requirement
    if req.specifier or req.url:
        return requirement
    return f"{requirement}=={row.version}"


def env_python(row: FrameworkRelease, runtime: Runtime) -> PythonVersion:
    """The Python with wheels closest to the one in use: the oldest newer one, else the newest older one."""
    pythons = sorted(p.series for p in row.python)
    rec = row.recipe(None) or next((r for r in row.install if r.kind == "pip"), None)
    if rec is not None and rec.python:
        allowed = {PythonVersion.parse(p).series for p in rec.python}
        pythons = [p for p in pythons if p in allowed] or pythons
    have = runtime.python.series if runtime.python else None
    if have is not None:
        newer = [p for p in pythons if p > have]
        if newer:
            return newer[0]
    return pythons[-1]


def environment_steps(row: FrameworkRelease, runtime: Runtime) -> list[Step] | None:
    """A conda environment with the newest Python the release has wheels for."""
    if not row.python:
        return None
    py = env_python(row, runtime)
    name = env_name(row)
    return [
        Step(
            "conda",
            f"create a conda environment with Python {py}",
            ("conda", "create", "-y", "-n", name, f"python={py}"),
        ),
        Step("conda", "activate it", ("conda", "activate", name)),
    ]


def env_name(row: FrameworkRelease) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "-", f"{row.package}-{row.version}")


def module_load_steps(best: Candidate, runtime: Runtime, failing: set[str]) -> list[Step]:
    """`module load` lines for a CUDA and a cuDNN the release accepts, from the modules this machine offers."""
    row = best.release
    offers = [o for o in (read_module(m) for m in runtime.modules) if o is not None]
    if not offers:
        return []
    build_cuda = best.cuda
    steps: list[Step] = []
    cuda_offer: ModuleOffer | None = None
    if "cuda" in failing and build_cuda is not None:
        cuda_offer = _pick(o for o in offers if o.component == "cuda" and o.cuda and system_cuda_ok(build_cuda, o.cuda))
        if cuda_offer is None:
            return []
    cudnn_offer: ModuleOffer | None = None
    builds = row.cudnn_for(build_cuda)
    if "cudnn" in failing and builds:
        rule = cudnn_rule_for(row)
        target_cuda = cuda_offer.cuda if cuda_offer else (runtime.cuda[0].version if runtime.cuda else build_cuda)
        cudnn_offer = _pick(
            o
            for o in offers
            if o.component == "cudnn"
            and o.cudnn is not None
            and any(cudnn_compatible(b, o.cudnn, rule) for b in builds)
            and (o.cuda is None or target_cuda is None or o.cuda.series == target_cuda.series)
        )
        if cudnn_offer is None:
            return []
    for offer in (cuda_offer, cudnn_offer):
        if offer is None:
            continue
        # Lmod's one-name rule swaps a loaded module of the same name on `module load`.
        steps.append(Step("module", f"load {offer.module.full}", ("module", "load", offer.module.full)))
    return steps


def module_search_steps(best: Candidate, failing: set[str]) -> list[Step]:
    """On a machine with environment modules where none listed fits: `module avail` for each library the build
    needs, then `module load` by the name most sites give it (hidden modules and other module trees are not
    listed; explain gives the same lines)."""
    cuda = best.cuda
    steps = []
    if "cuda" in failing and cuda is not None:
        steps += [
            Step("module", "list the CUDA modules of the site", ("module", "avail", "cuda")),
            Step("module", f"load one of CUDA {cuda}, by the name the list gives", ("module", "load", f"cuda/{cuda}")),
        ]
    builds = best.release.cudnn_for(cuda)
    if "cudnn" in failing and builds:
        build = max(builds)
        wanted = cudnn_rule_text(build, cudnn_rule_for(best.release))
        steps += [
            Step("module", "list the cuDNN modules of the site", ("module", "avail", "cudnn")),
            Step(
                "module",
                f"load one of {wanted}, by the name the list gives",
                ("module", "load", f"cudnn/{build.series}"),
            ),
        ]
    return steps


def module_notes(steps: Sequence[Step], runtime: Runtime) -> list[str]:
    """Tcl environment-modules 3 refuses a second version of a loaded module: say how to swap there."""
    notes = []
    loaded = {m.name.lower(): m for m in runtime.modules if m.loaded}
    for s in steps:
        if s.argv[:2] != ("module", "load"):
            continue
        name = s.argv[2].split("/")[0].lower()
        old = loaded.get(name)
        if old is not None and old.full != s.argv[2]:
            notes.append(
                f"Lmod swaps out {old.full} by itself; with Tcl environment modules run: "
                f"module swap {old.full} {s.argv[2]}"
            )
    return notes


def _pick(offers: Any) -> ModuleOffer | None:
    """Prefer a module that is not loaded yet, then the newest version."""
    items: list[ModuleOffer] = list(offers)
    if not items:
        return None
    return max(items, key=lambda o: (not o.module.loaded, o.cudnn or (0,), o.cuda or (0,)))


def installed_library_steps(best: Candidate, runtime: Runtime, failing: set[str]) -> list[Step]:
    """A cuDNN the release accepts is on disk already but another one loads first: put it first."""
    row = best.release
    builds = row.cudnn_for(best.cuda)
    if failing & {"cuda", "cudnn"} != {"cudnn"} or not builds:
        return []
    rule = cudnn_rule_for(row)
    choices = [c for c in installed_cudnn_choices(runtime, builds, rule) if c.lib_dir and not c.loads_first]
    if not choices:
        return []
    pick = max(choices, key=lambda c: c.version)
    if runtime.os == "windows":  # the loader searches PATH for cudnn64_*.dll
        return [Step("manual", f"use the cuDNN {pick.version} already installed in {pick.path}: put {pick.lib_dir} "
                     "first on PATH")]  # fmt: skip
    return [
        Step(
            "shell",
            f"use the cuDNN {pick.version} already installed in {pick.path}",
            env=(("LD_LIBRARY_PATH", f"{pick.lib_dir}:$LD_LIBRARY_PATH"),),
        )
    ]


CUDA_ARCHIVE = "https://developer.nvidia.com/cuda-toolkit-archive"
CUDNN_ARCHIVE = "https://developer.nvidia.com/rdp/cudnn-archive"


def manual_library_steps(best: Candidate, matrix: Matrix, failing: set[str], os_name: str) -> list[Step]:
    """CUDA and cuDNN by hand, without root: each download a short instruction, each command a step of its own."""
    row = best.release
    steps: list[Step] = []
    cuda = best.cuda
    if "cuda" in failing and cuda is not None:
        steps += _toolkit_steps(cuda, os_name)
    if "cudnn" in failing and row.cudnn_for(cuda):
        build = max(row.cudnn_for(cuda))
        rule = cudnn_rule_for(row)
        found = None
        for rel in matrix.cudnn_newest_first(lambda v: cudnn_compatible(build, v, rule)):
            if cuda is not None and not rel.supports_cuda(cuda):
                continue
            archive = next(
                (a for a in rel.archives if a.os == os_name and (cuda is None or _arch_cuda_ok(a.cuda, cuda))), None
            )
            if archive is not None:
                found = (rel.version, archive.file)
                break
        what = f"cuDNN for CUDA {cuda} ({cudnn_rule_text(build, rule)})"
        if found is not None:
            what = f"{found[1]} (cuDNN {found[0]} for CUDA {cuda})"
        if os_name == "windows" or found is None:
            where = (
                "its bin folder (the one holding cudnn64_*.dll) first on PATH"
                if os_name == "windows"
                else "the folder holding libcudnn.so.* first on LD_LIBRARY_PATH"
            )
            return [
                *steps,
                Step("manual", f"download {what} from {CUDNN_ARCHIVE}"),
                Step("manual", f"unpack it, and put {where}"),
            ]
        file = found[1]
        steps += [
            Step("manual", f"download {what} from {CUDNN_ARCHIVE}"),
            Step("shell", "make a folder for it", ("mkdir", "-p", "$HOME/cudnn"), template=True),
            Step("shell", "unpack it there", ("tar", "-xf", file, "-C", "$HOME/cudnn"), template=True),
            Step(
                "shell",
                "put it first on the library path",
                env=(("LD_LIBRARY_PATH", f"$HOME/cudnn/{_cudnn_lib_dir(file)}:$LD_LIBRARY_PATH"),),
            ),
        ]
    return steps


def _toolkit_steps(cuda: CudaVersion, os_name: str) -> list[Step]:
    """The CUDA toolkit from NVIDIA's archive: on Windows its installer; on Linux its runfile, the toolkit alone
    under $HOME (no root, no driver), then on the library path."""
    if os_name == "windows":
        return [Step("manual", f"install the CUDA {cuda} toolkit with its Windows installer, from {CUDA_ARCHIVE}")]
    home = f"$HOME/cuda-{cuda}"
    return [
        Step("manual", f"download the CUDA {cuda} runfile for Linux from {CUDA_ARCHIVE}"),
        Step(
            "shell",
            f"install the toolkit alone under {home} (no root needed)",
            ("sh", f"cuda_{cuda}*_linux.run", "--silent", "--toolkit", f"--toolkitpath={home}"),
            template=True,
        ),
        Step("shell", "put it first on the library path", env=(("LD_LIBRARY_PATH", f"{home}/lib64:$LD_LIBRARY_PATH"),)),
    ]


def _cudnn_lib_dir(file: str) -> str:
    """Where an NVIDIA cuDNN archive for Linux keeps its libraries once unpacked: the tar.xz archives of 8.3 on
    (cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz) unpack to a folder of their own name with lib/; the
    older .tgz files (cudnn-8.0-linux-x64-v5.1.tgz) to cuda/lib64."""
    for suffix in (".tar.xz", ".tar.gz"):
        if file.endswith("-archive" + suffix):
            return f"{file.removesuffix(suffix)}/lib"
    return "cuda/lib64"


def _arch_cuda_ok(text: str, cuda: CudaVersion) -> bool:
    try:
        v = CudaVersion.parse(text)
    except ValueError:
        return False
    return v.names_build(cuda)
