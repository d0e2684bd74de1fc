"""Which CUDA a conda build takes from its environment, and which pip package a conda package of one name per CUDA
stands for: the rules ``check`` (environment files) and ``plan`` (a detected conda environment) share. Pure: no I/O.

One conda environment holds one CUDA (its ``cudatoolkit`` / ``cuda-version`` / ``pytorch-cuda``); a framework's
conda build names the CUDA it takes by its dependencies:

- conda-forge's builds made with ``nvcc`` take ``cudatoolkit X.Y|X.Y.*`` before CUDA 11.2 and
  ``cudatoolkit >=X.Y,<X+1`` from 11.2 (the compiler's run_exports, conda-forge/nvcc-feedstock 9ce6d9a, "Use CUDA
  Enhanced Compatibility for 11.2+"); their CUDA 12 and 13 builds take ``cuda-version >=X.0,<X+1`` (the
  cuda-version feedstock's scheme for downstream packages; cupy-feedstock's recipes since 12.0.0 pin it so, its
  CUDA 11 builds ``cuda-version >=11.2,<12``);
- a recipe that names its CUDA by a package of its own (``cudatoolkit=11.3``, ``pytorch-cuda=12.1``, ``cuda92``:
  PyTorch's channel) takes that series only.

So before CUDA 11.2 a build needs its exact series; from 11.2 on the same major, unless its recipe pins the series.

An environment file (environment.yml) describes a new environment (``conda env create -f``): its lines are judged on
the machine (driver, GPUs, OS, the system's toolkits) with none of the active environment's contents
(``new_environment``); its own ``cudatoolkit`` / ``cuda-version`` / ``pytorch-cuda`` pins set its CUDA.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from .machine import InstalledPackage, Runtime
from .model import InstallRecipe
from .versions import CudaVersion, VersionError, parse_cuda_tag

NVCC_SOURCE = "https://github.com/conda-forge/nvcc-feedstock/commit/9ce6d9a3b3fc6e1d29362dbe8b39a98e464e2a90"
CUPY_SOURCE = "https://github.com/conda-forge/cupy-feedstock/blob/main/recipe/meta.yaml"
RANGE_FROM = CudaVersion((11, 2))  # the first CUDA whose conda-forge builds take any later minor of their major

# the packages by which a recipe pins its CUDA series (a feature package, cuda92, is matched by shape)
_SERIES_PINS = ("cudatoolkit", "pytorch-cuda")
_FEATURE = re.compile(r"cuda\d{2,3}")

# conda names that stand for one pip package per CUDA: conda-forge builds ``cupy`` once per CUDA (major), and the
# build conda installs is the one the environment's cuda-version / cudatoolkit takes; pip publishes a package per
# CUDA instead (cupy-cuda92 ... cupy-cuda117 per series, cupy-cuda11x / 12x / 13x per major)
PER_CUDA = {"cupy": re.compile(r"cupy-cuda(\d{2,3}x?)")}


def takes(build: CudaVersion, env: CudaVersion, pinned: bool = False) -> bool:
    """Whether a conda build made for CUDA ``build`` installs into an environment held to CUDA ``env``; ``pinned``:
    its recipe names the series by a package (``cudatoolkit=11.3``, ``pytorch-cuda=12.1``)."""
    b, e = build.series, env.series
    if b == e:
        return True
    return not pinned and b >= RANGE_FROM and e >= RANGE_FROM and e.major == b.major


def share(a: CudaVersion, b: CudaVersion, pinned_a: bool = False, pinned_b: bool = False) -> bool:
    """Whether one environment's CUDA serves a build of ``a`` and one of ``b`` (the newer of the two does, if any)."""
    return any(takes(a, e, pinned_a) and takes(b, e, pinned_b) for e in (a, b))


def pins_series(recipe: InstallRecipe) -> bool:
    """Whether a conda recipe names its CUDA series by a package of its own (PyTorch's channel does)."""
    return any(_name(p) in _SERIES_PINS or _FEATURE.fullmatch(_name(p)) for p in recipe.packages)


def sets_cuda(spec: str) -> bool:
    """Whether a package of a recipe sets the environment's CUDA (``cuda-version=11.8``, ``cudatoolkit=11.3``)."""
    name = _name(spec)
    return name in (*_SERIES_PINS, "cuda-version") or bool(_FEATURE.fullmatch(name))


def per_cuda_package(
    conda_name: str, cuda: CudaVersion, packages: Iterable[str], has_release: Callable[[str], bool]
) -> str | None:
    """The matrix package a conda package of one name per CUDA stands for in an environment held to ``cuda``: the
    package of that CUDA series (cupy-cuda113) where it has the release (``has_release``), else the one of its
    major (cupy-cuda11x); one without the release where none has it (its finding then says so); None for other
    names or where no package is of that CUDA."""
    pattern = PER_CUDA.get(conda_name.lower())
    if pattern is None:
        return None
    ranked: list[tuple[bool, bool, str]] = []
    for package in packages:
        m = pattern.fullmatch(package)
        if m is None:
            continue
        try:
            tag = parse_cuda_tag(m.group(1))
        except VersionError:
            continue
        if tag.names_build(cuda):
            ranked.append((not has_release(package), tag.is_major_only, package))
    return min(ranked)[2] if ranked else None


def held_cuda(runtime: Runtime) -> str:
    """``dl holds CUDA 11.3 (conda cudatoolkit 11.3.1), which conda's torch 1.12.1 (conda, CUDA 11.3 build) was
    built for``: the CUDA an active conda environment holds, and the frameworks conda installed there for it."""
    name = runtime.conda_env or runtime.conda_prefix
    what = f"{name} holds CUDA {runtime.conda_cuda} ({runtime.sources.get('conda_cuda', 'conda')})"
    built = [p.describe() for p in holders(runtime)]
    if built:
        what += f", which conda's {' and '.join(built)} {'was' if len(built) == 1 else 'were'} built for"
    return what


def holders(runtime: Runtime) -> list[InstalledPackage]:
    """The frameworks conda installed in the active environment, where it is held to a CUDA: what another framework
    of another CUDA would break (none: the environment is the user's to change)."""
    if not runtime.conda_prefix or runtime.conda_cuda is None:
        return []
    return [p for p in runtime.packages if p.by_conda]


def new_environment(target: Runtime) -> Runtime:
    """The machine as a new conda environment sees it: the target without what its active environment holds (its
    packages, its CUDA pin, the CUDA / cuDNN / Python inside its prefix). Pure: a copy."""
    import copy

    runtime = copy.deepcopy(target)
    prefix = runtime.conda_prefix.rstrip("/")

    def inside(path: str) -> bool:
        return bool(prefix) and (path == prefix or path.startswith(prefix + "/"))

    runtime.packages = []
    runtime.cuda = [c for c in runtime.cuda if not inside(c.path)]
    runtime.cudnn = [c for c in runtime.cudnn if not inside(c.path)]
    if inside(runtime.python_executable) or inside(runtime.sources.get("python", "")):
        runtime.python, runtime.python_executable = None, ""
        runtime.sources.pop("python", None)
    for key in ("conda", "conda_cuda"):
        runtime.sources.pop(key, None)
    runtime.conda_prefix = runtime.conda_env = ""
    runtime.conda_cuda = None
    return runtime


def _name(spec: str) -> str:
    return re.split(r"[=<>! ]", spec, maxsplit=1)[0].lower()
