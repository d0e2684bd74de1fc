"""`plan --verify`: before a plan recommends a wheel, ask the index it names whether that wheel exists
for the Python and platform the step will run with. Options whose wheel does not exist are dropped,
those that cannot be checked are flagged. Network I/O lives here, at the edge; credentials are redacted."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from .machine import Runtime
from .plan import Plan
from .plan_options import Option
from .records import record
from .specs import InvalidRequirement, Requirement, parse_requirement
from .steps import Step

if TYPE_CHECKING:
    from .net import Deadline

PYPI_SIMPLE = "https://pypi.org/simple/"


@record(frozen=True)
class WheelQuery:
    index_url: str
    project: str
    version: str
    python: str | None
    platform: str | None
    find_links: bool = False


Checker = Callable[[WheelQuery], "tuple[bool | None, str]"]


def default_checker(q: WheelQuery) -> tuple[bool | None, str]:
    """One check, with a deadline of its own."""
    return index_checker()(q)


def index_checker(deadline: Deadline | None = None) -> Checker:
    """Checks against the real indexes; with ``deadline``, all of them must be over by then (later ones give
    up without a request), so a slow index cannot hold `plan --verify` once per wheel."""
    from .index import check_wheel

    def check(q: WheelQuery) -> tuple[bool | None, str]:
        result = check_wheel(
            q.index_url, q.project, q.version, q.python, q.platform, find_links=q.find_links, deadline=deadline
        )
        return result.exists, result.note or f"{q.project}=={q.version} on {result.page}"

    return check


def platform_tag(runtime: Runtime) -> str:
    machine = getattr(runtime, "machine", "") or "x86_64"
    if runtime.os == "windows":
        return "win_amd64"
    if runtime.os == "macos":
        return f"macosx_11_0_{'arm64' if machine in ('arm64', 'aarch64') else 'x86_64'}"
    return f"manylinux_2_17_{'aarch64' if machine in ('arm64', 'aarch64') else 'x86_64'}"


def queries_for(option: Option, runtime: Runtime) -> list[WheelQuery]:
    """What each pinned requirement of the option's pip steps asks of its index."""
    python = str(runtime.python.series) if runtime.python else None
    out = []
    for step in option.steps:
        if step.kind == "conda" and "create" in step.argv:
            for arg in step.argv:
                if arg.startswith("python="):
                    python = arg.split("=", 1)[1]
        if step.kind == "pip":
            out.extend(_pip_queries(step, python, platform_tag(runtime)))
    return out


def _pip_queries(step: Step, python: str | None, platform: str) -> list[WheelQuery]:
    args = step.pip_args()[1:]  # after "install"
    index = os.environ.get("PIP_INDEX_URL") or PYPI_SIMPLE
    find_links = ""
    reqs: list[Requirement] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--index-url", "-i") and i + 1 < len(args):
            index, i = args[i + 1], i + 2
            continue
        if a in ("--find-links", "-f") and i + 1 < len(args):
            find_links, i = args[i + 1], i + 2
            continue
        if a.startswith("-"):
            i += 2 if a == "--extra-index-url" else 1
            continue
        with contextlib.suppress(InvalidRequirement):
            reqs.append(parse_requirement(a))
        i += 1
    out = []
    for req in reqs:
        pins = [s.version for s in req.specifier if s.operator in ("==", "===") and "*" not in s.version]
        if not pins:
            continue
        where, flat = (find_links, True) if find_links else (index, False)
        out.append(WheelQuery(where, req.name, pins[0], python, platform, flat))
    return out


def verify_plan(plan: Plan, runtime: Runtime, check: Checker | None = None) -> None:
    """Drop options whose pinned wheels do not exist; note what was checked and what could not be.
    ``check``: default, the real indexes, all within one ``net.Deadline``."""
    if check is None:
        from .net import Deadline

        check = index_checker(Deadline.start(what="checking the index"))
    seen: dict[WheelQuery, tuple[bool | None, str]] = {}
    for rp in plan.requirements:
        kept: list[Option] = []
        for option in rp.options:
            missing = []
            for q in queries_for(option, runtime):
                if q not in seen:
                    seen[q] = check(q)
                exists, note = seen[q]
                where = f"{q.project}=={q.version} for Python {q.python or '?'} on {q.platform}"
                if exists is False:
                    missing.append(f"no wheel of {where} ({note})")
                elif exists is None:
                    option.notes.append(f"could not verify {where}: {note}")
                else:
                    option.notes.append(f"verified: a wheel of {where} exists")
            if missing:
                rp.dropped.append(f"{option.title}: dropped, {'; '.join(missing)}")
            else:
                kept.append(option)
        rp.options = kept
