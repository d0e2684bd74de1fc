"""`dnnresolve install`: real pip, a fresh virtual environment, a local index on 127.0.0.1."""

from __future__ import annotations

import json
import os
import signal
import site
import subprocess
import venv
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dnnresolve.install import run_steps
from dnnresolve.steps import Step

from .detect.procs import alive, dnnresolve, finish, marks_dir, wait_for_marks
from .servers import LocalServer, Reply, make_wheel, serve

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    wheel = make_wheel(tmp_path_factory.mktemp("wheels"), "tinypkg", "1.0")
    page = f'<html><body><a href="../../files/{wheel.name}">{wheel.name}</a></body></html>'
    routes = {
        f"/files/{wheel.name}": Reply(wheel.read_bytes()),
        "/simple/tinypkg/": Reply(page.encode(), content_type="text/html"),
    }
    with serve(routes) as srv:
        yield srv


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtual environment with its own pip; dnnresolve and its dependencies come from this checkout
    and the test environment through a .pth file (appended after the venv's own site-packages)."""
    root = tmp_path_factory.mktemp("venv") / "env"
    venv.EnvBuilder(with_pip=True).create(root)
    python = root / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
    (Path(purelib) / "dnnresolve-dev.pth").write_text("\n".join([str(REPO / "src"), *site.getsitepackages()]) + "\n")
    return root


def pip_env(index: LocalServer, tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DNNRESOLVE_", "PIP_", "PYTHON"))}
    env.update(
        {
            "NO_COLOR": "1",
            "NO_PROXY": "127.0.0.1,localhost",
            "PIP_INDEX_URL": index.url("/simple/"),
            "PIP_CONFIG_FILE": os.devnull,
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "PIP_NO_CACHE_DIR": "1",
            "PIP_NO_INPUT": "1",
            "DNNRESOLVE_CACHE_DIR": str(tmp / "cache"),
        }
    )
    return env


def dnnresolve_in(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(root / "bin" / "python"), "-m", "dnnresolve", *args],
        capture_output=True,
        text=True,
        env=env,
        input="",
        timeout=300,
    )


def test_install_yes_puts_the_package_into_the_environment(
    index: LocalServer, fresh_venv: Path, tmp_path: Path
) -> None:
    python = str(fresh_venv / "bin" / "python")
    probe = [python, "-c", "import tinypkg, sys; print(tinypkg.VERSION, tinypkg.__file__.startswith(sys.prefix))"]
    assert subprocess.run(probe, capture_output=True, timeout=60).returncode != 0

    r = dnnresolve_in(fresh_venv, pip_env(index, tmp_path), "install", "tinypkg==1.0", "--yes")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1. [pip: runs here] python -m pip install tinypkg==1.0" in r.stdout
    assert "dnnresolve: step 1 of 1: python -m pip install tinypkg==1.0" in r.stderr
    assert r.stdout.rstrip().endswith("done: 1 pip step(s) ran")
    after = subprocess.run(probe, capture_output=True, text=True, timeout=60)
    assert after.stdout.split() == ["1.0", "True"], after.stderr


def test_failing_step_stops_the_run_and_says_which(index: LocalServer, fresh_venv: Path, tmp_path: Path) -> None:
    r = dnnresolve_in(fresh_venv, pip_env(index, tmp_path), "install", "tinypkg==9.9", "tinypkg==1.0", "--yes")
    assert r.returncode == 1
    assert "step 1 of 2 failed (pip exited with status 1): python -m pip install tinypkg==9.9" in r.stdout
    assert "the 1 step(s) after it were not run" in r.stdout
    assert "step 2 of 2" not in r.stderr


def test_no_terminal_and_no_yes_refuses(run_cli: Callable[..., Any]) -> None:
    r = run_cli("install", "tinypkg==1.0", input="y\n")
    assert r.returncode == 2
    assert r.stderr == (
        "dnnresolve install: error: refusing to install without confirmation: no terminal to ask on (pass --yes)\n"
    )


def test_dry_run_prints_the_plans_steps_only(run_cli: Callable[..., Any]) -> None:
    target = ("--no-detect", "--driver", "550.54.15", "--gpu", "A100-SXM4-40GB", "--python", "3.11")
    r = run_cli("install", "torch==2.1.0", "tinypkg==1.0", *target, "--dry-run")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "Steps (dry run: nothing is run):",
        "  1. [pip: runs here] python -m pip install torch==2.1.0 torchvision==0.16.0 torchaudio==2.1.0 "
        "--index-url https://download.pytorch.org/whl/cu121",
        "     install torch==2.1.0 (CUDA 12.1 build)",
        "  2. [pip: runs here] python -m pip install tinypkg==1.0",
        "     install tinypkg==1.0 with pip",
    ]
    r = run_cli("install", "tinypkg==1.0", "--no-detect", "--dry-run", "--json")
    rec = json.loads(r.stdout)
    assert rec["dry_run"] is True and rec["steps"][0]["argv"] == ["python", "-m", "pip", "install", "tinypkg==1.0"]
    r = run_cli("install", "torch>>2", "--dry-run")
    assert r.returncode == 2 and "not a requirement" in r.stderr


def test_other_steps_are_left_to_the_user_and_failure_stops() -> None:
    steps = [
        Step("module", "load cuDNN 5.1", ("module", "load", "cudnn/5.1")),
        Step("pip", "pip's version", ("pip", "--version")),
        Step("manual", "upgrade the NVIDIA driver to 375.26 or newer", needs_root=True),
    ]
    outcome = run_steps(steps, child_stdout=subprocess.DEVNULL)
    assert outcome.ok and outcome.ran == [1] and outcome.for_user == [0, 2]

    started: list[int] = []
    bad = [
        Step("pip", "bad", ("pip", "no-such-pip-command")),
        Step("pip", "version", ("python", "-m", "pip", "--version")),
    ]
    outcome = run_steps(bad, child_stdout=subprocess.DEVNULL, on_start=lambda i, s: started.append(i))
    assert outcome.failed == 0 and outcome.failure.startswith("pip exited with status") and started == [0]


def test_step_shell_is_quoted_and_kinds_checked() -> None:
    conda = Step("conda", "cudnn", ("conda", "install", "-c", "nvidia", "cudnn>=8"))
    assert conda.shell == "conda install -c nvidia 'cudnn>=8'"
    assert Step("pip", "x", ("python3", "-m", "pip", "install", "x")).pip_args() == ["install", "x"]
    with pytest.raises(ValueError, match="unknown step kind"):
        Step("apt", "x", ("apt", "install", "x"))
    # A requirement crafted to inject stays one argument.
    evil = Step.pip_install("torch==2.1; rm -rf ~")
    assert evil.shell == "python -m pip install 'torch==2.1; rm -rf ~'"


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_a_signal_during_install_stops_pip_and_what_pip_started(signum: int, status: int, tmp_path: Path) -> None:
    """A signal to dnnresolve alone (a job manager's SIGTERM, a kill -INT) ends pip and its build step too,
    not only dnnresolve: the stand-in pip first on PYTHONPATH starts a child and hangs."""
    fake_pip = REPO / "tests/fixtures/bin/hung-pip"
    with marks_dir(tmp_path) as marks:
        proc = dnnresolve(
            marks,
            tmp_path,
            *("install", "tinypkg==1.0", "--yes", "--no-detect", "--offline"),
            extra_env={"PYTHONPATH": f"{fake_pip}{os.pathsep}{REPO / 'src'}"},
        )
        wait_for_marks(marks, 1, name="pip")
        pip, child = (int(p) for p in (marks / "pip").read_text().split())
        os.kill(proc.pid, signum)
        code, _out, err = finish(proc, within=10)
        assert code == status, err
        assert "Traceback" not in err
        assert not alive(pip) and not alive(child), "pip or its child outlived dnnresolve"


def test_install_passes_a_local_path_to_pip_and_skips_a_line_its_marker_excludes(run_cli: Callable[..., Any]) -> None:
    # pip installs `-e .` as written (nothing to check); a line for Windows only installs nothing on Linux
    r = run_cli(
        "install",
        "-e .",
        'torch==2.1.0; sys_platform == "win32"',
        "--no-detect",
        "--os",
        "linux",
        "--python",
        "3.11",
        "--dry-run",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    argvs = [s["argv"] for s in json.loads(r.stdout)["steps"]]
    assert argvs == [["python", "-m", "pip", "install", "-e", "."]], argvs
