"""A requirement across a fleet: nodes whose profiles agree on every fact a verdict is made of form one group, each
group is planned once, and its plan read as one verdict. No I/O: the planner is handed in.

Verdicts, best first: ``ready`` (installed, and the node runs it), ``installable`` (steps a user may take, no
root), ``needs_root`` (only a driver upgrade makes the release run), ``cannot`` (nothing keeps the release asked
for on this hardware; a plan may still offer another release)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from ..machine import Runtime
from ..plan import Plan, RequirementPlan
from ..plan_options import Option
from ..profile import runtime_to_json
from ..records import field, record
from .store import FleetNode

READY, INSTALLABLE, NEEDS_ROOT, CANNOT = "ready", "installable", "needs_root", "cannot"
VERDICTS = (READY, INSTALLABLE, NEEDS_ROOT, CANNOT)  # best first


@record
class FleetGroup:
    nodes: list[str]
    partitions: list[str]
    verdict: str
    plan: Plan
    runtime: Runtime  # the profile the group shares (its first node's)
    estimate: bool = False  # its profile was estimated from Slurm's word, not read on the nodes

    @property
    def first_option(self) -> Option | None:
        """The first option of the requirement that decides the group's verdict."""
        worst = [rp for rp in self.plan.requirements if requirement_verdict(rp) == self.verdict]
        return next((rp.options[0] for rp in worst if rp.options), None)

    @property
    def message(self) -> str:
        """What the plan says where it has no option (no release in the matrix, no build for the OS)."""
        return next((rp.message for rp in self.plan.requirements if rp.message and not rp.options), "")


@record
class FleetAnswer:
    requirement: str
    groups: list[FleetGroup]
    unreachable: list[tuple[str, str]] = field(default_factory=list)  # (node, why it has no profile)

    @property
    def all_ready(self) -> bool:
        return bool(self.groups) and all(g.verdict == READY for g in self.groups)


def answer(requirement: str, nodes: Sequence[FleetNode], plan_for: Callable[[Runtime], Plan]) -> FleetAnswer:
    """``requirement`` (as the user wrote it) on every node that has a profile, planned once per group."""
    groups: dict[str, list[FleetNode]] = {}
    unreachable = []
    for node in nodes:
        if node.runtime is None:
            unreachable.append((node.name, node.reason or "no profile"))
            continue
        groups.setdefault(decision_key(node.runtime, node.estimate), []).append(node)
    out = []
    for members in groups.values():
        runtime = members[0].runtime
        assert runtime is not None
        plan = plan_for(runtime)
        partitions = list(dict.fromkeys(p for n in members for p in n.partitions))
        out.append(
            FleetGroup([n.name for n in members], partitions, plan_verdict(plan), plan, runtime, members[0].estimate)
        )
    out.sort(key=lambda g: (g.partitions, g.nodes))
    return FleetAnswer(requirement, out, unreachable)


def decision_key(runtime: Runtime, estimate: bool = False) -> str:
    """The facts of a profile a verdict can depend on, as text: every value, none of the notes on where it was
    found (two nodes read from different files, or at different times, agree)."""
    data = runtime_to_json(runtime)
    for key in ("notes", "sources"):
        data.pop(key, None)
    for gpu in data["gpus"]:
        for key in ("found_in", "compute_capability_from", "memory_mib"):
            gpu.pop(key, None)
    for install in (*data["cuda"], *data["cudnn"]):
        install.pop("found_in", None)
    data["estimate"] = estimate
    return json.dumps(data, sort_keys=True)


def plan_verdict(plan: Plan) -> str:
    """The worst verdict of the plan's requirements; ``cannot`` for a plan of none."""
    if not plan.requirements:
        return CANNOT
    worst = max(VERDICTS.index(requirement_verdict(rp)) for rp in plan.requirements)
    if plan.conflicts:  # requirements that cannot be installed together: no node is ready for them
        worst = max(worst, VERDICTS.index(INSTALLABLE))
    return VERDICTS[worst]


def requirement_verdict(rp: RequirementPlan) -> str:
    r = rp.result
    if r.satisfied:
        return READY
    if r.best is None:  # asked under a name it no longer has: each option installs it under its own name
        keeping = rp.options
    else:
        asked = {c.release.version for c in r.requested}
        keeping = [o for o in rp.options if o.candidate is None or o.candidate.release.version in asked]
    if not keeping:
        return CANNOT
    return NEEDS_ROOT if all(o.needs_root for o in keeping) else INSTALLABLE
