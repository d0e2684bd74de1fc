from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from . import cluster as slurm


@pytest.fixture(scope="session")
def cluster() -> Iterator[slurm.Cluster]:
    """A real five-node Slurm cluster on this host (see cluster.py), for the whole session; skipped where Slurm is
    not installed (scripts/test installs slurm-wlm and munge where apt-get and root are at hand)."""
    missing = slurm.missing_programs()
    if missing:
        pytest.skip(f"Slurm is not installed (no {', '.join(missing)}): apt-get install slurm-wlm munge")
    if os.geteuid() != 0:
        pytest.skip("the test Slurm cluster runs its daemons as root (SlurmUser=root)")
    c = slurm.start()
    try:
        yield c
    finally:
        slurm.stop(c)
