from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Property tests: a bounded number of examples in scripts/test ("ci"); HYPOTHESIS_PROFILE=long for a longer run.
settings.register_profile("ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=20000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

REPO = Path(__file__).resolve().parents[1]


def pytest_configure(config: pytest.Config) -> None:
    """The test session's own user cache: tests that load a matrix in this process compile it there, never into
    the developer's ~/.cache (run_cli gives each command its own)."""
    import tempfile

    # a terminal's size is each test's to give: pytest-xdist's workers inherit COLUMNS=80 and LINES=24, which made
    # a command run on a 120-column pseudo-terminal fit 80 columns
    for name in ("COLUMNS", "LINES"):
        os.environ.pop(name, None)
    if not os.environ.get("DNNRESOLVE_CACHE_DIR"):
        os.environ["DNNRESOLVE_CACHE_DIR"] = _SESSION_CACHE[0] = tempfile.mkdtemp(prefix="dnnresolve-test-cache-")


def pytest_unconfigure(config: pytest.Config) -> None:
    import shutil

    if _SESSION_CACHE[0]:
        shutil.rmtree(_SESSION_CACHE[0], ignore_errors=True)


_SESSION_CACHE = [""]


@pytest.fixture
def run_cli(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run the real `dnnresolve` command line in a subprocess, as a user would."""

    def run(*args: str, env: dict[str, str] | None = None, input: str | None = None, cwd: Path | None = None):  # type: ignore[no-untyped-def]
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("DNNRESOLVE_")}
        full_env.update({"NO_COLOR": "1", "PYTHONPATH": str(REPO / "src")})
        # Never the user's own cached matrix update; loopback servers never through a proxy.
        full_env.update({"DNNRESOLVE_CACHE_DIR": str(tmp_path / "user-cache"), "NO_PROXY": "127.0.0.1,localhost,::1"})
        full_env.update(env or {})
        return subprocess.run(
            [sys.executable, "-m", "dnnresolve", *args],
            capture_output=True,
            text=True,
            env=full_env,
            input=input,
            cwd=cwd or tmp_path,
            timeout=120,
        )

    return run
