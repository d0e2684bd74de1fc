"""A log file searched as bytes, in ranges and worker processes, finds what a line-by-line text read finds:
the same diagnoses on the same line numbers, whatever the line ends, encoding damage or cut points."""

from __future__ import annotations

import contextlib
import functools
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dnnresolve.explain import scan
from dnnresolve.explain.catalog import load_catalog
from dnnresolve.explain.scanner import ScanResult, scan_file
from dnnresolve.explain.segments import (
    LogProblem,
    Needles,
    _scan_block,
    _search_block,
    read_window,
    search_file,
    split_ranges,
    workers,
)
from dnnresolve.explain.source import open_input

REPO = Path(__file__).resolve().parents[1]

ERRORS = [
    b"2017-03-01 W tensorflow/stream_executor/cuda/cuda_dnn.cc:221] Loaded runtime CuDNN library: 5005 "
    b"(compatibility version 5000) but source was compiled with 5103 (compatibility version 5100).",
    b"ImportError: libcudart.so.8.0: cannot open shared object file: No such file or directory",
    b"RuntimeError: CUDA error: no kernel image is available for execution on the device",
    b"CUDA DRIVER VERSION IS INSUFFICIENT FOR CUDA RUNTIME VERSION",
    b"W dso_loader.cc:55] Could not load dynamic library 'cudart64_101.dll'; dlerror: cudart64_101.dll not found",
    b"RuntimeError: The NVIDIA driver on your system is too old (found version 10010). Please update your",
    b"GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx",
]


def awkward_log(path: Path, lines: int = 6000) -> None:
    """Every line end Python's text mode knows (\\n, \\r\\n, a lone \\r as a progress bar writes it, digits
    between a \\r and the next \\n), a byte-order mark, bytes that are not UTF-8, and errors in mixed case."""
    out = [b"\xef\xbb\xbf" + ERRORS[1] + b"\n"]
    for i in range(1, lines):
        if i % 499 == 0:
            out.append(ERRORS[(i // 499) % len(ERRORS)] + (b"\r\n" if i % 2 else b"\n"))
        elif i % 13 == 0:
            bar = b"epoch 3:  45%|\xe2\x96\x88\xe2\x96\x88  | 45/100 [00:03<00:04]\r 46%|"
            out.append(bar + str(i).encode() + b"\n")
        elif i % 17 == 0:
            out.append(b"caf\xe9 \xff\xfe latin-1 bytes, cuda cudnn library device version mentioned " + b"\r\n")
        elif i % 29 == 0:
            out.append(b"old mac line " + str(i).encode() + b"\r")
        else:
            out.append(f"2024-03-12 10:00:{i % 60:02d} I step.cc:42] step {i} loss=0.{i % 97:02d}\n".encode())
    out.append(ERRORS[5] + b"\r\n" + ERRORS[6])  # wrapped over two lines, no final line end
    path.write_bytes(b"".join(out))


def by_text(path: Path) -> ScanResult:
    with open_input(None, str(path)) as (_, lines):
        return scan(lines)


def summary(result: ScanResult) -> list[tuple[Any, ...]]:
    return [(d.id, d.line, tuple(d.lines), tuple(sorted(d.found.items()))) for d in result.diagnoses]


@pytest.mark.parametrize(
    ("range_bytes", "block_bytes", "jobs"),
    [(1 << 20, 1 << 20, 1), (4096, 1024, 1), (20_000, 3000, 3), (7777, 50_000, 2)],
)
def test_byte_search_agrees_with_a_text_read(tmp_path: Path, range_bytes: int, block_bytes: int, jobs: int) -> None:
    log = tmp_path / "train.log"
    awkward_log(log)
    expected = by_text(log)
    assert len(expected.diagnoses) >= 5 and expected.lines_read > 6001  # lone \r ends lines too
    got = scan_file(str(log), range_bytes=range_bytes, block_bytes=block_bytes, jobs=jobs)
    assert summary(got) == summary(expected)
    assert got.lines_read == expected.lines_read


def test_ranges_end_after_a_newline_and_cover_the_file(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    awkward_log(log, 3000)
    data = log.read_bytes()
    with open(log, "rb") as f:
        ranges = split_ranges(f, len(data), 5000)
    assert ranges[0][0] == 0 and ranges[-1][1] == len(data) and len(ranges) > 10
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
    assert all(data[end - 1 : end] == b"\n" for _, end in ranges[:-1])


def test_not_a_log(tmp_path: Path) -> None:
    binary = tmp_path / "core"
    binary.write_bytes(b"\x7fELF\x00\x00\x01" + b"x" * 100)
    with pytest.raises(LogProblem) as exc:
        list(search_file(str(binary), Needles.of(load_catalog().anchors)))
    assert exc.value.line == 1 and "NUL" in str(exc.value)


def test_cli_explain_file_in_ranges_finds_each_error_once_with_its_lines(run_cli: Any, tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    awkward_log(log)
    proc = run_cli("explain", "--json", "--no-detect", "--file", str(log))
    assert proc.returncode == 1, proc.stderr
    import json

    report = json.loads(proc.stdout)
    kinds = {d["kind"] for d in report["diagnoses"]}
    assert {"cudnn_version_mismatch", "missing_library", "arch_unsupported", "driver_too_old"} <= kinds


def test_needles_cover_every_anchor_of_the_catalog() -> None:
    from dnnresolve.explain.segments import letters

    anchors = load_catalog().anchors
    needles = Needles.of(anchors)
    assert len(needles.letters) < len(anchors) / 2 and len(needles.lowered) < len(anchors) / 2
    for anchor in anchors:
        assert any(n in letters(anchor) for n in needles.letters), anchor
        assert any(n in anchor.lower().encode() for n in needles.lowered), anchor


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")
def test_killed_workers_leave_their_ranges_to_this_process(tmp_path: Path) -> None:
    log = tmp_path / "c.log"
    awkward_log(log, 3000)
    needles = Needles.of(load_catalog().anchors)
    alone = search_file(str(log), needles, range_bytes=2000, block_bytes=1024, jobs=1)
    shared = search_file(str(log), needles, range_bytes=2000, block_bytes=1024, jobs=2)
    before = set(_children(os.getpid()))
    got = [next(shared)]  # the pool runs
    workers = sorted(set(_children(os.getpid())) - before)
    assert workers
    for pid in workers:
        os.kill(pid, signal.SIGKILL)
    got += list(shared)
    assert got == list(alone)
    assert not any(_running(pid) for pid in workers)


_PIECES = [*ERRORS, b"step 12 loss=0.3", b"step 99 loss=0.1", b"", b"\xff\xfe", b"45% 45/100", b"DLL", b"x"]


@settings(max_examples=300)
@given(st.lists(st.tuples(st.sampled_from(_PIECES), st.sampled_from([b"\n", b"\r\n", b"\r", b""])), max_size=40))
def test_a_block_searched_by_its_distinct_lines_finds_what_a_line_by_line_search_finds(
    parts: list[tuple[bytes, bytes]],
) -> None:
    """The shortcut (each distinct line's letters searched once) against the exact search of every line."""
    block = b"".join(text + end for text, end in parts)
    needles = _needles()
    for by_lines in (True, False):
        found, ends, _ = _scan_block(block, needles, by_lines)
        assert found == _search_block(block, needles)
        assert ends == block.count(b"\n") + block.count(b"\r") - block.count(b"\r\n")


_LINES = [b"", b"x", b"step 12 loss=0.3", b"\xff\xfe caf\xe9", b"y" * 3000, ERRORS[0]]


@settings(max_examples=200)
@given(
    st.booleans(),
    st.lists(st.tuples(st.sampled_from(_LINES), st.sampled_from([b"\n", b"\r\n", b"\r"])), min_size=1, max_size=60),
    st.integers(0, 7),
    st.integers(0, 7),
)
def test_the_window_around_a_line_is_the_lines_a_text_read_gives(
    bom: bool, parts: list[tuple[bytes, bytes]], before: int, after: int
) -> None:
    """Every line's window (read a few KiB at a time, growing) against the same lines cut from a whole read."""
    data = (b"\xef\xbb\xbf" if bom else b"") + b"".join(text + end for text, end in parts)
    text = data.decode("utf-8-sig" if bom else "utf-8", "replace")
    lines = text.splitlines()
    starts = [0]
    for line in data.splitlines(keepends=True)[:-1]:
        starts.append(starts[-1] + len(line))
    f = io.BytesIO(data)
    for i, offset in enumerate(starts):
        window, at = read_window(f, offset, before, after)
        assert window == lines[max(0, i - before) : i + after + 1]
        assert at == i - max(0, i - before)


@functools.cache  # a quarter of a second each: built once, not per example
def _needles() -> Needles:
    return Needles.of(sorted({a for e in load_catalog().entries for a in e.anchors}))


# ------------------------------------------------------------------ Ctrl-C and SIGTERM during a search


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (read from /proc: no process library needed)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()  # the name, in parentheses, may hold spaces
        if int(fields[1]) == pid:
            out.append(int(entry))
    return out


def _running(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie, dead but not yet reaped by its new parent, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] != b"Z"


def _error_log(path: Path) -> None:
    """A log where every fourth line is an error, just big enough to be searched by workers: each error is
    decoded, so the command runs for seconds and is stopped mid-scan."""
    error = ERRORS[2] + b"\n"
    noise = b"2024-03-12 10:00:00.000123: I tensorflow/core/common_runtime/step.cc:42] step 17 loss=0.1234\n"
    unit = error + noise * 3
    path.write_bytes(unit * ((34 << 20) // len(unit)))  # over segments.POOL_MIN, 32 MB


def _stopped_mid_scan(tmp_path: Path, log: Path, sig: int, whole_group: bool) -> tuple[int, str, list[int]]:
    """``explain --file LOG``, sent ``sig`` once its workers run: to its process group as a terminal's Ctrl-C
    sends it, or to the process alone as ``kill PID`` does. (exit status, standard error, workers left)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DNNRESOLVE_")}
    env.update({"NO_COLOR": "1", "PYTHONPATH": str(REPO / "src"), "DNNRESOLVE_CACHE_DIR": str(tmp_path / "cache")})
    err_path = tmp_path / "stderr"
    with open(err_path, "wb") as err:  # a file, not a pipe: a worker left behind would hold a pipe open
        proc = subprocess.Popen(
            [sys.executable, "-m", "dnnresolve", "explain", "--no-detect", "--file", str(log)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=env,
            start_new_session=True,
        )
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not workers:
            assert proc.poll() is None, "the command ended before its search workers started"
            assert time.monotonic() < deadline, "no search workers started"
            time.sleep(0.02)
            workers = _children(proc.pid)
        time.sleep(0.3)
        assert proc.poll() is None, "the command ended before the signal"
        if whole_group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        status = proc.wait(timeout=15)
        deadline = time.monotonic() + 15
        while any(_running(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        survivors = [w for w in workers if _running(w)]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for w in workers:
            with contextlib.suppress(OSError):
                if _running(w):
                    os.kill(w, signal.SIGKILL)
    return status, err_path.read_text(errors="replace"), survivors


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")
@pytest.mark.skipif(workers() < 2, reason="one CPU: a log is searched without workers")
def test_ctrl_c_mid_scan_stops_the_workers_and_prints_one_line(tmp_path: Path) -> None:
    log = tmp_path / "big.log"
    _error_log(log)
    for _ in range(3):  # a worker's traceback races the parent's clean-up: three Ctrl-Cs, not one
        status, stderr, survivors = _stopped_mid_scan(tmp_path, log, signal.SIGINT, whole_group=True)
        for word in ("Traceback", "KeyboardInterrupt", "BrokenPipeError"):
            assert word not in stderr, stderr
        assert stderr == "dnnresolve: interrupted\n"
        assert status == 130
        assert survivors == []


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")
@pytest.mark.skipif(workers() < 2, reason="one CPU: a log is searched without workers")
def test_sigterm_mid_scan_leaves_no_worker_behind_and_prints_nothing_of_theirs(tmp_path: Path) -> None:
    log = tmp_path / "big.log"
    _error_log(log)
    status, stderr, survivors = _stopped_mid_scan(tmp_path, log, signal.SIGTERM, whole_group=False)
    for word in ("Traceback", "KeyboardInterrupt", "BrokenPipeError"):
        assert word not in stderr, stderr
    assert status in (-signal.SIGTERM, 128 + signal.SIGTERM)  # killed by it, or an exit that says so
    assert survivors == []


# Messages a terminal or a page broke inside their anchor, with no other anchor whole on either line
BROKEN = [
    [b"ImportError: libcudnn.so.8: cannot op", b"en shared object file: No such file or directory"],
    [b"E cuda_dnn.cc:352] Loaded runtime CuDNN libr", b"ary: 8.0.5 but source was compiled with: 8.6.0"],
    [b"    The NVIDIA driver on your system is too o", b"    ld (found version 11040)."],
]


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("broken", BROKEN)
def test_an_anchor_broken_over_two_lines_is_found_in_a_file_as_in_a_text(
    tmp_path: Path, broken: list[bytes], jobs: int
) -> None:
    path = tmp_path / "train.log"
    noise = [f"2024-03-12 10:00:{i % 60:02d} I step.cc:42] step {i} loss=0.{i % 97:02d}".encode() for i in range(3000)]
    path.write_bytes(b"\n".join([*noise[:1500], *broken, *noise[1500:]]) + b"\n")
    by_file = scan_file(str(path), range_bytes=16 << 10, jobs=jobs)
    assert by_file.diagnoses and summary(by_file) == summary(by_text(path))


# Ordinary lines of training logs: TensorFlow's and PyTorch's info lines, a Keras progress line, a Lightning one
ORDINARY = [
    "2024-03-12 10:00:00.000123: I tensorflow/core/common_runtime/step.cc:42] step 17 loss=0.1234",
    "I0312 10:00:00.123456 140 tensorflow/core/platform/cpu_feature_guard.cc:182] This TensorFlow binary is optimized",
    "Epoch 3/10 - 1563/1563 [==============================] - 12s 8ms/step - loss: 0.4321 - accuracy: 0.8765",
    "INFO:torch.distributed.run:Using nproc_per_node=8, global rank 0, world size 8, train loss 0.42 lr 3e-4",
    "Epoch 2: 100%|##########| 782/782 [01:02<00:00, 12.5it/s, loss=0.311, v_num=0, val_acc=0.912]",
]


def test_the_log_search_s_needles_pass_over_ordinary_training_lines() -> None:
    # a needle that an ordinary line holds makes every line of a log a hit to decode ("tensor", taken once an
    # anchor began "TensorFlow requires ...", made a 35 MB log take seconds to answer Ctrl-C)
    from dnnresolve.explain.segments import letters

    needles = Needles.of([a for e in load_catalog().entries for a in e.anchors])
    hits = [(line, n) for line in ORDINARY for n in needles.letters if n in letters(line)]
    assert hits == []
