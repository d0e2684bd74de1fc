"""`doctor`: the frameworks installed on this machine, each checked as a pinned requirement. No I/O."""

from __future__ import annotations

from .matrix import Matrix
from .model import Runtime
from .pkgname import canonicalize_name
from .specs import InvalidRequirement, Requirement, parse_requirement


def installed_requirements(runtime: Runtime, matrix: Matrix) -> list[Requirement]:
    """``name==version`` (local label kept: ``torch==2.1.0+cu118`` picks that variant) per known framework."""
    known = set(matrix.packages())
    out = []
    for p in runtime.packages:
        if canonicalize_name(p.name) not in known:
            continue
        try:
            out.append(parse_requirement(f"{p.name}=={p.version}"))
        except InvalidRequirement:
            continue
    return out
