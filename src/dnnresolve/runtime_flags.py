"""The runtime a command works against: this machine (or --root), else --target, then the flags on top."""

from __future__ import annotations

import argparse

from .machine import Runtime
from .matrix import Matrix

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .detect.context import ProbeContext

_started: list[ProbeContext] = []  # detection whose programs a command started early (start_detection)


def _given(args: argparse.Namespace) -> frozenset[str]:
    return frozenset(k for k in ("cuda", "cudnn", "driver", "gpu") if getattr(args, k, None))


def start_detection(args: argparse.Namespace) -> None:
    """Where the command will detect the machine, start the probes' programs now (nvidia-smi, the target Python:
    each a process start of its own), so that they run while the command loads its data and reads its input."""
    if getattr(args, "target", None) or getattr(args, "no_detect", False):
        return
    from .detect.machine import start_detection as start

    timeout = getattr(args, "timeout", None) or 5.0
    _started.append(start(root=getattr(args, "root", None), timeout=timeout, given=_given(args)))


def stop_detection() -> None:
    """Stop what ``start_detection`` started and no detection used (the command failed before it)."""
    while _started:
        _started.pop().close()


def started() -> ProbeContext | None:
    """The context ``start_detection`` started, handed over once."""
    return _started.pop() if _started else None


def runtime_for(args: argparse.Namespace, matrix: Matrix, pip: bool = True) -> Runtime:
    """--target PROFILE.json replaces detection; --no-detect starts from nothing; flags override either. ``pip``:
    detection reads pip's configuration (``detect_runtime``)."""
    from .detect.overrides import runtime_from_flags

    target = getattr(args, "target", None)
    if target:
        from .profile import load_profile

        base = load_profile(target)
    elif getattr(args, "no_detect", False):
        base = Runtime()
    else:
        from .detect.machine import detect_runtime

        base = detect_runtime(
            root=getattr(args, "root", None), matrix=matrix, given=_given(args), started=started(), pip=pip
        )
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
