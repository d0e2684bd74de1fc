"""A real Slurm cluster on this host for the fleet tests: munged, slurmctld and one ``slurmd -N NAME`` per node,
each on a port of its own, all under a temporary directory. A TaskProlog exports DNNRESOLVE_ROOT per node, so that
``dnnresolve detect`` in a job on each node reads a different fixture machine:

    k20m-1, k20m-2  partition k20m   the K20m machine (tests/fixtures/machines/k20m), GRES gpu:k20m:2
    a100-1          partition a100   the modern machine with an A100 in /proc, GRES gpu:a100:4
    cpu-1           partition cpu    a machine without a GPU
    gone-1          partition k20m   defined, never started: Slurm lists it in an unknown state, not responding
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from ..detect.machines import MACHINES

SBIN_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin", "/usr/bin"])
PROGRAMS = ("munged", "slurmctld", "slurmd", "sinfo", "srun", "scontrol", "squeue", "scancel")
LIVE = {"k20m-1": "k20m", "k20m-2": "k20m", "a100-1": "a100", "cpu-1": "nogpu"}  # node -> its machine
DOWN = "gone-1"
START_TIMEOUT_S = 30.0
A100_INFO = "Model: \t\t NVIDIA A100-SXM4-40GB\nIRQ:   \t\t 145\nBus Type: \t PCIe\nBus Location: \t 0000:07:00.0\n"


class Cluster:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.conf = base / "etc" / "slurm.conf"
        self.machines = base / "machines"

    @property
    def env(self) -> dict[str, str]:
        """What a process needs to talk to this cluster (sinfo, srun, scontrol)."""
        return {"SLURM_CONF": str(self.conf), "PATH": SBIN_PATH}

    def scontrol(self, *args: str) -> None:
        subprocess.run(["scontrol", *args], env={**os.environ, **self.env}, check=True, timeout=30, capture_output=True)

    def jobs(self) -> list[str]:
        """The cluster's jobs, a line each (``id name state node``)."""
        out = subprocess.run(
            ["squeue", "--noheader", "--format=%i %j %T %N"],
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            timeout=30,
        )
        return out.stdout.splitlines()

    def cancel_all(self) -> None:
        subprocess.run(["scancel", "--user", "root"], env={**os.environ, **self.env}, timeout=30, capture_output=True)

    def settle(self) -> None:
        """Wait until every live node is idle and no job is left (one test's jobs never meet the next test)."""
        end = time.monotonic() + START_TIMEOUT_S
        while self.jobs() and time.monotonic() < end:
            time.sleep(0.2)
        _wait_idle(self, {**os.environ, **self.env})

    def logs(self) -> str:
        out = []
        for log in sorted((self.base / "log").glob("*.log")):
            out.append(f"--- {log.name}\n" + "\n".join(log.read_text(errors="replace").splitlines()[-15:]))
        return "\n".join(out)


def missing_programs() -> list[str]:
    return [p for p in PROGRAMS if shutil.which(p, path=SBIN_PATH) is None]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _machines(target: Path) -> None:
    for name in ("k20m", "nogpu"):
        shutil.copytree(MACHINES / name, target / name, symlinks=True)
    a100 = target / "a100"
    shutil.copytree(MACHINES / "modern", a100, symlinks=True)  # driver 570.86.15, CUDA 12.4, cuDNN 9 and 8.9
    info = a100 / "proc/driver/nvidia/gpus/0000:07:00.0/information"
    info.parent.mkdir(parents=True)
    info.write_text(A100_INFO)


def _config(c: Cluster) -> str:
    b = c.base
    ports = [_free_port() for _ in range(3 + len(LIVE))]
    gres = {"k20m": "gpu:k20m:2", "a100": "gpu:a100:4", "nogpu": ""}
    features = {"k20m": "k20m,ib", "a100": "a100", "nogpu": ""}
    lines = [
        "ClusterName=dnnresolve-test",
        "SlurmctldHost=localhost",
        "SlurmUser=root",
        "SlurmdUser=root",
        f"SlurmctldPort={ports[0]}",
        f"SlurmdPort={ports[1]}",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={b}/run/munge.socket",
        f"StateSaveLocation={b}/state",
        f"SlurmdSpoolDir={b}/spool/%n",
        f"SlurmctldPidFile={b}/run/slurmctld.pid",
        f"SlurmdPidFile={b}/run/slurmd.%n.pid",
        f"SlurmctldLogFile={b}/log/slurmctld.log",
        f"SlurmdLogFile={b}/log/slurmd.%n.log",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "SlurmdParameters=config_overrides",  # each node is what slurm.conf says, not this host's CPUs
        "MpiDefault=none",
        "ReturnToService=2",
        "SchedulerType=sched/builtin",
        f"TaskProlog={b}/etc/taskprolog",
        "GresTypes=gpu",
        "JobCompType=jobcomp/none",
        "AccountingStorageType=accounting_storage/none",
        "JobAcctGatherType=jobacct_gather/none",
        "InactiveLimit=0",
        "KillWait=2",
        "SlurmdTimeout=300",
    ]
    nodes = [*LIVE.items(), (DOWN, "k20m")]
    for (name, machine), port in zip(nodes, ports[2:]):
        extra = (f" Gres={gres[machine]}" if gres[machine] else "") + (
            f" Feature={features[machine]}" if features[machine] else ""
        )
        lines.append(f"NodeName={name} NodeHostname=localhost Port={port} CPUs=1{extra}")
    lines += [
        f"PartitionName=k20m Nodes=k20m-1,k20m-2,{DOWN} Default=YES State=UP MaxTime=10",
        "PartitionName=a100 Nodes=a100-1 State=UP MaxTime=10",
        "PartitionName=cpu Nodes=cpu-1 State=UP MaxTime=10",
    ]
    return "\n".join(lines) + "\n"


def _gres_conf(b: Path) -> str:
    # gres/gpu drops a GPU without a device file: links to /dev/null stand in for /dev/nvidia*
    (b / "dev").mkdir()
    for i in range(4):
        (b / "dev" / f"gpu{i}").symlink_to("/dev/null")
    return (
        f"NodeName=k20m-[1-2],{DOWN} Name=gpu Type=k20m File={b}/dev/gpu[0-1]\n"
        f"NodeName=a100-1 Name=gpu Type=a100 File={b}/dev/gpu[0-3]\n"
    )


def _prolog(c: Cluster) -> str:
    cases = "".join(f"  {node}) echo 'export DNNRESOLVE_ROOT={c.machines / m}' ;;\n" for node, m in LIVE.items())
    return f'#!/bin/sh\n# each node shows its own fixture machine\ncase "$SLURMD_NODENAME" in\n{cases}esac\n'


def start() -> Cluster:
    """The cluster, running; ``stop`` ends it. RuntimeError, with the daemons' logs, when it does not come up."""
    base = Path(tempfile.mkdtemp(prefix="dnnresolve-slurm-"))
    os.chmod(base, 0o755)  # munged wants its socket's directory searchable by all
    c = Cluster(base)
    for d in ("etc", "run", "log", "state", "spool", "munge"):
        (base / d).mkdir()
    os.chmod(base / "munge", 0o700)
    _machines(c.machines)
    key = base / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    os.chmod(key, 0o600)
    c.conf.write_text(_config(c))
    (base / "etc" / "gres.conf").write_text(_gres_conf(base))
    prolog = base / "etc" / "taskprolog"
    prolog.write_text(_prolog(c))
    prolog.chmod(0o755)
    env = {**os.environ, **c.env}
    try:
        munged = [
            "munged",
            f"--socket={base}/run/munge.socket",
            f"--key-file={key}",
            f"--pid-file={base}/run/munged.pid",
            f"--log-file={base}/log/munged.log",
            f"--seed-file={base}/munge/seed",
        ]
        subprocess.run(munged, env=env, check=True, timeout=30, capture_output=True)
        subprocess.run(["slurmctld", "-i"], env=env, check=True, timeout=30, capture_output=True)
        for node in LIVE:
            (base / "spool" / node).mkdir()
            subprocess.run(["slurmd", "-N", node], env=env, check=True, timeout=30, capture_output=True)
        _wait_idle(c, env)
    except (subprocess.SubprocessError, OSError, RuntimeError) as exc:
        logs = c.logs()
        stop(c)
        raise RuntimeError(f"the test Slurm cluster did not start: {exc}\n{logs}") from exc
    return c


def _wait_idle(c: Cluster, env: dict[str, str]) -> None:
    end = time.monotonic() + START_TIMEOUT_S
    states: dict[str, str] = {}
    while time.monotonic() < end:
        out = subprocess.run(
            ["sinfo", "--Node", "--noheader", "--format=%N %T"], env=env, capture_output=True, text=True, timeout=30
        )
        states = dict(line.split() for line in out.stdout.splitlines() if len(line.split()) == 2)
        if all(states.get(n) == "idle" for n in LIVE):
            return
        time.sleep(0.2)
    raise RuntimeError(f"nodes not idle within {START_TIMEOUT_S:g}s: {states}")


def stop(c: Cluster) -> None:
    """Every job cancelled, every daemon of the cluster ended (SIGTERM, then SIGKILL) with the job steps it left
    (a slurmstepd outlives its slurmd), its directory removed."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        c.cancel_all()
        end = time.monotonic() + 10
        while c.jobs() and time.monotonic() < end:
            time.sleep(0.2)
    run = c.base / "run"
    pids = _steps_of(c)
    for pidfile in run.glob("*.pid"):
        with contextlib.suppress(OSError, ValueError):
            pids.append(int(pidfile.read_text().split()[0]))
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + 10
    while pids and time.monotonic() < end:
        pids = [p for p in pids if _alive(p)]
        time.sleep(0.1)
    for pid in [*pids, *_steps_of(c)]:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    shutil.rmtree(c.base, ignore_errors=True)


def _steps_of(c: Cluster) -> list[int]:
    """The processes that run with this cluster's slurm.conf in their environment (slurmstepd and its tasks)."""
    mark = f"SLURM_CONF={c.conf}".encode()
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and int(proc.name) != os.getpid():
            with contextlib.suppress(OSError):
                if mark in (proc / "environ").read_bytes().split(b"\0"):
                    found.append(int(proc.name))
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    # a daemon that ended but is not reaped (its parent is init, or us) counts as gone
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    return False
