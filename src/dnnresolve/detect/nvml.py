"""NVML through ctypes: driver version, the CUDA version the driver supports, and each GPU.

Loading ``libnvidia-ml.so.1`` is tried only on the machine itself (never under ``--root``), in a daemon
thread that is waited for ``timeout`` seconds: a wedged driver can hang nvmlInit, and a hung daemon thread
does not keep the process from exiting. ``DNNRESOLVE_NVML=0`` turns it off. Where nothing shows a driver (no
kernel module's /proc entry, no /dev/nvidiactl, no library on the loader's extra path or WSL's), NVML is not
tried at all, and ctypes is not even imported: most machines dnnresolve plans for from CI have no GPU.
"""

from __future__ import annotations

import os
import threading

from ..records import field, record
from .context import ProbeContext

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ctypes

LIBRARY = "libnvidia-ml.so.1"
WSL_LIBRARY = "/usr/lib/wsl/lib/libnvidia-ml.so.1"
NVML_SUCCESS = 0


DRIVER_SIGNS = ("/proc/driver/nvidia/version", "/dev/nvidiactl", WSL_LIBRARY)


@record(frozen=True)
class NvmlGpu:
    name: str
    compute_capability: str
    memory_mib: int | None


@record
class NvmlReport:
    library: str = ""
    driver: str = ""
    cuda_encoded: int | None = None  # 12040 for 12.4
    gpus: list[NvmlGpu] = field(default_factory=list)
    failure: str = ""


def not_asked(ctx: ProbeContext) -> NvmlReport | None:
    """The report when NVML is not to be asked at all (under --root, turned off, no driver visible): known at once,
    with no thread to start; None when ``probe`` must load it."""
    if ctx.root is not None or not ctx.run_programs:
        return NvmlReport(failure="NVML: not used under --root")
    if ctx.env.get("DNNRESOLVE_NVML", "") == "0":
        return NvmlReport(failure="NVML: turned off by DNNRESOLVE_NVML=0")
    if not _driver_visible(ctx):
        return NvmlReport(failure=f"NVML: {LIBRARY} not found (no NVIDIA driver visible)")
    return None


def probe(ctx: ProbeContext) -> NvmlReport:
    skipped = not_asked(ctx)
    if skipped is not None:
        return skipped
    box: list[NvmlReport] = []
    worker = threading.Thread(target=lambda: box.append(_query()), name="dnnresolve-nvml", daemon=True)
    worker.start()
    worker.join(ctx.timeout)
    if not box:
        return NvmlReport(failure=f"NVML: no answer within {ctx.timeout:g}s")
    return box[0]


def _driver_visible(ctx: ProbeContext) -> bool:
    """Whether loading NVML may find a driver: its kernel module or device node, WSL's library, or the library in
    a directory of ``LD_LIBRARY_PATH`` (where the loader looks first)."""
    extra = [os.path.join(d, LIBRARY) for d in ctx.env_paths("LD_LIBRARY_PATH")]
    return any(os.path.exists(p) for p in (*DRIVER_SIGNS, *extra))


def _load() -> tuple[ctypes.CDLL | None, str]:
    import ctypes

    for name in (LIBRARY, WSL_LIBRARY):
        try:
            return ctypes.CDLL(name), name
        except OSError:
            continue
    return None, ""


def _query() -> NvmlReport:
    lib, name = _load()
    if lib is None:
        return NvmlReport(failure=f"NVML: {LIBRARY} not found")
    report = NvmlReport(library=name)
    try:
        rc = lib.nvmlInit_v2()
        if rc != NVML_SUCCESS:
            report.failure = f"NVML: nvmlInit_v2 failed (NVML error {rc})"
            return report
        try:
            _fill(lib, report)
        finally:
            lib.nvmlShutdown()
    except (AttributeError, OSError) as exc:  # an NVML too old for a _v2 entry point
        report.failure = f"NVML: {exc}"
    return report


def _fill(lib: ctypes.CDLL, report: NvmlReport) -> None:
    import ctypes

    class _Memory(ctypes.Structure):
        _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]

    buf = ctypes.create_string_buffer(96)
    if lib.nvmlSystemGetDriverVersion(buf, ctypes.c_uint(len(buf))) == NVML_SUCCESS:
        report.driver = buf.value.decode("ascii", "replace")
    cuda = ctypes.c_int(0)
    if lib.nvmlSystemGetCudaDriverVersion_v2(ctypes.byref(cuda)) == NVML_SUCCESS and cuda.value:
        report.cuda_encoded = cuda.value
    count = ctypes.c_uint(0)
    if lib.nvmlDeviceGetCount_v2(ctypes.byref(count)) != NVML_SUCCESS:
        return
    for i in range(count.value):
        handle = ctypes.c_void_p()
        if lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(i), ctypes.byref(handle)) != NVML_SUCCESS:
            continue
        name = ctypes.create_string_buffer(96)
        gpu_name = ""
        if lib.nvmlDeviceGetName(handle, name, ctypes.c_uint(len(name))) == NVML_SUCCESS:
            gpu_name = name.value.decode("utf-8", "replace")
        major, minor = ctypes.c_int(0), ctypes.c_int(0)
        cc = ""
        if lib.nvmlDeviceGetCudaComputeCapability(handle, ctypes.byref(major), ctypes.byref(minor)) == NVML_SUCCESS:
            cc = f"{major.value}.{minor.value}"
        mem = _Memory()
        memory: int | None = None
        if lib.nvmlDeviceGetMemoryInfo(handle, ctypes.byref(mem)) == NVML_SUCCESS:
            memory = int(mem.total // (1024 * 1024))
        report.gpus.append(NvmlGpu(gpu_name, cc, memory))
