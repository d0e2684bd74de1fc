"""Fleet output: what ``fleet collect`` gathered, and a requirement's verdict per group of alike nodes (``plan`` and
``check`` with ``--fleet``): a table row per group where it fits the width, a block per group where it does not."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .console import emit_json, writer
from .styled import Column, Hint, Piece, Table

if TYPE_CHECKING:
    from ..fleet.collect import Collected
    from ..fleet.groups import FleetAnswer, FleetGroup
    from ..fleet.store import Fleet, FleetNode
    from ..machine import Runtime

_VERDICT_HINT: dict[str, Hint] = {"ready": "ok", "installable": "warn", "needs_root": "missing", "cannot": "error"}


def hostlist(names: Sequence[str]) -> str:
    """Node names the way Slurm writes a host list: ``k20m-[1-2,4],a100-1``."""
    runs: dict[tuple[str, int], list[int]] = {}
    order: list[tuple[str, int] | str] = []
    for name in names:
        m = re.fullmatch(r"(.*?)(\d+)", name)
        if m is None:
            order.append(name)
            continue
        digits = m.group(2)
        key = (m.group(1), len(digits) if digits.startswith("0") else 0)  # zero-padded numbers keep their width
        if key not in runs:
            runs[key] = []
            order.append(key)
        runs[key].append(int(digits))
    out = []
    for item in order:
        if isinstance(item, str):
            out.append(item)
            continue
        prefix, pad = item
        numbers = sorted(set(runs[item]))
        if len(numbers) == 1:
            out.append(f"{prefix}{numbers[0]:0{pad}d}")
            continue
        spans, start = [], numbers[0]
        for prev, cur in zip(numbers, [*numbers[1:], None]):
            if cur is None or cur != prev + 1:
                spans.append(f"{start:0{pad}d}" if start == prev else f"{start:0{pad}d}-{prev:0{pad}d}")
                start = cur if cur is not None else start
        out.append(f"{prefix}[{','.join(spans)}]")
    return ",".join(out)


def machine_summary(runtime: Runtime | None) -> str:
    """``2x Tesla K20m (3.5), driver 375.26, Python 3.6``: what tells one group of nodes from another."""
    if runtime is None:
        return ""
    parts: list[str] = []
    gpus: dict[str, int] = {}
    for g in runtime.gpus:
        label = f"{g.name} ({g.compute_capability})" if g.compute_capability else g.name
        gpus[label] = gpus.get(label, 0) + 1
    parts.extend(f"{n}x {label}" if n > 1 else label for label, n in gpus.items())
    if not gpus:
        parts.append("no GPU")
    if runtime.driver is not None:
        parts.append(f"driver {runtime.driver}")
    if runtime.python is not None:
        parts.append(f"Python {runtime.python}")
    return ", ".join(parts)


# ------------------------------------------------------------------ plan / check --fleet


def answer_json(answer: FleetAnswer, fleet: Fleet) -> dict[str, Any]:
    from .plan import to_json

    return {
        "requirement": answer.requirement,
        "fleet": fleet.directory,
        "collected": fleet.collected,
        "groups": [
            {
                "nodes": g.nodes,
                "partitions": g.partitions,
                "verdict": g.verdict,
                "estimate": g.estimate,
                "option": _option(g) or None,
                "plan": to_json(g.plan, g.runtime),
            }
            for g in answer.groups
        ],
        "unreachable": [{"node": node, "reason": reason} for node, reason in answer.unreachable],
    }


def _verdict(g: FleetGroup) -> list[Piece]:
    mark: list[Piece] = [(g.verdict, _VERDICT_HINT[g.verdict])]
    return [*mark, (" (estimate)", "warn")] if g.estimate else mark


def _option(g: FleetGroup) -> str:
    first = g.first_option
    if first is None:
        return g.message
    return first.title + (" (needs root)" if first.needs_root else "")


def emit_answer(answer: FleetAnswer, fleet: Fleet, as_json: bool) -> None:
    if as_json:
        emit_json(answer_json(answer, fleet))
        return
    from .layout import column_widths

    out = writer()
    nodes = sum(len(g.nodes) for g in answer.groups)
    out.line(
        (answer.requirement, "heading"),
        f" on {nodes} node{'s' if nodes != 1 else ''} of the fleet in {fleet.directory}"
        f" (collected {fleet.collected or 'at an unknown time'}): {len(answer.groups)} group"
        f"{'s' if len(answer.groups) != 1 else ''}",
    )
    rows = [
        (
            hostlist(g.nodes),
            ",".join(g.partitions) or "-",
            _verdict(g),
            machine_summary(g.runtime),
            _option(g) or "-",
        )
        for g in answer.groups
    ]
    columns = [
        Column("nodes"),
        Column("partitions"),
        Column("verdict", no_wrap=True),
        Column("machine"),
        Column("first option"),
    ]
    table = Table(columns, rows)
    table_shown = bool(rows and column_widths(table, out.width))
    if table_shown:
        out.table(table)
    else:  # a block per group: nodes, verdict and partitions, then the machine and the first option below
        for i, (names, partitions, verdict, machine, option) in enumerate(rows):
            if i:
                out.line()
            out.line((names, "heading"), "  ", *verdict, f"  partitions {partitions}", hang=4)
            out.line(f"  machine: {machine}", hang=4)
            out.line(f"  first option: {option}", hang=4)
    if answer.unreachable and not table_shown:
        out.line()
    for node, reason in answer.unreachable:
        out.line(("unreachable", "warn"), f" {node}: {reason}", hang=4)
    if any(g.estimate for g in answer.groups):
        out.line(
            ("estimate", "warn"),
            ": a group marked so was estimated from Slurm's GRES and features (fleet collect --no-jobs); its "
            "driver, CUDA and Python are not known",
            hang=4,
        )


# ------------------------------------------------------------------ fleet collect


def collected_json(collected: Collected) -> dict[str, Any]:
    from ..fleet.store import index_json

    data = index_json(collected.nodes, "", [], collected.estimate)
    data.pop("schema")
    data.pop("command")
    data.pop("collected")
    return {"directory": collected.directory, **data}


def emit_collected(collected: Collected, as_json: bool) -> None:
    if as_json:
        emit_json(collected_json(collected))
        return
    from .layout import column_widths

    out = writer()
    got = sum(1 for n in collected.nodes if n.profile)
    how = "estimated from sinfo" if collected.estimate else "read through srun"
    out.line(f"{got} of {len(collected.nodes)} node profiles {how}, written to {collected.directory}")
    rows = [(n.name, ",".join(n.partitions) or "-", n.state or "-", _node_result(n)) for n in collected.nodes]
    table = Table([Column("node"), Column("partitions"), Column("state", no_wrap=True), Column("profile")], rows)
    if rows and column_widths(table, out.width):
        out.table(table)
    else:
        for name, partitions, state, result in rows:
            out.line((name, "heading"), f"  {state}  partitions {partitions}", hang=4)
            out.line(f"  {result}", hang=4)


def _node_result(node: FleetNode) -> str:
    if not node.profile:
        return f"none: {node.reason}"
    return machine_summary(node.runtime) + (" (estimate)" if node.estimate else "")
