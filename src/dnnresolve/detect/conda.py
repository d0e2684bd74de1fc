"""The active conda environment (``CONDA_PREFIX``) and its packages, from ``conda-meta/*.json``.

Each installed package has a record ``conda-meta/NAME-VERSION-BUILD.json`` with "name", "version" and
"build" keys; reading them needs no conda at all.
"""

from __future__ import annotations

import json
import re

from ..records import field, record
from ..versions import CudaVersion, VersionError
from .context import ProbeContext


@record(frozen=True)
class CondaPackage:
    name: str
    version: str
    build: str
    record: str  # the conda-meta file, as a target path
    channel: str = ""  # as the record names it: "pytorch", "https://conda.anaconda.org/conda-forge/linux-64"


@record
class CondaReport:
    prefix: str = ""
    env_name: str = ""
    packages: list[CondaPackage] = field(default_factory=list)

    def find(self, *names: str) -> list[CondaPackage]:
        return [p for p in self.packages if p.name in names]


# the packages that pin an environment's CUDA, strongest first: PyTorch's pytorch-cuda and NVIDIA's cuda-version are
# pins with no libraries of their own; cudatoolkit and the cuda-* runtime packages are the libraries themselves
_CUDA_PINS = ("pytorch-cuda", "cuda-version", "cudatoolkit", "cuda-runtime", "cuda-cudart")


def env_cuda(report: CondaReport) -> tuple[CudaVersion, str] | None:
    """The CUDA series the environment is held to, and the record that says so: one conda environment holds one
    CUDA, and conda keeps every later install to it."""
    for name in _CUDA_PINS:
        for pkg in report.find(name):
            try:
                return CudaVersion.parse(".".join(pkg.version.split(".")[:2])).series, f"conda {pkg.name} {pkg.version}"
            except VersionError:
                continue
    return None


def probe(ctx: ProbeContext) -> CondaReport:
    prefix = ctx.env.get("CONDA_PREFIX", "")
    if not prefix.startswith("/"):
        return CondaReport()
    report = CondaReport(prefix=prefix, env_name=ctx.env.get("CONDA_DEFAULT_ENV", ""))
    if not ctx.is_dir(f"{prefix}/conda-meta"):
        ctx.note(f"CONDA_PREFIX={prefix}: no conda-meta directory there")
        return report
    report.packages = read_conda_meta(ctx, prefix)
    return report


def read_conda_meta(ctx: ProbeContext, prefix: str) -> list[CondaPackage]:
    packages = []
    for meta_file in ctx.glob(f"{prefix}/conda-meta/*.json"):
        pkg = _read_record(ctx, meta_file)
        if pkg is not None:
            packages.append(pkg)
    return sorted(packages, key=lambda p: p.name)


def _read_record(ctx: ProbeContext, meta_file: str) -> CondaPackage | None:
    text = ctx.read_text(meta_file)
    if text is None:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("name"), str) and isinstance(data.get("version"), str):
        channel = data.get("channel")
        return CondaPackage(data["name"], data["version"], str(data.get("build", "")), meta_file, _channel(channel))
    # An unreadable record still names the package: NAME-VERSION-BUILD.json
    m = re.fullmatch(r"(.+)-([^-]+)-([^-]+)\.json", meta_file.rsplit("/", 1)[-1])
    if m:
        ctx.note(f"{meta_file}: unreadable JSON; used its file name")
        return CondaPackage(m.group(1), m.group(2), m.group(3), meta_file)
    ctx.note(f"{meta_file}: not a conda package record")
    return None


def _channel(channel: object) -> str:
    """A channel's name: conda writes a name (``pytorch``) or a URL (``https://conda.anaconda.org/conda-forge/linux-64``)."""
    if not isinstance(channel, str):
        return ""
    parts = [p for p in channel.split("/") if p]
    if channel.startswith(("http://", "https://")) and len(parts) >= 3:
        parts = parts[2:]  # after the scheme and the host
        if parts and parts[-1] in _SUBDIRS:
            parts = parts[:-1]
    return "/".join(parts)


_SUBDIRS = {"linux-64", "linux-aarch64", "linux-ppc64le", "osx-64", "osx-arm64", "win-64", "noarch"}
