from __future__ import annotations

import os
import shutil
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
    config.addinivalue_line(
        "markers", "cold_cache: run_cli starts from an empty user cache (tests of what the cache holds and when)"
    )
    if not os.environ.get("DNNRESOLVE_CACHE_DIR"):
        os.environ["DNNRESOLVE_CACHE_DIR"] = _SESSION_CACHE[0] = tempfile.mkdtemp(prefix="dnnresolve-test-cache-")
    # Each command a test runs imports dnnresolve in a new interpreter: where no bytecode may be written into the
    # checkout (PYTHONDONTWRITEBYTECODE), compiling every module anew each time cost a tenth of a second a command;
    # the session keeps that bytecode in a directory of its own instead
    if os.environ.get("PYTHONDONTWRITEBYTECODE") and not os.environ.get("PYTHONPYCACHEPREFIX"):
        del os.environ["PYTHONDONTWRITEBYTECODE"]
        os.environ["PYTHONPYCACHEPREFIX"] = _SESSION_PYCACHE[0] = tempfile.mkdtemp(prefix="dnnresolve-test-pyc-")


def pytest_unconfigure(config: pytest.Config) -> None:
    for made in (_SESSION_CACHE[0], _SESSION_PYCACHE[0]):
        if made:
            shutil.rmtree(made, ignore_errors=True)


_SESSION_CACHE = [""]
_SESSION_PYCACHE = [""]


CUDNN_MISMATCH = "Loaded runtime CuDNN library: 5005 (compatibility version 5000) but source was compiled with 5103"


@pytest.fixture(scope="session")
def compiled_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkout's matrix, error catalog and vocabulary compiled once, by a real command, into a user cache's
    ``compiled/``: a command's first run compiles them (half a second of CPU), every later run reads them."""
    cache = tmp_path_factory.mktemp("compiled-data") / "cache"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DNNRESOLVE_")}
    env.update({"PYTHONPATH": str(REPO / "src"), "DNNRESOLVE_CACHE_DIR": str(cache)})
    argv = [sys.executable, "-m", "dnnresolve", "explain", "--no-detect", CUDNN_MISMATCH]
    r = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert {p.name.split("-")[0] for p in (cache / "compiled").iterdir()} == {"matrix", "catalog", "vocabulary"}
    return cache / "compiled"


def seed_cache(cache: Path, compiled: Path) -> None:
    """Give a fresh user cache the compiled data, as a user's cache holds it after the first run (private, as
    ``cachedir`` wants it)."""
    if (cache / "compiled").exists():
        return
    (cache / "compiled").mkdir(mode=0o700, parents=True)
    cache.chmod(0o700)
    for entry in compiled.iterdir():
        shutil.copy2(entry, cache / "compiled" / entry.name)


@pytest.fixture
def run_cli(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run the real `dnnresolve` command line in a subprocess, as a user would: in a user cache of the test's own
    that holds the compiled data, as after a first run (tests marked ``cold_cache`` start from an empty one)."""
    cold = request.node.get_closest_marker("cold_cache") is not None
    compiled = None if cold else request.getfixturevalue("compiled_data")

    def run(*args: str, env: dict[str, str] | None = None, input: str | None = None, cwd: Path | None = None):  # type: ignore[no-untyped-def]
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("DNNRESOLVE_")}
        full_env.update({"NO_COLOR": "1", "PYTHONPATH": str(REPO / "src")})
        # Never the user's own cached matrix update; loopback servers never through a proxy.
        full_env.update({"DNNRESOLVE_CACHE_DIR": str(tmp_path / "user-cache"), "NO_PROXY": "127.0.0.1,localhost,::1"})
        full_env.update(env or {})
        if compiled is not None and full_env["DNNRESOLVE_CACHE_DIR"] == str(tmp_path / "user-cache"):
            seed_cache(tmp_path / "user-cache", compiled)
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
