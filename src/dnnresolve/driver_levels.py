"""The driver to upgrade to: the least one that runs a build of the release on this GPU, and what each level buys.

A pure function of the solver's candidates, the runtime and the matrix (no I/O). Every level is a minimum the
matrix states (its ``cuda`` table: a toolkit's own minimum, full support; its ``cuda_families`` table: the
minor-version-compatibility floor of a CUDA major), tried through the solver itself, so a level is offered
only where the solver then accepts the build on this machine's GPU (a GPU that only a newer build carries
code for, or PTX that a minor-version-compatible driver cannot compile, moves the level up).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .compat import FULL, MINOR_VERSION_COMPAT, DriverTable
from .machine import Runtime
from .matrix import Matrix
from .records import record, replace
from .solve.checks import evaluate
from .solve.results import Candidate, Status, preferred_variants
from .versions import CudaVersion, DriverVersion

# What a driver change can fix: the driver check itself, and a GPU whose code the driver must compile.
DRIVER_BOUND = ("driver", "compute_capability")


@record(frozen=True)
class DriverLevel:
    """From ``driver`` on, the builds ``cuda`` of the release run on the terms ``how`` ("full" or
    "minor_version_compat")."""

    driver: DriverVersion
    how: str
    cuda: tuple[CudaVersion, ...]
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "driver": str(self.driver),
            "how": self.how,
            "cuda": [str(c) for c in self.cuda],
            "source": self.source or None,
        }


@record
class DriverUpgrade:
    """The least driver that runs a build of the release (``candidate``, checked against the machine as it is)
    and every level above it up to full support of each build."""

    candidate: Candidate
    least: DriverVersion
    levels: list[DriverLevel]

    def to_dict(self) -> dict[str, Any]:
        return {
            "least": str(self.least),
            "cuda": str(self.candidate.cuda) if self.candidate.cuda else None,
            "levels": [level.to_dict() for level in self.levels],
        }

    def notes(self) -> list[str]:
        """Each level in words, least first."""
        out = []
        for level in self.levels:
            builds = _builds(level.cuda)
            if level.how == MINOR_VERSION_COMPAT:
                major = level.cuda[0].major
                out.append(
                    f"driver >= {level.driver} runs {builds} through CUDA {major}.x minor-version compatibility "
                    "(no JIT compiling of their PTX for a GPU the wheels carry no code for; features that need a "
                    "newer driver unavailable)"
                )
            else:
                out.append(f"driver >= {level.driver} runs {builds} with full support")
        return out


def driver_upgrade(requested: Sequence[Candidate], runtime: Runtime, matrix: Matrix) -> DriverUpgrade | None:
    """For the candidates of one release (its CUDA variants): the least driver newer than the machine's under
    which the solver accepts one of them on this GPU, or None when no driver does (or the driver is not
    known)."""
    if runtime.driver is None:
        return None
    table = matrix.driver_table(runtime.os)
    have = runtime.driver.key(3)
    order = {cuda: i for i, cuda in enumerate(preferred_variants(requested[0].release))} if requested else {}
    found: list[tuple[DriverVersion, str, Candidate]] = []
    for cand in requested:
        if cand.cuda is None:
            continue
        required = table.min_driver_for(cand.cuda)
        family = table.family_min_driver(cand.cuda.major)
        tried = sorted({d.key(3): d for d in (family, required) if d is not None}.items())
        for key, driver in tried:
            if key <= have:
                continue
            checks = evaluate(cand.release, cand.cuda, replace(runtime, driver=driver), matrix)
            if any(c.status is Status.FAIL for c in checks if c.component in DRIVER_BOUND):
                continue
            found.append((driver, table.check(driver, cand.cuda).how, cand))
    if not found:
        return None
    least = min(found, key=lambda f: f[0].key(3))[0]
    # of the builds the least driver runs, the one nearest to full support there (the oldest CUDA), then the
    # release's own order (its default build first)
    at_least = [f[2] for f in found if f[0].key(3) == least.key(3)]
    pick = min(at_least, key=lambda c: (_full_key(table, c.cuda), order.get(c.cuda, 0)))
    return DriverUpgrade(pick, least, _levels(found, matrix))


def _full_key(table: DriverTable, cuda: CudaVersion | None) -> tuple[int, ...]:
    """Where a build gets full support: the driver its CUDA's toolkit needs (never, if the table has none)."""
    driver = table.min_driver_for(cuda) if cuda is not None else None
    return driver.key(3) if driver is not None else (1 << 30,)


def _levels(found: list[tuple[DriverVersion, str, Candidate]], matrix: Matrix) -> list[DriverLevel]:
    grouped: dict[tuple[tuple[int, ...], str], tuple[DriverVersion, list[CudaVersion]]] = {}
    for driver, how, cand in found:
        if cand.cuda is None:
            continue
        entry = grouped.setdefault((driver.key(3), how), (driver, []))
        if cand.cuda not in entry[1]:
            entry[1].append(cand.cuda)
    out = []
    for (_, how), (driver, cudas) in sorted(grouped.items(), key=lambda kv: (kv[0][0], kv[0][1] != FULL)):
        cudas.sort()
        out.append(DriverLevel(driver, how, tuple(cudas), _source(how, cudas[0], matrix)))
    return out


def _source(how: str, cuda: CudaVersion, matrix: Matrix) -> str:
    """Where the matrix has the minimum from: its cuda_families row for minor-version compatibility, its cuda
    row for a toolkit's own."""
    if how == MINOR_VERSION_COMPAT:
        family = next((f for f in matrix.cuda_families if f.major == cuda.major), None)
        return family.source if family is not None else ""
    row = matrix.cuda_release(cuda)
    return row.source if row is not None else ""


def _builds(cudas: Sequence[CudaVersion]) -> str:
    names = [str(c) for c in cudas]
    if len(names) == 1:
        return f"the CUDA {names[0]} build"
    return f"the CUDA {', '.join(names[:-1])} and {names[-1]} builds"
