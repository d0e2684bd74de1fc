"""Slurm, asked the way its own tools are scripted: ``sinfo`` in a fixed format of explicit fields, and the ``srun``
command line that runs one task on one named node without waiting for it. Programs run through ``runs``: each
with a deadline, stopped the way that makes Slurm cancel the job."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from ..detect.programs import ProgramResult
from ..errors import UserError
from ..records import record
from .runs import SlurmRuns

# node, partition (without the default's "*"), state (long form), available features, GRES, reason. The reason is
# free text that may hold the separator: it comes last, and a line is split at the first five separators only.
SINFO_FORMAT = "%N|%R|%T|%f|%G|%E"
_FIELDS = 6
SINFO_TIMEOUT_S = 30.0
IMMEDIATE_S = 5  # how long srun may wait for its node: a busy node is reported, not waited for

# Slurm's base states (sinfo --long) in which a node takes no new job, or takes one only after a wait
_NO_JOBS = ("down", "drain", "fail", "unk", "no_resp", "not_resp", "future", "inval", "maint", "power", "reboot_iss")
# flags sinfo appends to a state, and those of them that mean a job would not start now
_FLAGS = "*~#%!@^$-"
_FLAG_WORDS = {
    "*": "not responding",
    "~": "powered off",
    "#": "powering up",
    "%": "powering down",
    "!": "about to power down",
    "^": "rebooting",
}


@record(frozen=True)
class SlurmNode:
    """One node as ``sinfo -N`` lists it, its partitions gathered from its lines."""

    name: str
    partitions: tuple[str, ...]
    state: str  # as sinfo prints it: "idle", "down*", "drained", "mixed"
    features: tuple[str, ...]
    gres: tuple[str, ...]  # "gpu:k20m:2", "gpu:a100:4(S:0-1)"
    reason: str  # Slurm's reason for the state ("" when none)

    @property
    def unreachable(self) -> str:
        """Why no job is sent to this node ("" when one is): its state, with Slurm's reason."""
        base = self.state.rstrip(_FLAGS)
        flags = [_FLAG_WORDS[f] for f in self.state[len(base) :] if f in _FLAG_WORDS]
        words = base.lower().split("+")  # a compound state: "mixed+drain", "idle+power"
        if not flags and not any(w.startswith(_NO_JOBS) for w in words):
            return ""
        why = f"Slurm state {self.state}" + (f" ({', '.join(flags)})" if flags else "")
        if self.reason:
            return f"{why}: {self.reason}"
        if words[0].startswith("unk"):  # the controller has not heard from the node's slurmd since it started
            return f"{why}: its slurmd has not registered with the controller"
        return f"{why}, no reason given"


def sinfo_argv(nodes: str | None = None) -> list[str]:
    argv = ["sinfo", "--Node", "--noheader", f"--format={SINFO_FORMAT}"]
    if nodes:
        argv.append(f"--nodes={nodes}")  # a Slurm host list ("gpu[01-16],cpu01"): Slurm expands it
    return argv


def parse_sinfo(text: str, source: str = "sinfo") -> list[SlurmNode]:
    """The nodes of ``sinfo --Node --format=SINFO_FORMAT`` output, in its order; a node listed once per partition
    becomes one node with its partitions. A line of another shape is a UserError naming it."""
    found: dict[str, tuple[list[str], str, tuple[str, ...], tuple[str, ...], str]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split("|", _FIELDS - 1)]
        if len(fields) != _FIELDS or not fields[0]:
            raise UserError(f"not a line of 'sinfo --format={SINFO_FORMAT}': {line.strip()[:120]!r}", source, number)
        name, partition, state, features, gres, reason = fields
        if name in found:
            partitions = found[name][0]
            if partition and partition not in partitions:
                partitions.append(partition)
            continue
        found[name] = (
            [partition] if _given(partition) else [],
            state,
            _words(features),
            _gres(gres),
            "" if reason.lower() in ("none", "(null)") else reason,
        )
    return [SlurmNode(name, tuple(p), state, f, g, r) for name, (p, state, f, g, r) in found.items()]


def _given(value: str) -> bool:
    return bool(value) and value != "(null)"


def _words(text: str) -> tuple[str, ...]:
    return tuple(w for w in text.split(",") if w.strip() and w != "(null)") if _given(text) else ()


def _gres(text: str) -> tuple[str, ...]:
    """GRES entries, split at the commas between them, not those inside one's socket list ``(S:0,1)``."""
    if not _given(text):
        return ()
    return tuple(g for g in re.split(r",(?![^()]*\))", text) if g)


def gpu_gres(gres: Sequence[str]) -> list[tuple[str, int]]:
    """The GPUs a node's GRES declares: (type, count) each, type "" when untyped (``gpu:2``)."""
    out = []
    for entry in gres:
        parts = entry.split("(", 1)[0].split(":")
        if parts[0] != "gpu":
            continue
        count = parts[-1] if len(parts) > 1 and parts[-1].isdigit() else "1"
        kind = parts[1] if len(parts) > 2 or (len(parts) == 2 and not parts[1].isdigit()) else ""
        out.append((kind, int(count)))
    return out


def read_cluster(nodes: str | None, runs: SlurmRuns, env: dict[str, str]) -> list[SlurmNode]:
    """The cluster's nodes as ``sinfo`` lists them (only those of the host list ``nodes`` when given)."""
    argv = sinfo_argv(nodes)
    result = runs.run(argv, env, SINFO_TIMEOUT_S)
    if not result.ok:
        raise UserError(f"{' '.join(argv)}: {why_failed(result)}")
    return parse_sinfo(result.stdout)


def job_name(node: str) -> str:
    """A name for the job on ``node`` that no other collect uses: ``scancel --name`` ends exactly that job."""
    return f"dnnresolve-detect.{os.getpid()}.{node}"


def srun_argv(node: str, partition: str, command: Sequence[str], timeout: float) -> list[str]:
    """One task on ``node``, started at once or not at all, killed by Slurm at its time limit (whole minutes)."""
    minutes = max(1, -(-int(timeout) // 60))
    argv = [
        "srun",
        f"--immediate={IMMEDIATE_S}",
        f"--time={minutes}",
        "--nodes=1",
        "--ntasks=1",
        f"--nodelist={node}",
        f"--job-name={job_name(node)}",
        "--quiet",
    ]
    if partition:
        argv.append(f"--partition={partition}")
    return [*argv, *command, "detect", "--json"]


def run_on_node(
    node: str, partition: str, command: Sequence[str], timeout: float, runs: SlurmRuns, env: dict[str, str]
) -> ProgramResult:
    argv = srun_argv(node, partition, command, timeout)
    # srun's own wait for the node comes on top of the command's time
    return runs.run(argv, env, timeout + IMMEDIATE_S, cancel=["scancel", "--quiet", f"--name={job_name(node)}"])


def why_failed(result: ProgramResult) -> str:
    """One line on why a run of sinfo or srun gave no answer: srun's own error where it wrote one."""
    if result.error:
        return result.error
    lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
    # the task's own last word (an error line, a traceback's exception) says more than srun's "task 0: Exited
    # with exit code 2"; where the task wrote none, srun's error does ("Requested nodes are busy")
    own = [line for line in lines if not line.startswith(("srun:", "sinfo:"))]
    last = re.sub(r"^(srun|sinfo): (error: )?", "", (own or lines or [""])[-1])
    status = f"exit status {result.returncode}"
    return f"{status}: {last}" if last else status
