"""GPUs: name, compute capability and memory.

NVML first (it knows all three), then nvidia-smi's CSV query, then the table, then the driver's
``/proc/driver/nvidia/gpus/*/information`` files ("Model:  Tesla K20m"), which need no program at all.
Where a source gives no compute capability, the matrix's GPU table supplies it by name.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..machine import MATRIX_GPU_TABLE, Gpu
from ..versions import ComputeCapability, VersionError
from .context import ProbeContext
from .nvml import NvmlReport
from .smi import SmiReport

PROC_GPUS = "/proc/driver/nvidia/gpus"

# name -> compute capability from the matrix, or None when unknown
CapabilityLookup = Callable[[str], "ComputeCapability | None"]


def probe(ctx: ProbeContext, nvml: NvmlReport, smi: SmiReport, lookup: CapabilityLookup) -> list[Gpu]:
    found: list[tuple[str, str, int | None, str]] = []
    if nvml.gpus:
        found = [(g.name, g.compute_capability, g.memory_mib, "NVML") for g in nvml.gpus]
    elif smi.gpus:
        found = [(g.name, g.compute_capability, g.memory_mib, smi.gpus_from) for g in smi.gpus]
    else:
        found = [(name, "", None, where) for name, where in _proc_gpus(ctx)]
    gpus: list[Gpu] = []
    for name, cc_text, memory, where in found:
        cc, cc_from = _capability(ctx, cc_text, where), ""
        if cc is None:
            cc = lookup(name)
            if cc is not None:
                cc_from = MATRIX_GPU_TABLE
            else:
                ctx.note(f"GPU {name!r}: compute capability unknown (not in the matrix's GPU table)")
        if name.endswith("..."):
            ctx.note(f"GPU {name!r}: nvidia-smi shortened the name")
        gpus.append(Gpu(name, cc, memory, where, cc_from))
    return gpus


def _capability(ctx: ProbeContext, text: str, where: str) -> ComputeCapability | None:
    if not text:
        return None
    try:
        return ComputeCapability.parse(text)
    except VersionError:
        ctx.note(f"{where}: not a compute capability: {text!r}")
        return None


def _proc_gpus(ctx: ProbeContext) -> list[tuple[str, str]]:
    out = []
    for info in ctx.glob(f"{PROC_GPUS}/*/information"):
        m = re.search(r"^Model:\s*(.+?)\s*$", ctx.read_text(info) or "", re.MULTILINE)
        if m:
            out.append((m.group(1), info))
    return out
