"""A progress bar for a big log on a terminal; nothing extra when piped or with --json."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLASSIC = (
    "E tensorflow/stream_executor/cuda/cuda_dnn.cc:347] Loaded runtime CuDNN library: 5005 (compatibility version "
    "5000) but source was compiled with 5103 (compatibility version 5100)\n"
)


def _big_log(path: Path) -> None:
    filler = b"I0101 00:00:00.000000 1 train.py:10] step 1234 loss 0.4321 learning rate 0.001 batch 64 of 1000\n"
    with path.open("wb") as f:
        for _ in range(40):
            f.write(filler * 10000)  # about 1 MB each
        f.write(CLASSIC.encode())


def _run_on_terminal(args: list[str], extra_env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run the CLI with its stdout and stderr on a pseudo-terminal; return exit status and everything shown."""
    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "TERM": "xterm", "COLUMNS": "100", **(extra_env or {})}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, "-m", "dnnresolve", *args], stdout=follower, stderr=follower, env=env)
    os.close(follower)
    shown = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
        elif proc.poll() is not None:
            break
    os.close(leader)
    return proc.wait(timeout=30), shown.decode("utf-8", "replace")


def test_progress_on_a_terminal_only(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "train.log"
    _big_log(log)
    status, shown = _run_on_terminal(["explain", "--file", str(log)])
    assert status == 1
    assert f"reading {log}" in shown  # the bar's label, drawn while the log is read
    assert "cuDNN version mismatch" in shown
    piped = run_cli("explain", "--file", str(log))
    assert piped.returncode == 1 and piped.stderr == "" and "reading" not in piped.stdout
    status, shown = _run_on_terminal(["explain", "--file", str(log), "--json"])
    assert status == 1 and "reading" not in shown


def test_check_over_many_files_shows_progress_on_a_terminal_only(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    for i in range(60):
        (tmp_path / f"requirements-{i}.txt").write_text("torch==2.1.0\nnumpy==1.26.4\n")
    files = [str(p) for p in sorted(tmp_path.glob("requirements-*.txt"))]
    status, shown = _run_on_terminal(["check", *files])
    assert "reading requirement files" in shown
    piped = run_cli("check", *files)
    assert piped.returncode == status and "reading requirement files" not in piped.stdout + piped.stderr


def test_update_shows_its_download_on_a_terminal(tmp_path: Path) -> None:
    import hashlib

    from dnnresolve.matrix import packaged_matrix_path

    from .servers import Reply, serve

    newer = packaged_matrix_path().read_bytes() + b"\n# a newer matrix\n"
    routes = {
        "/m/compat_matrix.toml": Reply(newer, content_type="text/plain"),
        "/m/compat_matrix.toml.sha256": Reply(f"{hashlib.sha256(newer).hexdigest()}  compat_matrix.toml\n".encode()),
    }
    env = {"DNNRESOLVE_CACHE_DIR": str(tmp_path / "cache"), "NO_PROXY": "127.0.0.1,localhost"}
    with serve(routes) as srv:
        status, shown = _run_on_terminal(["update", "--url", srv.url("/m/compat_matrix.toml")], env)
    assert status == 0, shown
    assert "downloading the matrix" in shown and "updated the compatibility matrix" in shown
