"""Reading a machine (``machine.detect_runtime``), one module per probe. Importing the package costs nothing:
a command that is given its target (``--no-detect``, ``--target``) never loads the probes."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .machine import detect_runtime, installed_gpu_code
    from .overrides import runtime_from_flags

__all__ = ["detect_runtime", "installed_gpu_code", "runtime_from_flags"]


def __getattr__(name: str) -> Any:
    if name in ("detect_runtime", "installed_gpu_code"):
        from . import machine

        return getattr(machine, name)
    if name == "runtime_from_flags":
        from .overrides import runtime_from_flags

        return runtime_from_flags
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
