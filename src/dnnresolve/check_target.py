"""The target machine of `check`: flags over ``--target`` over the project's [tool.dnnresolve] defaults.

`check` vets files for a machine that is usually not this one (CI checks for the cluster), so unlike
`plan` it never starts from this machine: no target given means internal consistency only.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from .errors import UserError
from .matrix import Matrix
from .model import Runtime
from .runtime_flags import apply_flags
from .sources.interface import SourceFile

TARGET_KEYS = ("driver", "gpu", "python", "cuda", "cudnn", "os")


def check_target(args: argparse.Namespace, sources: Sequence[SourceFile], matrix: Matrix) -> Runtime | None:
    if getattr(args, "target", None):
        raise UserError("--target PROFILE.json is not supported yet in this version; give --driver/--gpu/--python")
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
        ns = argparse.Namespace(**{k: defaults.target.get(k) for k in TARGET_KEYS})
        where = f"{defaults.path}:{defaults.target_line} [tool.dnnresolve]"
        try:
            runtime = apply_flags(Runtime(), ns, matrix)
        except UserError as exc:
            raise UserError(exc.message, defaults.path, defaults.target_line) from exc
        for key in ("driver", "python"):
            if key in runtime.sources:
                runtime.sources[key] = where
        runtime.cuda = [c.__class__(c.version, c.path, where) for c in runtime.cuda]
        runtime.cudnn = [c.__class__(c.version, c.path, where, c.loads_first) for c in runtime.cudnn]
        runtime.gpus = [g.__class__(g.name, g.compute_capability, g.memory_mib, where) for g in runtime.gpus]
    if any(getattr(args, k, None) for k in TARGET_KEYS):
        runtime = apply_flags(runtime or Runtime(), args, matrix)
    return runtime
