"""Real processes for the tests of stopping: a `dnnresolve` command started as a user starts it, the fixture
programs it runs (they leave a mark named by their pid in FIXTURE_MARKS), and what is left of them after."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"


@contextmanager
def marks_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory the fixture programs mark; afterwards every process started with it in its environment
    (detached ones included) is killed, so a failed test leaves no stray sleep behind."""
    marks = tmp_path / "marks"
    marks.mkdir()
    try:
        yield marks
    finally:
        for pid in started_with(marks):
            with suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def dnnresolve(
    marks: Path, tmp_path: Path, *args: str, extra_env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    """``python -m dnnresolve ARGS`` in the background, with the target's PATH /usr/bin:/bin and NVML off."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DNNRESOLVE_")}
    env.update(
        {
            "PYTHONPATH": str(SRC),
            "DNNRESOLVE_CACHE_DIR": str(tmp_path / "cache"),
            "DNNRESOLVE_ROOT_PROGRAMS": "1",
            "DNNRESOLVE_NVML": "0",
            "FIXTURE_MARKS": str(marks),
            "NO_COLOR": "1",
            "PATH": "/usr/bin:/bin",
        }
    )
    env.update(extra_env or {})
    return subprocess.Popen(
        [sys.executable, "-m", "dnnresolve", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )


def finish(proc: subprocess.Popen[str], within: float) -> tuple[int, str, str]:
    """The command's exit status and output; fails the test if it has not ended ``within`` seconds."""
    try:
        out, err = proc.communicate(timeout=within)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"dnnresolve did not end within {within:g}s")
    return proc.returncode, out, err


def wait_for_marks(marks: Path, count: int, within: float = 20, name: str = "") -> list[str]:
    """The names of the marks once ``count`` are there (``name``: only that one)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        found = sorted(p.name for p in marks.iterdir() if not p.name.endswith(".tmp") and (not name or p.name == name))
        if len(found) >= count:
            return found
        time.sleep(0.05)
    pytest.fail(f"the fixture programs did not start within {within:g}s")


def _stat(pid: int) -> tuple[str, int] | None:
    """A live process's state letter and process group; None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    state, _ppid, pgrp = text.rpartition(")")[2].split()[:3]
    return state, int(pgrp)


def alive(pid: int) -> bool:
    st = _stat(pid)
    return st is not None and st[0] != "Z"  # a zombie has ended: only its exit status is left to collect


def group_members(pgid: int) -> list[int]:
    """Processes still running in process group ``pgid``."""
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = _stat(int(entry))
            if st is not None and st[0] != "Z" and st[1] == pgid:
                members.append(int(entry))
    return members


def gone_soon(pids: list[int], within: float = 3) -> list[int]:
    """Of ``pids``, those still running (or with a group still running) after ``within`` seconds."""
    deadline = time.monotonic() + within
    while True:
        left = [p for p in pids if alive(p) or group_members(p)]
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.05)


def started_with(marks: Path) -> list[int]:
    """Processes whose environment names this marks directory."""
    needle = f"FIXTURE_MARKS={marks}\0".encode()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                environ = Path(f"/proc/{entry}/environ").read_bytes() + b"\0"
            except OSError:
                continue
            if needle in environ:
                found.append(int(entry))
    return found
