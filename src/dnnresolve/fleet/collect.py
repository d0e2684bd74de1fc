"""``fleet collect``: the nodes ``sinfo`` lists, ``dnnresolve detect --json`` run once on each reachable one through
``srun`` (a few at a time), and the fleet directory written whole. A node Slurm says is down, drained, failing or
in an unknown state is not waited for: it is listed with Slurm's reason. With ``no_jobs``, no job runs: each
profile is estimated from the node's GRES and features (``estimate``)."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import UserError
from ..records import record
from .runs import SlurmRuns
from .slurm import SlurmNode, read_cluster, run_on_node, why_failed
from .store import FleetNode, check_replaceable, index_json, profile_name, write_fleet

if TYPE_CHECKING:
    from ..matrix import Matrix

DEFAULT_PARALLEL = 8  # srun jobs at once: each is one short task, but the controller schedules every one


@record
class Collected:
    directory: str
    nodes: list[FleetNode]
    estimate: bool

    @property
    def complete(self) -> bool:
        return all(n.profile for n in self.nodes)


def default_command() -> list[str]:
    """This dnnresolve, as the nodes run it: the same interpreter, which a cluster's shared file system serves."""
    return [sys.executable, "-m", "dnnresolve"]


def collect(
    out: str,
    *,
    partitions: Sequence[str] = (),
    nodes: str | None = None,
    timeout: float = 60.0,
    command: Sequence[str] | None = None,
    no_jobs: bool = False,
    parallel: int = DEFAULT_PARALLEL,
    matrix: Matrix | None = None,
    on_progress: Callable[[int, int], None] = lambda done, total: None,
) -> Collected:
    check_replaceable(out)  # before any job runs: a collect that cannot be written is not started
    command = list(command or default_command())
    env = dict(os.environ)
    runs = SlurmRuns()
    try:
        cluster = select(read_cluster(nodes, runs, env), partitions, nodes)
        stamp = _now()
        if no_jobs:
            if matrix is None:
                raise ValueError("an estimate needs the matrix")
            results = [(None, "", n.unreachable) if n.unreachable else _estimated(n, matrix, stamp) for n in cluster]
        else:
            results = _run_all(cluster, partitions, command, timeout, parallel, runs, env, on_progress)
    finally:
        runs.stop(env)
    from ..profile import runtime_from_json

    taken: set[str] = set()
    profiles: dict[str, dict[str, Any]] = {}
    fleet: list[FleetNode] = []
    for node, (profile, when, reason) in zip(cluster, results):
        relative = profile_name(node.name, taken) if profile is not None else ""
        if profile is not None:
            profiles[relative] = profile
        runtime = runtime_from_json(profile, relative) if profile is not None else None
        fleet.append(
            FleetNode(
                node.name,
                node.partitions,
                node.features,
                node.gres,
                node.state,
                when,
                relative,
                reason,
                no_jobs,
                runtime,
            )
        )
    write_fleet(out, index_json(fleet, _now(), command if not no_jobs else [], no_jobs), profiles)
    return Collected(out, fleet, no_jobs)


def select(cluster: Sequence[SlurmNode], partitions: Sequence[str], nodes: str | None = None) -> list[SlurmNode]:
    """The nodes of the partitions asked for (all when none is), each with all of its partitions."""
    if not cluster:
        raise UserError(f"sinfo lists no node{f' of --nodes {nodes}' if nodes else ''}")
    if not partitions:
        return list(cluster)
    known = {p for n in cluster for p in n.partitions}
    unknown = [p for p in partitions if p not in known]
    if unknown:
        where = f"none of --nodes {nodes} is in it (theirs" if nodes else "no such partition (sinfo lists"
        raise UserError(f"--partition {unknown[0]}: {where}: {', '.join(sorted(known))})")
    return [n for n in cluster if set(n.partitions) & set(partitions)]


Outcome = tuple["dict[str, Any] | None", str, str]  # (profile JSON, when it was read, why there is none)


def _run_all(
    cluster: Sequence[SlurmNode],
    partitions: Sequence[str],
    command: Sequence[str],
    timeout: float,
    parallel: int,
    runs: SlurmRuns,
    env: dict[str, str],
    on_progress: Callable[[int, int], None],
) -> list[Outcome]:
    from concurrent.futures import ThreadPoolExecutor, as_completed

    results: list[Outcome | None] = [None] * len(cluster)
    jobs: dict[int, SlurmNode] = {}
    for i, node in enumerate(cluster):
        why = node.unreachable
        if why:
            results[i] = (None, "", why)
        else:
            jobs[i] = node
    done = len(cluster) - len(jobs)
    on_progress(done, len(cluster))
    if jobs:
        with ThreadPoolExecutor(max_workers=max(1, min(parallel, len(jobs))), thread_name_prefix="srun") as pool:
            futures = {
                pool.submit(_detect_on, node, _partition(node, partitions), command, timeout, runs, env): i
                for i, node in jobs.items()
            }
            try:
                for future in as_completed(futures):
                    results[futures[future]] = future.result()
                    done += 1
                    on_progress(done, len(cluster))
            except BaseException:
                runs.stop(env)  # Ctrl-C, SIGTERM: the jobs running now are cancelled, those queued never start
                for f in futures:
                    f.cancel()
                raise
    return [r if r is not None else (None, "", "not run") for r in results]


def _partition(node: SlurmNode, asked: Sequence[str]) -> str:
    """The partition to run in: the first one asked for that holds the node, else its first."""
    return next((p for p in asked if p in node.partitions), node.partitions[0] if node.partitions else "")


def _detect_on(
    node: SlurmNode,
    partition: str,
    command: Sequence[str],
    timeout: float,
    runs: SlurmRuns,
    env: dict[str, str],
) -> Outcome:
    from ..profile import runtime_from_json

    result = run_on_node(node.name, partition, command, timeout, runs, env)
    when = _now()
    if not result.ok:
        return None, "", why_failed(result)
    try:
        profile = json.loads(result.stdout)
        runtime_from_json(profile, f"the profile {node.name} printed")
    except ValueError as exc:
        line = (result.stdout.strip().splitlines() or [""])[0][:80]
        return None, "", f"{' '.join(command)} detect --json printed no profile ({exc}): {line!r}"
    except UserError as exc:
        return None, "", str(exc)
    return profile, when, ""


def _estimated(node: SlurmNode, matrix: Matrix, stamp: str) -> Outcome:
    from ..profile import runtime_to_json
    from .estimate import estimated_runtime

    return runtime_to_json(estimated_runtime(node, matrix)), stamp, ""


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
