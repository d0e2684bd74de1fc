"""Malformed and hostile inputs (tests/fixtures/hostile/): each is one line on stderr naming file and line,
exit status 2, nothing on stdout and nothing written anywhere. BOMs and CRLF line ends are not hostile: they
read like any other file, with the right line numbers."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

HOSTILE = Path(__file__).resolve().parent / "fixtures" / "hostile"
Run = Callable[..., Any]


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every file and directory under ``root`` with its size and modification time, less the user cache
    directory (run_cli's DNNRESOLVE_CACHE_DIR), the one place dnnresolve may write (the parsed matrix)."""
    out: dict[str, tuple[int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if os.path.relpath(dirpath, root) == ".":
            dirnames[:] = [d for d in dirnames if d != "user-cache"]
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            out[os.path.relpath(p, root)] = (st.st_size, st.st_mtime_ns)
    return out


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The corpus copied into a project (a .git marks its root), with HOME inside tmp_path."""
    root = tmp_path / "project"
    shutil.copytree(HOSTILE, root)
    (root / ".git").mkdir()
    (tmp_path / "home").mkdir()
    return root


def run_hostile(run_cli: Run, tmp_path: Path, project: Path, *args: str) -> str:
    """Run the CLI on a hostile input; assert exit 2, no stdout, nothing written; return the error line."""
    env = {"HOME": str(tmp_path / "home"), "XDG_CACHE_HOME": str(tmp_path / "home" / ".cache")}
    before = snapshot(tmp_path)
    proc = run_cli(*args, cwd=project, env=env)
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert snapshot(tmp_path) == before
    return lines[0]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["check", "binary-junk.txt"], "binary-junk.txt:2: binary data, not a text file"),
        (["check", "invalid-utf8.txt"], "invalid-utf8.txt:2: not valid UTF-8 (byte 0xe9)"),
        (["check", "cycle-a.txt"], "cycle-b.txt:2: include cycle: cycle-a.txt -> cycle-b.txt -> cycle-a.txt"),
        (["check", "include-outside.txt"], "include-outside.txt:2: include '../../../../../../../../etc/passwd'"),
        (["check", "pyproject.toml"], "pyproject.toml:3: not valid TOML: nested too deeply"),
        (["check", "environment.yml"], "environment.yml:3: not valid YAML: nested too deeply"),
        (
            ["plan", "torch==2.1.0", "--no-detect", "--target", "deep-nesting.json"],
            "deep-nesting.json:2: not JSON: nested too deeply",
        ),
        (["check", "bom.txt", "--target", "deep-nesting.json"], "deep-nesting.json:2: not JSON: nested too deeply"),
        (
            ["plan", "torch==2.1.0", "--no-detect", "--target", "profile-wrong-types.json"],
            "profile-wrong-types.json: field 'gpus[0].compute_capability': expected a string, got float",
        ),
        (["plan", "torch==2.1.0", "--no-detect", "--target", "binary-junk.txt"], "binary-junk.txt:2: binary data"),
        (["explain", "--file", "binary-junk.log"], "binary-junk.log:1: not a text file"),
        (["check", "crlf.txt"], "crlf.txt:4: not a valid requirement 'tensorflow-gpu=1.0'"),
        (["check", "crlf-pyproject.toml"], "crlf-pyproject.toml:5: not a valid requirement 'torch=2'"),
        (["matrix", "--matrix", "pyproject.toml"], "pyproject.toml:3: not valid TOML: nested too deeply"),
        (["plan", "torch", "--no-detect", "--matrix", "pyproject.toml"], "pyproject.toml:3: not valid TOML: nested"),
    ],
)
def test_hostile_input_is_one_line_exit_2_nothing_written(
    run_cli: Run, tmp_path: Path, project: Path, args: list[str], expected: str
) -> None:
    (project / "deep-nesting.toml").rename(project / "pyproject.toml")
    (project / "deep-nesting.yml").rename(project / "environment.yml")
    line = run_hostile(run_cli, tmp_path, project, *args)
    assert line.startswith(f"dnnresolve {args[0]}: error: {expected}"), line


def test_a_200_mb_line_is_refused_at_its_line_quickly(run_cli: Run, tmp_path: Path, project: Path) -> None:
    huge = project / "huge.txt"
    with open(huge, "wb") as fh:
        fh.write(b"torch==2.1.0\n")
        chunk = b"a" * 2**20
        for _ in range(200):
            fh.write(chunk)
        fh.write(b"\n")
    line = run_hostile(run_cli, tmp_path, project, "check", "huge.txt")
    assert line == "dnnresolve check: error: huge.txt:2: line longer than 1 MiB: not a requirement file"
    (project / "requirements.txt").write_text("-r huge.txt\n")
    line = run_hostile(run_cli, tmp_path, project, "check", "requirements.txt")
    assert line == "dnnresolve check: error: huge.txt:2: line longer than 1 MiB: not a requirement file"
    line = run_hostile(run_cli, tmp_path, project, "explain", "--file", "huge.txt")
    assert line == "dnnresolve explain: error: huge.txt:2: line longer than 16 million characters: not a log"
    line = run_hostile(run_cli, tmp_path, project, "plan", "torch", "--no-detect", "--target", "huge.txt")
    assert line == "dnnresolve plan: error: huge.txt:2: line longer than 1 MiB: not a runtime profile"
    huge.unlink()


def test_bom_and_crlf_read_like_plain_files(run_cli: Run, project: Path) -> None:
    plain = b"torch==2.1.0 \\\n    ; python_version >= '3'\ntensorflow-gpu==1.0.0\n"
    (project / "plain.txt").write_bytes(plain)
    (project / "crlf-ok.txt").write_bytes(plain.replace(b"\n", b"\r\n"))
    (project / "bom-ok.txt").write_bytes(b"\xef\xbb\xbf" + plain)
    outputs = []
    for name in ("plain.txt", "crlf-ok.txt", "bom-ok.txt"):
        proc = run_cli("check", name, "--json", "--python", "3.5", cwd=project)
        assert proc.returncode in (0, 1), proc.stderr
        outputs.append(proc.stdout.replace(name, "FILE"))
    assert outputs[0] == outputs[1] == outputs[2]
    report = json.loads(outputs[0])
    assert report["checked"] == ["tensorflow-gpu", "torch"]
    assert [(f["line"], f["package"]) for f in report["findings"]] == [(1, "torch")], report["findings"]


def test_a_version_of_thousands_of_digits(run_cli: Run, tmp_path: Path, project: Path) -> None:
    """packaging reads it; Python then refuses to turn more than 4300 digits into a number."""
    huge = "7" * 5000
    (project / "requirements.txt").write_text(f"numpy\ntorch=={huge}\n")
    line = run_hostile(run_cli, tmp_path, project, "check", "requirements.txt")
    assert line.startswith(f"dnnresolve check: error: requirements.txt:2: not a valid requirement 'torch=={huge}'")
    assert line.endswith("has a number longer than 30 digits")
    for command in (["plan", f"torch=={huge}", "--no-detect"], ["matrix", f"torch>={huge}"]):
        line = run_hostile(run_cli, tmp_path, project, *command)
        assert line.startswith(f"dnnresolve {command[0]}: error: not a requirement: 'torch"), line


def test_a_fifo_is_never_opened_for_reading(tmp_path: Path) -> None:
    """A FIFO named like a requirement file, found in a directory or named on the command line, or given as the
    matrix: refused at once (nothing writes to it, so opening it for reading would wait for ever)."""
    import subprocess
    import sys

    project = tmp_path / "project"
    project.mkdir()
    os.mkfifo(project / "requirements.txt")
    os.mkfifo(project / "matrix.toml")
    (project / "requirements-gpu.txt").write_text("tensorflow-gpu==1.0.0\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DNNRESOLVE_")}
    env.update(NO_COLOR="1", PYTHONPATH=str(Path(__file__).resolve().parents[1] / "src"))
    env["DNNRESOLVE_CACHE_DIR"] = str(tmp_path / "cache")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "dnnresolve", *args]
        return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=project, timeout=60)

    r = run("check", "--no-detect", "--json")  # the directory: the FIFO is not one of its requirement files
    assert r.returncode == 0 and json.loads(r.stdout)["files"] == ["requirements-gpu.txt"], r.stderr
    r = run("check", "--no-detect", "requirements.txt")
    assert r.returncode == 2 and r.stderr == (
        "dnnresolve check: error: requirements.txt: not a regular file (a FIFO); not read\n"
    )
    r = run("matrix", "torch", "--matrix", "matrix.toml")
    assert r.returncode == 2 and "matrix.toml: cannot read the compatibility matrix" in r.stderr
    assert "not a regular file" in r.stderr and r.stderr.count("\n") == 1
