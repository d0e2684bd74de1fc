"""Plain data: what a machine provides (its driver, GPUs, CUDA and cuDNN installs, Python packages, environment
modules), detected, read from a profile or given with flags. No I/O here."""

from __future__ import annotations

from .indexes import PipContext
from .records import field, record
from .versions import (
    BuildTag,
    ComputeCapability,
    CudaVersion,
    CudnnVersion,
    DriverVersion,
    PythonVersion,
    parse_build_tag,
    parse_conda_build,
)

MATRIX_GPU_TABLE = "the matrix's GPU table"  # where a compute capability no source gave comes from


@record(frozen=True)
class Gpu:
    name: str
    compute_capability: ComputeCapability | None = None
    memory_mib: int | None = None
    found_in: str = ""
    capability_from: str = ""  # where the compute capability came from, when not from found_in (the matrix)


@record(frozen=True)
class CudaInstall:
    version: CudaVersion
    path: str
    found_in: str = ""


@record(frozen=True)
class CudnnInstall:
    version: CudnnVersion
    path: str
    found_in: str = ""
    loads_first: bool = False
    lib_dir: str = ""  # the directory holding its libcudnn.so*, for LD_LIBRARY_PATH


@record(frozen=True)
class InstalledPackage:
    name: str
    version: str
    location: str = ""
    installer: str = ""  # "conda" for a package conda installed (its conda-meta record); "" for pip's
    build: str = ""  # conda's build string: ``py3.9_cuda11.3_cudnn8.3.2_0``
    channel: str = ""  # the conda channel it came from

    @property
    def by_conda(self) -> bool:
        return self.installer == "conda"

    def build_tag(self) -> BuildTag:
        """The build it is: a conda package's from its build string, a wheel's from its local version label."""
        return parse_conda_build(self.build) if self.by_conda else parse_build_tag(self.version)

    def describe(self) -> str:
        """``torch 1.12.1 (conda, CUDA 11.3 build)``, ``torch 2.1.0+cu118``."""
        if not self.by_conda:
            return f"{self.name} {self.version}"
        tag = self.build_tag()
        build = f"CUDA {tag.cuda} build" if tag.cuda is not None else "CPU build" if tag.kind == "cpu" else self.build
        return f"{self.name} {self.version} (conda{', ' + build if build else ''})"


@record(frozen=True)
class InstalledCode:
    """What one installed framework's own libraries carry (``detect.gpucode``, for ``doctor``): SASS, arch-specific
    SASS and PTX architectures."""

    package: str
    version: str
    sm: tuple[ComputeCapability, ...] = ()
    sm_exact: tuple[ComputeCapability, ...] = ()
    ptx: tuple[ComputeCapability, ...] = ()
    libraries: tuple[str, ...] = ()  # the files that hold GPU code, as target paths
    files_read: int = 0  # the libraries looked at


@record(frozen=True)
class Module:
    """An environment module, ``cudnn/5.1-cuda8.0`` -> name "cudnn", version "5.1-cuda8.0"."""

    name: str
    version: str
    loaded: bool = False
    modulefile: str = ""  # where the modulefile is, when known

    @property
    def full(self) -> str:
        return f"{self.name}/{self.version}" if self.version else self.name


@record
class Runtime:
    """What a machine provides (detected, read from a profile, or given with flags)."""

    os: str = "linux"
    driver: DriverVersion | None = None
    driver_cuda: CudaVersion | None = None  # the CUDA the driver supports (driver API)
    gpus: list[Gpu] = field(default_factory=list)
    cuda: list[CudaInstall] = field(default_factory=list)
    cudnn: list[CudnnInstall] = field(default_factory=list)
    python: PythonVersion | None = None
    packages: list[InstalledPackage] = field(default_factory=list)
    conda_prefix: str = ""
    modules: list[Module] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)  # item -> where it was found / given
    # added by detect: what kind of system, and the target Python's details
    system: str = ""  # "wsl", "jetson", or "" for a plain machine
    python_implementation: str = ""  # "CPython", "PyPy"
    python_executable: str = ""
    machine: str = ""  # CPU architecture as the target Python reports it: "x86_64", "aarch64"
    glibc: str = ""  # "2.17"
    conda_env: str = ""  # CONDA_DEFAULT_ENV, the active env's name
    # facts known to be missing, not merely unknown: "cuda", "cudnn" of a container image that has none
    absent: set[str] = field(default_factory=set)
    conda_cuda: CudaVersion | None = None  # the CUDA its pytorch-cuda / cuda-version / cudatoolkit holds it to
    # the indexes its pip is configured with (pip.conf, PIP_* variables); None where not known (flags, old profiles)
    pip: PipContext | None = None

    @property
    def active_cuda(self) -> CudaInstall | None:
        return self.cuda[0] if self.cuda else None

    @property
    def active_cudnn(self) -> CudnnInstall | None:
        for c in self.cudnn:
            if c.loads_first:
                return c
        return self.cudnn[0] if self.cudnn else None

    @property
    def compute_capabilities(self) -> list[ComputeCapability]:
        return [g.compute_capability for g in self.gpus if g.compute_capability is not None]
