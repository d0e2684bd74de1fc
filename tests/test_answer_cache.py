"""Answers kept and replayed (answer_cache): the same question on an unchanged machine is answered with the kept
output, without running a program again; a change to anything the answer was read from, or to the question,
runs the command again."""

from __future__ import annotations

import builtins
import glob
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from dnnresolve import answer_cache, observed
from dnnresolve.detect import detect_runtime
from dnnresolve.detect.context import ProbeContext

from .detect.machines import BIN, K20M_ENV, make_machine

Run = Callable[..., subprocess.CompletedProcess[str]]
SETTLE = observed.RACY_NS / 1e9 + 0.2  # files younger than this are not trusted to show their next change


def _counted_smi(root: Path, counter: Path) -> None:
    """The K20m node's nvidia-smi under ROOT/usr/bin, noting each run in ``counter``."""
    smi = root / "usr" / "bin" / "nvidia-smi"
    smi.parent.mkdir(parents=True, exist_ok=True)
    smi.write_text(f'#!/bin/sh\necho run >> "{counter}"\nexec "{BIN / "k20m" / "nvidia-smi"}" "$@"\n')
    smi.chmod(0o755)


def _runs(counter: Path) -> int:
    return len(counter.read_text().split()) if counter.exists() else 0


@pytest.fixture
def node(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    root = make_machine(tmp_path, "k20m")
    counter = tmp_path / "smi-runs"
    _counted_smi(root, counter)
    env = {**K20M_ENV, "DNNRESOLVE_ROOT_PROGRAMS": "1", "PATH": "/usr/bin:/bin"}
    time.sleep(SETTLE)
    return root, counter, env


def test_same_question_is_answered_again_without_probing(run_cli: Run, node: tuple[Path, Path, dict[str, str]]) -> None:
    root, counter, env = node
    env = {**env, "HF_TOKEN": "hf_kept-out-of-the-cache-1234"}
    args = ("plan", "tensorflow-gpu==1.0", "--root", str(root))
    first = run_cli(*args, env=env)
    assert _runs(counter) >= 1
    probed = _runs(counter)
    assert "5.0.5" in first.stdout and first.returncode == 1, first.stderr
    again = run_cli(*args, env=env)
    assert (again.stdout, again.stderr, again.returncode) == (first.stdout, first.stderr, first.returncode)
    assert _runs(counter) == probed  # nvidia-smi did not run: the answer was replayed
    kept = list((root.parent / "user-cache" / "answers").iterdir())
    assert kept and all(b"hf_kept-out" not in p.read_bytes() for p in kept)  # the environment is not written
    assert all(p.stat().st_mode & 0o077 == 0 for p in kept)  # nor readable by other users

    # cuDNN 5.1 in place of 5.0 (the header the answer was read from changes): read again
    header = root / "opt/apps/cudnn/5.0/include/cudnn.h"
    header.write_text(header.read_text().replace("#define CUDNN_MINOR      0", "#define CUDNN_MINOR      1"))
    changed = run_cli(*args, env=env)
    assert _runs(counter) > probed
    assert "5.1.5" in changed.stdout and changed.stdout != first.stdout


def test_a_toolkit_installed_later_is_seen(run_cli: Run, node: tuple[Path, Path, dict[str, str]]) -> None:
    """A directory that a glob lists gains an entry: the next answer is read again."""
    root, counter, env = node
    args = ("detect", "--root", str(root), "--json")
    first = run_cli(*args, env=env)
    assert run_cli(*args, env=env).stdout == first.stdout
    probed = _runs(counter)
    new = root / "usr/local/cuda-9.0"
    new.mkdir()
    (new / "version.txt").write_text("CUDA Version 9.0.176\n")
    later = run_cli(*args, env=env)
    assert _runs(counter) > probed
    assert "9.0.176" in later.stdout and "9.0.176" not in first.stdout


def test_what_is_not_kept(run_cli: Run, node: tuple[Path, Path, dict[str, str]]) -> None:
    root, counter, env = node
    message = "Loaded runtime CuDNN library: 5005 (compatibility version 5000) but source was compiled with 5103"

    def probes(*args: str, extra: dict[str, str] | None = None, stdin: str | None = None) -> int:
        before = _runs(counter)
        res = run_cli(*args, "--root", str(root), env={**env, **(extra or {})}, input=stdin)
        assert res.returncode in (0, 1), res.stderr
        return _runs(counter) - before

    # an error read from standard input: asked twice, probed twice
    assert probes("explain", stdin=message) > 0
    assert probes("explain", stdin=message) > 0
    # the same message as an argument is kept
    assert probes("explain", message) > 0
    assert probes("explain", message) == 0
    # turned off, or another environment: a new answer
    assert probes("explain", message, extra={"DNNRESOLVE_NO_ANSWER_CACHE": "1"}) > 0
    assert probes("explain", message, extra={"CUDA_VISIBLE_DEVICES": "1"}) > 0
    # another question
    assert probes("explain", message, "--json") > 0
    # check reads files no record follows (a project's requirements): never kept
    answers = root.parent / "user-cache" / "answers"
    before = set(answers.iterdir())
    (root.parent / "requirements.txt").write_text("torch==2.1.0\n")
    for _ in range(2):
        res = run_cli("check", str(root.parent / "requirements.txt"), "--json", env=env)
        assert '"checked": ["torch"]' in res.stdout, res.stderr
    assert set(answers.iterdir()) == before


def test_an_answer_is_not_kept_while_its_files_are_fresh(run_cli: Run, tmp_path: Path) -> None:
    """A file changed within the file system's clock tick may change again unseen: such answers are not kept."""
    root = make_machine(tmp_path, "k20m")
    counter = tmp_path / "smi-runs"
    _counted_smi(root, counter)
    env = {**K20M_ENV, "DNNRESOLVE_ROOT_PROGRAMS": "1", "PATH": "/usr/bin:/bin"}
    args = ("detect", "--root", str(root), "--json")
    run_cli(*args, env=env)
    run_cli(*args, env=env)
    assert _runs(counter) >= 2
    assert not list((tmp_path / "user-cache").glob("answers/*"))


# --------------------------------------------------------------- what detection records


@pytest.mark.parametrize(
    "pattern",
    [
        "usr/local/cuda-*",
        "usr/local/cuda*/version.txt",
        "usr/*/python*/site-packages",
        "opt/apps/cudnn/*/lib64/libcudnn.so*",
        "opt/apps/*/*/include/cudnn*.h",
        "*",
        ".*",
        "proc/driver/nvidia/gpus/*/information",
        "usr/local/cuda/lib64/libcudart.so.*",
        "usr/local/cuda-8.0/",
        "nowhere/*/x",
        "usr/lib[0-9]*",
        "usr/local/cuda-?.?",
    ],
)
def test_glob_reads_as_glob_does(tmp_path: Path, pattern: str) -> None:
    root = make_machine(tmp_path, "k20m")
    (root / ".hidden").mkdir()
    (root / "usr/local/.cuda-7.5").mkdir()
    (root / "usr/local/cuda-dangling").symlink_to(root / "nowhere")
    ctx = ProbeContext(str(root), {}, 1.0, False)
    expected = sorted(ctx.target(p) for p in glob.glob(str(root / pattern)))
    assert ctx.glob("/" + pattern) == expected


def _spy_on_files(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """Every path this process stats, opens or lists from now on, until the test ends."""
    seen: set[str] = set()

    def spy(real: Callable[..., object]) -> Callable[..., object]:
        def call(path: object, *args: object, **kwargs: object) -> object:
            if isinstance(path, (str, os.PathLike)):
                seen.add(os.fspath(path))  # type: ignore[arg-type]
            return real(path, *args, **kwargs)

        return call

    for name in ("stat", "lstat", "open", "listdir", "scandir", "access", "readlink"):
        monkeypatch.setattr(os, name, spy(getattr(os, name)))
    monkeypatch.setattr(builtins, "open", spy(builtins.open))
    return seen


@pytest.mark.parametrize("name", ["k20m", "modern", "conda", "wsl", "jetson", "nogpu"])
def test_detection_records_everything_it_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    root = make_machine(tmp_path, name)
    touched = _spy_on_files(monkeypatch)
    env = {**K20M_ENV, "MODULEPATH": "/opt/apps/modulefiles", "CONDA_PREFIX": "/opt/conda", "VIRTUAL_ENV": "/venv"}
    observed.begin()
    try:
        detect_runtime(root=str(root), env=env)
    finally:
        rec = observed.finish()
    assert rec is not None
    recorded = {path for _, path in rec.deps}
    read = {p for p in touched if p.startswith(str(root) + os.sep) or p == str(root)}
    assert read, "the fixture machine was not read at all"
    missing = sorted(p[len(str(root)) :] for p in read - recorded)
    assert missing == [], "\n".join(missing)


def test_detection_of_this_machine_records_everything_it_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    from dnnresolve.matrix import load_matrix

    matrix = load_matrix()
    touched = _spy_on_files(monkeypatch)
    observed.begin()
    try:
        detect_runtime(matrix=matrix, timeout=20)
    finally:
        rec = observed.finish()
    assert rec is not None
    recorded = {path for _, path in rec.deps}
    assert sorted(touched - recorded - {os.devnull}) == []  # a program's standard input: not read


@pytest.mark.parametrize(
    "argv",
    [
        ["plan", "torch==2.1.0", "--json"],
        ["plan", "tensorflow-gpu==1.0", "--cuda", "8.0", "--cudnn", "5.0.5"],
        ["explain", "CUDA driver version is insufficient for CUDA runtime version"],
        ["matrix", "tensorflow"],
        ["doctor", "--json"],
    ],
)
def test_commands_record_everything_they_read(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Beyond detection: which matrix (a cached update appearing later), the catalog, --target files. Not
    recorded, rightly: the interpreter's own files, the directories above dnnresolve's (finding itself), and
    dnnresolve's derived caches (keyed by the files they were made from); dnnresolve's own files are added to
    every answer when it is kept."""
    from dnnresolve.cli import main

    cache = tmp_path / "cache"
    monkeypatch.setenv("DNNRESOLVE_CACHE_DIR", str(cache))
    package = Path(observed.__file__).resolve().parent
    own = {str(p) for p in package.parents} | {os.devnull, *answer_cache.package_files()}
    own |= {d for d, _, _ in os.walk(package)}
    touched = _spy_on_files(monkeypatch)
    observed.begin()
    try:
        main(argv)
    finally:
        rec = observed.finish()
    capsys.readouterr()
    assert rec is not None and rec.cacheable
    recorded = {path for _, path in rec.deps}
    derived = f"{os.sep}dnnresolve{os.sep}parsed{os.sep}"  # an earlier test's matrix, read on demand
    prefixes = (sys.base_prefix + os.sep, str(cache / "parsed"))
    unrecorded = sorted(p for p in touched - recorded - own if not p.startswith(prefixes) and derived not in p)
    assert unrecorded == []


def test_replay_keeps_the_order_of_output_and_errors(node: tuple[Path, Path, dict[str, str]], tmp_path: Path) -> None:
    """detect with a matrix that cannot load warns on standard error, then answers on standard output; both on
    one pipe, the replay keeps that order."""
    root, counter, env = node
    full = {k: v for k, v in os.environ.items() if not k.startswith("DNNRESOLVE_")}
    full.update(env)
    full.update(
        {
            "NO_COLOR": "1",
            "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src"),
            "DNNRESOLVE_CACHE_DIR": str(tmp_path / "user-cache"),
            "DNNRESOLVE_MATRIX": str(tmp_path / "missing.toml"),
        }
    )

    def detect() -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "dnnresolve", "detect", "--root", str(root)]
        return subprocess.run(argv, env=full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)

    first = detect()
    probed = _runs(counter)
    again = detect()
    assert _runs(counter) == probed
    assert first.stdout.startswith("dnnresolve detect: warning: matrix not loaded")
    assert "Tesla K20m" in first.stdout
    assert (again.stdout, again.returncode) == (first.stdout, first.returncode)
