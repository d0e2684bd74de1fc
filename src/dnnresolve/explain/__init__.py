"""`dnnresolve explain`: recognise CUDA / cuDNN / driver errors in a text or a whole log and decode them.

- ``catalog``: the known messages (data/error_catalog.toml), validated and compiled
- ``scanner``: streaming search of every known error, with line numbers (``diagnose``, ``scan``, ``scan_file``)
- ``segments``: a log file searched as bytes, in parallel, for the lines worth decoding
- ``decoders``: the numbers in a message turned into versions and rules
- ``diagnosis``: the result, root causes first
- ``fixes``: the catalog's generic steps for a diagnosis (``dnnresolve.advice`` makes them concrete)
- ``source``: the command's input
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .diagnosis import Consequence, Diagnosis
    from .scanner import ScanResult, diagnose, scan

__all__ = ["Consequence", "Diagnosis", "ScanResult", "diagnose", "scan"]


def __getattr__(name: str) -> Any:
    # imported on first use, so that a big log's search workers (``segments``) start without the catalog
    if name in ("Consequence", "Diagnosis"):
        from . import diagnosis

        return getattr(diagnosis, name)
    if name in ("ScanResult", "diagnose", "scan"):
        from . import scanner

        return getattr(scanner, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
