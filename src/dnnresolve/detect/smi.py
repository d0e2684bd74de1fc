"""nvidia-smi: the commands we run and what their output says.

Two runs start together (so a hung nvidia-smi is waited for once): the CSV query, which names each GPU
with its compute capability and memory, and the plain table, whose header carries "CUDA Version: 12.4"
(drivers from 410 on). nvidia-smi older than 510 rejects the ``compute_cap`` field
(``Field "compute_cap" is not a valid field to query.``, exit status 2); then the query runs again
without it and the matrix's GPU table supplies the compute capability.
"""

from __future__ import annotations

import re

from ..records import field, record
from .context import ProbeContext, ProgramResult

QUERY_FIELDS = "name,compute_cap,memory.total,driver_version"
QUERY_FIELDS_OLD = "name,memory.total,driver_version"
# Where nvidia-smi lives besides PATH: WSL puts the Windows driver's copy in /usr/lib/wsl/lib.
SMI_DIRS = ("/usr/bin", "/usr/local/bin", "/usr/lib/wsl/lib", "/opt/nvidia/bin")


@record(frozen=True)
class SmiGpu:
    name: str
    compute_capability: str = ""
    memory_mib: int | None = None
    driver: str = ""


@record
class SmiReport:
    """What nvidia-smi said, from whichever of its runs answered."""

    program: str = ""
    gpus: list[SmiGpu] = field(default_factory=list)
    driver: str = ""
    cuda: str = ""  # "CUDA Version: 12.4" in the plain table
    gpus_from: str = ""  # which run named the GPUs
    failure: str = ""  # why nvidia-smi gave nothing, for a note


def query_argv(program: str, fields: str = QUERY_FIELDS) -> list[str]:
    return [program, f"--query-gpu={fields}", "--format=csv,noheader"]


def find_nvidia_smi(ctx: ProbeContext) -> str | None:
    return ctx.which("nvidia-smi", SMI_DIRS)


def start(ctx: ProbeContext) -> None:
    """Start both nvidia-smi runs in the background."""
    program = find_nvidia_smi(ctx)
    if program and ctx.run_programs:
        ctx.start(query_argv(program))
        ctx.start([program])


def probe(ctx: ProbeContext) -> SmiReport:
    program = find_nvidia_smi(ctx)
    if program is None:
        for d in [*ctx.env_paths("PATH"), *SMI_DIRS]:
            if ctx.is_file(f"{d}/nvidia-smi"):
                return SmiReport(failure=f"nvidia-smi: {d}/nvidia-smi is not executable")
        return SmiReport(failure="nvidia-smi: not found on PATH")
    report = SmiReport(program=program)
    if not ctx.run_programs:
        report.failure = "nvidia-smi: not run under --root"
        return report
    query = ctx.run(query_argv(program))
    plain = ctx.run([program])
    if query.ok:
        report.gpus = parse_query(query.stdout, with_compute_cap=True)
        report.gpus_from = f"nvidia-smi --query-gpu={QUERY_FIELDS}"
    elif _rejects_compute_cap(query):
        old = ctx.run(query_argv(program, QUERY_FIELDS_OLD))
        if old.ok:
            report.gpus = parse_query(old.stdout, with_compute_cap=False)
            report.gpus_from = f"nvidia-smi --query-gpu={QUERY_FIELDS_OLD}"
    if plain.ok:
        table = parse_table(plain.stdout)
        report.driver = table.driver
        report.cuda = table.cuda
        if not report.gpus and table.gpus:
            report.gpus, report.gpus_from = table.gpus, "nvidia-smi"
    if report.gpus and not report.driver:
        report.driver = next((g.driver for g in report.gpus if g.driver), "")
    if not report.gpus and not report.driver:
        report.failure = f"nvidia-smi: {_reason(query, plain)}"
    return report


def _rejects_compute_cap(result: ProgramResult) -> bool:
    text = result.stdout + result.stderr
    return not result.error and "compute_cap" in text and "not a valid field" in text


def _reason(query: ProgramResult, plain: ProgramResult) -> str:
    if query.error:
        return query.error
    if plain.error:
        return plain.error
    return plain.why_not() if not plain.ok else query.why_not()


def parse_query(text: str, with_compute_cap: bool) -> list[SmiGpu]:
    """Lines like ``Tesla T4, 7.5, 15360 MiB, 535.104.05`` (or without the compute capability)."""
    import csv  # only where nvidia-smi answered

    gpus: list[SmiGpu] = []
    try:
        rows = list(csv.reader(text.splitlines(), skipinitialspace=True))
    except csv.Error:  # garbage: a NUL byte, a stray quote at the end
        return gpus
    for row in rows:
        cells = [c.strip() for c in row]
        if not cells or not cells[0]:
            continue
        if with_compute_cap and len(cells) >= 4:
            name, cc, mem, drv = cells[0], cells[1], cells[2], cells[3]
        elif not with_compute_cap and len(cells) >= 3:
            name, cc, mem, drv = cells[0], "", cells[1], cells[2]
        else:
            continue
        gpus.append(SmiGpu(name, "" if cc.startswith(("[", "N/A")) else cc, _mib(mem), drv))
    return gpus


@record
class SmiTable:
    driver: str = ""
    cuda: str = ""
    gpus: list[SmiGpu] = field(default_factory=list)


_GPU_ROW = r"^\|\s+(\d+)\s+(.+?)\s+(?:On|Off)\s+\|"  # (compiled on first use, by re's cache)
_MEMORY = r"(?<!\d)(\d{1,9})MiB\s*/\s*(\d{1,9})MiB"


def parse_table(text: str) -> SmiTable:
    """The plain ``nvidia-smi`` table: its header and one row (two lines) per GPU."""
    table = SmiTable()
    m = re.search(r"Driver Version:\s*([\d.]+)", text)
    if m:
        table.driver = m.group(1)
    m = re.search(r"CUDA Version:\s*([\d.]+)", text)
    if m:
        table.cuda = m.group(1)
    pending: str | None = None
    for line in text.splitlines():
        if "Processes:" in line:
            break
        row = re.match(_GPU_ROW, line)
        if row:
            if pending is not None:
                table.gpus.append(SmiGpu(pending, driver=table.driver))
            pending = row.group(2).strip()
            continue
        mem = re.search(_MEMORY, line)
        if mem and pending is not None:
            table.gpus.append(SmiGpu(pending, memory_mib=int(mem.group(2)), driver=table.driver))
            pending = None
    if pending is not None:
        table.gpus.append(SmiGpu(pending, driver=table.driver))
    return table


def _mib(text: str) -> int | None:
    m = re.match(r"(\d{1,9})\s*MiB", text)
    return int(m.group(1)) if m else None
