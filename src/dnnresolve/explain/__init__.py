"""`dnnresolve explain`: recognise CUDA / cuDNN / driver errors in a text or a whole log and decode them.

- ``catalog``: the known messages (data/error_catalog.toml), validated and compiled
- ``scan``: streaming search of every known error, with line numbers (``diagnose``, ``scan``)
- ``decoders``: the numbers in a message turned into versions and rules
- ``diagnosis``: the result, root causes first
- ``fixes``: steps for a diagnosis, concrete when the machine is known (``fixes_for``)
- ``source``: the command's input
"""

from __future__ import annotations

from .diagnosis import Consequence, Diagnosis
from .scan import ScanResult, diagnose, scan

__all__ = ["Consequence", "Diagnosis", "ScanResult", "diagnose", "scan"]
