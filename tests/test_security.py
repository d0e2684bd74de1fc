"""The security promises of README.md ("Security and reliability"), each tested where it could break:

- text from inputs is never executed: generated scripts and commands are quoted, and run in a real shell
  with stand-in programs, crafted requirement lines and profile paths stay plain arguments;
- `install` never runs without consent;
- credentials in URLs are redacted in all output;
- no command writes a file outside the cache directory.

`update`'s own promises (atomic write, checksum, https only off loopback) are in test_update.py.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dnnresolve.steps import Step

from .servers import serve
from .test_update import MATRIX_PATH, NEWER
from .test_update import routes as update_routes

Run = Callable[..., Any]
REPO = Path(__file__).resolve().parents[1]
EVIL = "/opt/x\ntouch PWNED1\n$(touch PWNED2)`touch PWNED3`'; touch PWNED4; '\"$(touch PWNED5)\""
STUB = """#!/bin/sh
# stands in for {name}: records its arguments, one per line, and succeeds
for a in "$@"; do printf '%s\\0' "$a"; done >> "$STUB_LOG"
printf '\\036' >> "$STUB_LOG"
"""


def evil_profile(with_module: bool) -> dict[str, Any]:
    """A K20m node whose cuDNN 5.1 path (and, optionally, module name) is crafted to inject commands."""
    profile: dict[str, Any] = {
        "schema": "dnnresolve-runtime/1",
        "os": "linux",
        "driver": "375.26",
        "gpus": [{"name": "Tesla K20m", "compute_capability": "3.5"}],
        "cuda": [{"version": "8.0.61", "path": "/usr/local/cuda-8.0", "found_in": "x"}],
        "cudnn": [
            {
                "version": "5.0.5",
                "path": "/usr/local/cuda-8.0",
                "found_in": "x",
                "loads_first": True,
                "lib_dir": "/usr/local/cuda-8.0/lib64",
            },
            {"version": "5.1.10", "path": EVIL, "found_in": EVIL, "loads_first": False, "lib_dir": EVIL + "/lib64"},
        ],
        "python": {"version": "3.5.2"},
    }
    if with_module:
        profile["modules"] = [{"name": "cudnn", "version": "5.1;touch PWNED6\n touch PWNED7", "loaded": False}]
    return profile


def run_script_with_stubs(tmp_path: Path, script: str) -> list[list[str]]:
    """Run a generated script in bash, with python, conda and module as stand-ins; return what each got."""
    stubs = tmp_path / "stubs"
    stubs.mkdir(exist_ok=True)
    for name in ("python", "conda", "module"):
        (stubs / name).write_text(STUB.format(name=name))
        (stubs / name).chmod(0o755)
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    log = tmp_path / "stub.log"
    log.write_text("")
    env = {"PATH": f"{stubs}:/usr/bin:/bin", "STUB_LOG": str(log), "HOME": str(work), "LD_LIBRARY_PATH": "/lib"}
    proc = subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert not list(tmp_path.rglob("PWNED*")), "a crafted input ran as a command"
    return [record.split("\0")[:-1] for record in log.read_text().split("\x1e")[:-1]]


def test_a_requirement_line_crafted_to_inject_is_refused(run_cli: Run, tmp_path: Path) -> None:
    for command in (["plan", "--format", "sh"], ["install", "--dry-run"], ["install", "--yes"]):
        r = run_cli(*command, "torch==2.1; rm -rf ~", "--no-detect")
        assert r.returncode == 2 and r.stdout == ""
        assert "not a requirement: 'torch==2.1; rm -rf ~'" in r.stderr or "is not a requirement" in r.stderr
    (tmp_path / "requirements.txt").write_text("torch==2.1; rm -rf ~\n")
    r = run_cli("check", "requirements.txt")
    assert r.returncode == 2 and "requirements.txt:1: not a valid requirement 'torch==2.1; rm'" in r.stderr


def test_shell_text_inside_a_valid_requirement_stays_one_argument(run_cli: Run, tmp_path: Path) -> None:
    spec = "tinypkg==1.0; os_name != \"$(touch PWNED1)`touch PWNED2`'; touch PWNED3; '\""
    r = run_cli("install", spec, "--no-detect", "--dry-run", "--json")
    assert r.returncode == 0, r.stderr
    [step] = json.loads(r.stdout)["steps"]
    assert step["argv"] == ["python", "-m", "pip", "install", spec]
    assert run_script_with_stubs(tmp_path, step["shell"]) == [["-m", "pip", "install", spec]]
    r = run_cli("plan", spec, "--no-detect", "--format", "sh")
    run_script_with_stubs(tmp_path, r.stdout)


@pytest.mark.parametrize("with_module", [True, False])
def test_plan_sh_from_a_crafted_profile_runs_nothing_of_it(run_cli: Run, tmp_path: Path, with_module: bool) -> None:
    (tmp_path / "profile.json").write_text(json.dumps(evil_profile(with_module)))
    r = run_cli("plan", "tensorflow-gpu==1.0.0", "--no-detect", "--target", "profile.json", "--format", "sh")
    assert r.returncode == 1, r.stderr
    ran = run_script_with_stubs(tmp_path, r.stdout)
    if with_module:
        assert ran[0] == ["load", "cudnn/5.1;touch PWNED6\n touch PWNED7"]
    else:  # the crafted path is exported as it is, and the LD_LIBRARY_PATH already set is kept after it
        script = r.stdout + '\nprintf "%s" "$LD_LIBRARY_PATH" > ld_library_path\n'
        run_script_with_stubs(tmp_path, script)
        assert (tmp_path / "work" / "ld_library_path").read_text() == EVIL + "/lib64:/lib"
    assert ran[-1] == ["-m", "pip", "install", "tensorflow-gpu==1.0.0"]


def test_step_values_expand_only_our_own_variables() -> None:
    step = Step("shell", "x", env=(("LD_LIBRARY_PATH", "/opt/$(id) ${HOME}:$LD_LIBRARY_PATH"),))
    assert step.shell == "export LD_LIBRARY_PATH='/opt/$(id) ${HOME}:'\"$LD_LIBRARY_PATH\""
    template = Step("shell", "x", env=(("LD_LIBRARY_PATH", "$HOME/cudnn/cuda/lib64:$LD_LIBRARY_PATH"),))
    assert template.shell == 'export LD_LIBRARY_PATH="$HOME/cudnn/cuda/lib64:$LD_LIBRARY_PATH"'


def test_install_asks_on_a_terminal_and_no_means_nothing_runs(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DNNRESOLVE_")}
    env.update(NO_COLOR="1", PYTHONPATH=str(REPO / "src"), DNNRESOLVE_CACHE_DIR=str(tmp_path / "cache"))
    env["PIP_INDEX_URL"] = "http://127.0.0.1:9/simple"  # were pip to run, it could fetch nothing
    argv = [sys.executable, "-m", "dnnresolve", "install", "tinypkg==1.0", "--no-detect"]
    pid, fd = pty.fork()
    if pid == 0:  # the child: the CLI on a terminal
        os.chdir(tmp_path)
        os.execve(argv[0], argv, env)
    seen = b""
    deadline = time.monotonic() + 60
    while b"[y/N]" not in seen and time.monotonic() < deadline:
        if select.select([fd], [], [], 1)[0]:
            seen += os.read(fd, 4096)
    os.write(fd, b"n\n")
    while time.monotonic() < deadline:
        if select.select([fd], [], [], 1)[0]:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    _, status = os.waitpid(pid, 0)
    text = seen.decode(errors="replace")
    assert "Run 1 pip step(s) with" in text
    assert "cancelled; nothing was installed" in text
    assert "step 1 of 1" not in text
    assert os.waitstatus_to_exitcode(status) == 2


SECRET = "s3cr3tpw"


def test_credentials_in_urls_never_reach_the_output(run_cli: Run, tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text(
        f"--index-url https://alice:{SECRET}@pypi.example.org/simple\n"
        f"--extra-index-url https://bob:{SECRET}@download.pytorch.org/whl/cu121\n"
        f"torch==2.1.0\ntensorflow-gpu==1.0.0\nmylib @ https://carol:{SECRET}@example.org/mylib-1.0.whl\n"
    )
    log = f"pip: from https://dave:{SECRET}@pypi.example.org/simple/torch/\n" + (
        "CUDA driver version is insufficient for CUDA runtime version\n"
    )
    (tmp_path / "run.log").write_text(log)
    runs = [
        run_cli("check", "requirements.txt", "--driver", "375.26", *fmt)
        for fmt in ([], ["--json"], ["--format", "markdown"], ["--format", "sarif"])
    ]
    runs += [
        run_cli("explain", "--file", "run.log"),
        run_cli("explain", "--file", "run.log", "--json"),
        run_cli("plan", f"torch @ https://erin:{SECRET}@example.org/torch.whl", "--no-detect"),
        run_cli("install", f"mylib @ https://frank:{SECRET}@example.org/mylib.whl", "--no-detect", "--dry-run"),
        run_cli("update", "--url", f"http://gina:{SECRET}@example.org/compat_matrix.toml"),
    ]
    for r in runs:
        assert SECRET not in r.stdout + r.stderr, r.args
    assert sum("***@" in r.stdout + r.stderr for r in runs) >= 6


def snapshot(root: Path, skip: Path) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if Path(dirpath, d) != skip]
        for name in dirnames + filenames:
            st = os.lstat(os.path.join(dirpath, name))
            out[os.path.relpath(os.path.join(dirpath, name), root)] = (st.st_size, st.st_mtime_ns)
    return out


def test_no_command_writes_outside_the_cache_directory(run_cli: Run, tmp_path: Path) -> None:
    home, cache, project = tmp_path / "home", tmp_path / "user-cache", tmp_path / "project"
    for d in (home, project, tmp_path / "tmp"):
        d.mkdir()
    (project / "requirements.txt").write_text("torch==2.1.0\n")
    (project / "run.log").write_text("CUDA driver version is insufficient for CUDA runtime version\n")
    env = {
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "TMPDIR": str(tmp_path / "tmp"),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    profile = project / "profile.json"
    r = run_cli("detect", "--json", cwd=project, env=env)
    assert r.returncode == 0, r.stderr
    profile.write_text(r.stdout)
    before = snapshot(tmp_path, cache)
    target = ("--no-detect", "--target", str(profile))
    with serve(update_routes(NEWER)) as srv:
        commands = [
            ("detect",),
            ("detect", "--json"),
            ("explain", "--file", "run.log"),
            ("plan", "torch==2.1.0", *target),
            ("plan", "torch==2.1.0", *target, "--format", "sh"),
            ("check", "requirements.txt", "--format", "sarif"),
            ("doctor",),
            ("matrix", "torch"),
            ("update", "--url", srv.url(MATRIX_PATH)),
            ("matrix", "torch"),  # now from the cached update
            ("install", "torch==2.1.0", *target, "--dry-run"),
        ]
        for command in commands:
            r = run_cli(*command, cwd=project, env=env)
            assert r.returncode in (0, 1), (command, r.stderr)
    assert snapshot(tmp_path, cache) == before
    assert any(cache.rglob("*.toml")), "update wrote its matrix into the cache directory"


def test_the_cache_is_replaced_atomically_a_reader_never_sees_half_a_matrix(tmp_path: Path) -> None:
    """`update` writes a temporary file and renames it over the old one: a command reading the cache at the
    same moment sees the old matrix or the new one, whole, never a mixture or a truncated file."""
    from dnnresolve.cachedir import write_entry

    def _atomic_write(target: Path, data: bytes) -> None:
        write_entry(target.parent, target.name, data)

    target = tmp_path / "matrix.toml"
    versions = [bytes([65 + i]) * (8 * 2**20) for i in range(2)]  # 8 MiB each: a write takes a while
    _atomic_write(target, versions[0])
    seen: set[tuple[int, int]] = set()
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            data = target.read_bytes()
            seen.add((len(data), len(set(data))))

    worker = threading.Thread(target=reader)
    worker.start()
    try:
        for i in range(6):
            _atomic_write(target, versions[(i + 1) % 2])
    finally:
        stop.set()
        worker.join()
    assert seen == {(8 * 2**20, 1)}
    assert not [p for p in tmp_path.iterdir() if p.name != "matrix.toml"], "a temporary file was left behind"
