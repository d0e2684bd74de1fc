"""The target machine of `check`: flags over ``--target`` over the project's [tool.dnnresolve] defaults.

`check` vets files for a machine that is usually not this one (CI checks for the cluster), so unlike
`plan` it never starts from this machine: no target given means internal consistency only.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from .errors import UserError
from .machine import Runtime
from .matrix import Matrix
from .records import replace
from .sources.interface import SourceFile

TARGET_KEYS = ("driver", "gpu", "python", "cuda", "cudnn", "os")


def check_target(args: argparse.Namespace, sources: Sequence[SourceFile], matrix: Matrix) -> Runtime | None:
    from .detect.overrides import runtime_from_flags

    runtime: Runtime | None = None
    defaults = next((s for s in sources if s.target), None)
    if defaults is not None:
        unknown = sorted(set(defaults.target) - set(TARGET_KEYS))
        if unknown:
            raise UserError(
                f"[tool.dnnresolve]: unknown key {unknown[0]!r} (known: {', '.join(TARGET_KEYS)})",
                defaults.path,
                defaults.target_line,
            )
        given = {k: str(defaults.target[k]) for k in TARGET_KEYS if defaults.target.get(k) is not None}
        where = f"{defaults.path}:{defaults.target_line} [tool.dnnresolve]"
        try:
            runtime = runtime_from_flags(Runtime(python=None), matrix=matrix, **given)
        except UserError as exc:
            raise UserError(exc.message, defaults.path, defaults.target_line) from exc
        for key in given:
            runtime.sources[key] = where
        runtime.cuda = [replace(c, found_in=where) for c in runtime.cuda]
        runtime.cudnn = [replace(c, found_in=where) for c in runtime.cudnn]
        runtime.gpus = [replace(g, found_in=where) for g in runtime.gpus]
    if getattr(args, "target", None):
        from .profile import load_profile

        runtime = load_profile(args.target)
    flags = {k: getattr(args, k, None) for k in TARGET_KEYS}
    if any(flags.values()):
        runtime = runtime_from_flags(runtime or Runtime(python=None), matrix=matrix, **flags)
    return runtime
