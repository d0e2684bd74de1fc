"""The runtime a command works against: this machine (or --root), else --target, then the flags on top."""

from __future__ import annotations

import argparse

from .matrix import Matrix
from .model import Runtime


def runtime_for(args: argparse.Namespace, matrix: Matrix) -> Runtime:
    """--target PROFILE.json replaces detection; --no-detect starts from nothing; flags override either."""
    from .detect.overrides import runtime_from_flags

    target = getattr(args, "target", None)
    if target:
        from .profile import load_profile

        base = load_profile(target)
    elif getattr(args, "no_detect", False):
        base = Runtime()
    else:
        from .detect.machine import detect_runtime

        flags = {k for k in ("cuda", "cudnn", "driver", "gpu") if getattr(args, k, None)}
        base = detect_runtime(root=getattr(args, "root", None), matrix=matrix, given=frozenset(flags))
    return runtime_from_flags(
        base,
        driver=getattr(args, "driver", None),
        cuda=getattr(args, "cuda", None),
        cudnn=getattr(args, "cudnn", None),
        gpu=getattr(args, "gpu", None),
        python=getattr(args, "python", None),
        os=getattr(args, "os", None),
        matrix=matrix,
    )
