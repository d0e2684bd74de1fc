"""Every command reads the machine again: what changed between two runs is in the second answer, however old the
files around it (#26: a replayed answer kept a Python after a pyenv switch, and missed a framework installed
with the first `pip install --user`). Real interpreters and a real shim on PATH; the real command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LONG_AGO = time.time() - 30 * 86400
# the interpreter a virtual environment was made from: a user site is only read outside one
BASE_PYTHON = getattr(sys, "_base_executable", "") or sys.executable


def _age(*paths: Path) -> None:
    """As a machine's files are: written long before the command runs."""
    for root in paths:
        for p in [root, *root.rglob("*")] if root.is_dir() else [root]:
            os.utime(p, (LONG_AGO, LONG_AGO), follow_symlinks=False)


def _detect(env: dict[str, str], cwd: Path) -> dict[str, object]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("DNNRESOLVE_", "VIRTUAL_ENV", "CONDA_", "PYENV"))}
    full.update(env)
    full.update(PYTHONPATH=str(REPO / "src"), DNNRESOLVE_NVML="0", NO_COLOR="1")
    argv = [sys.executable, "-m", "dnnresolve", "detect", "--json"]
    out = subprocess.run(argv, capture_output=True, text=True, env=full, cwd=cwd, timeout=120)
    assert out.returncode == 0, out.stderr
    data: dict[str, object] = json.loads(out.stdout)
    return data


def _shim(tmp_path: Path, target: str) -> tuple[Path, Path]:
    """A pyenv-style shim: ``python3`` on PATH runs whichever interpreter a version file names."""
    shims = tmp_path / "shims"
    shims.mkdir(exist_ok=True)
    version = tmp_path / "version-file"
    version.write_text(target + "\n")
    shim = shims / "python3"
    shim.write_text(f'#!/bin/sh\nexec "$(cat {version})" "$@"\n')
    shim.chmod(0o755)
    return shims, version


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="detection reads Linux machines")
def test_a_framework_installed_with_the_first_pip_install_user_is_seen(tmp_path: Path) -> None:
    shims, _ = _shim(tmp_path, BASE_PYTHON)
    userbase = tmp_path / "userbase"  # no user site yet: as before the first `pip install --user`
    cache = tmp_path / "cache"
    env = {"PATH": f"{shims}:/usr/bin:/bin", "PYTHONUSERBASE": str(userbase), "DNNRESOLVE_CACHE_DIR": str(cache)}
    _detect(env, tmp_path)  # a user's caches are not new either
    _age(tmp_path)
    first = _detect(env, tmp_path)
    assert not any(p["name"] == "torch" for p in first["packages"])  # type: ignore[attr-defined,index]
    major, minor = sys.version_info[:2]
    site = userbase / "lib" / f"python{major}.{minor}" / "site-packages"
    info = site / "torch-2.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.1.0\n")
    _age(userbase)
    second = _detect(env, tmp_path)
    assert {"name": "torch", "version": "2.1.0"}.items() <= next(
        p
        for p in second["packages"]
        if p["name"] == "torch"  # type: ignore[attr-defined,index]
    ).items()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="detection reads Linux machines")
def test_a_switched_interpreter_is_seen(tmp_path: Path) -> None:
    other = tmp_path / "python3.8"  # another interpreter: prints what the facts script asks, as Python 3.8 would
    facts = {
        "version": "3.8.10",
        "implementation": "CPython",
        "machine": "x86_64",
        "libc": ["glibc", "2.31"],
        "executable": str(other),
        "site": [],
    }
    other.write_text(f"#!/bin/sh\necho '{json.dumps(facts)}'\n")
    other.chmod(0o755)
    shims, version_file = _shim(tmp_path, sys.executable)
    env = {"PATH": f"{shims}:/usr/bin:/bin", "DNNRESOLVE_CACHE_DIR": str(tmp_path / "cache")}
    _detect(env, tmp_path)  # a user's caches are not new either
    _age(tmp_path)
    mine = ".".join(map(str, sys.version_info[:3]))
    assert _detect(env, tmp_path)["python"]["version"] == mine  # type: ignore[index]
    version_file.write_text(f"{other}\n")  # `pyenv local 3.8.10`: the shim is the same file, its target is not
    _age(version_file)
    assert _detect(env, tmp_path)["python"]["version"] == "3.8.10"  # type: ignore[index]
