"""What ``check FILE --fleet DIR`` plans on each group of nodes: the pip requirement lines of the files that name a
framework the matrix knows, each distinct one once, in file order. No I/O (the files are read already).

A conda line (``pytorch=2.1``) is not among them yet: the per-node verdicts cover what pip installs."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import UserError
from ..matrix import Matrix
from ..pkgname import canonicalize_name
from ..sources.interface import SourceFile
from ..specs import Requirement


def framework_requirements(sources: Sequence[SourceFile], matrix: Matrix) -> list[Requirement]:
    known = set(matrix.packages())
    found: dict[str, Requirement] = {}
    for source in sources:
        for located in source.requirements:
            req = located.requirement
            if req is None or located.constraint or canonicalize_name(req.name) not in known:
                continue
            found.setdefault(str(req), req)
    if not found:
        files = ", ".join(s.path for s in sources) or "the files given"
        raise UserError(
            "no pip requirement of a framework the compatibility matrix knows: nothing to plan per node", files
        )
    return list(found.values())
