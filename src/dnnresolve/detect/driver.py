"""The NVIDIA driver: its version, the CUDA version it supports, and the kind of system (WSL, Jetson).

Files first: ``/sys/module/nvidia/version`` (the loaded kernel module), then ``/proc/driver/nvidia/version``
("NVRM version: NVIDIA UNIX x86_64 Kernel Module  375.26  Thu Dec  8 18:36:43 PST 2016"); then NVML,
then nvidia-smi. The CUDA the driver supports comes from NVML (driver API integer, 12040 = 12.4) or the
"CUDA Version: 12.4" in nvidia-smi's table. Under WSL the driver is the Windows host's: no kernel module
files, and nvidia-smi and libnvidia-ml live in ``/usr/lib/wsl/lib``. Jetson boards have no discrete
driver; ``/etc/nv_tegra_release`` names the L4T release that fixes the CUDA they can run.
"""

from __future__ import annotations

import re

from ..records import record
from ..versions import CudaVersion, DriverVersion, VersionError
from .context import ProbeContext
from .nvml import NvmlReport
from .smi import SmiReport

SYS_MODULE_VERSION = "/sys/module/nvidia/version"
PROC_VERSION = "/proc/driver/nvidia/version"
WSL_LIB = "/usr/lib/wsl/lib"
TEGRA_RELEASE = "/etc/nv_tegra_release"

_PROC_RE = r"NVRM version:.*?\s(\d{2,4}\.\d{1,3}(?:\.\d{1,3})?)\s"  # (compiled on first use, by re's cache)
_TEGRA_RE = r"#\s*R(\d+)\s*\(release\),\s*REVISION:\s*([\d.]+)"


@record
class DriverReport:
    driver: DriverVersion | None = None
    driver_from: str = ""
    cuda: CudaVersion | None = None
    cuda_from: str = ""
    system: str = ""  # "wsl", "jetson" or ""
    system_from: str = ""
    l4t: str = ""  # Jetson: "32.7.1"


def probe_system(ctx: ProbeContext) -> DriverReport:
    """What the files say: the kernel module's version and the kind of system."""
    report = DriverReport()
    text = ctx.read_text(SYS_MODULE_VERSION)
    if text is not None:
        _set_driver(ctx, report, text.strip(), SYS_MODULE_VERSION)
    if report.driver is None:
        text = ctx.read_text(PROC_VERSION)
        if text is not None:
            m = re.search(_PROC_RE, text + " ")
            if m:
                _set_driver(ctx, report, m.group(1), PROC_VERSION)
            else:
                ctx.note(f"{PROC_VERSION}: no driver version in it")
    proc_version = ctx.read_text("/proc/version") or ""
    if ctx.is_dir(WSL_LIB) or "microsoft" in proc_version.lower():
        report.system, report.system_from = "wsl", WSL_LIB if ctx.is_dir(WSL_LIB) else "/proc/version"
        ctx.note("WSL: the driver is the Windows host's; update it on Windows, not inside Linux")
    tegra = ctx.read_text(TEGRA_RELEASE)
    if tegra is not None:
        report.system, report.system_from = "jetson", TEGRA_RELEASE
        m = re.search(_TEGRA_RE, tegra)
        if m:
            report.l4t = f"{m.group(1)}.{m.group(2)}"
            ctx.note(f"Jetson: L4T {report.l4t} (JetPack fixes the CUDA and cuDNN this board can use)")
    return report


def merge_programs(ctx: ProbeContext, report: DriverReport, nvml: NvmlReport, smi: SmiReport) -> None:
    """Fill what the files did not say from NVML, then nvidia-smi."""
    if report.driver is None and nvml.driver:
        _set_driver(ctx, report, nvml.driver, f"NVML ({nvml.library})")
    if report.driver is None and smi.driver:
        _set_driver(ctx, report, smi.driver, "nvidia-smi")
    if nvml.cuda_encoded:
        try:
            report.cuda = CudaVersion.from_encoded(nvml.cuda_encoded)
            report.cuda_from = f"NVML nvmlSystemGetCudaDriverVersion_v2 ({nvml.cuda_encoded})"
        except VersionError:
            ctx.note(f"NVML: unexpected CUDA driver version {nvml.cuda_encoded}")
    if report.cuda is None and smi.cuda:
        try:
            report.cuda = CudaVersion.parse(smi.cuda)
            report.cuda_from = "nvidia-smi (CUDA Version)"
        except VersionError:
            ctx.note(f"nvidia-smi: unexpected CUDA Version {smi.cuda!r}")


def _set_driver(ctx: ProbeContext, report: DriverReport, text: str, where: str) -> None:
    try:
        report.driver = DriverVersion.parse(text)
        report.driver_from = where
    except VersionError:
        ctx.note(f"{where}: not a driver version: {text!r}")
