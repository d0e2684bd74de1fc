"""Package names as PyPI compares them, without importing ``packaging.utils`` (which pulls in
``packaging.tags``, logging and subprocess: a cost every command would pay at start-up)."""

from __future__ import annotations

import re

_RUNS = re.compile(r"[-_.]+")


def canonicalize_name(name: str) -> str:
    """PEP 503 normalisation: ``Tensorflow_GPU`` -> ``tensorflow-gpu`` (as ``packaging.utils`` does)."""
    return _RUNS.sub("-", name).lower()
