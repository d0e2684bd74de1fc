"""A log file searched as bytes, in ranges and worker processes, finds what a line-by-line text read finds:
the same diagnoses on the same line numbers, whatever the line ends, encoding damage or cut points."""

from __future__ import annotations

import subprocess
import sys
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
    _from_worker,
    _in_turn,
    _scan_block,
    _search_block,
    search_file,
    split_ranges,
)
from dnnresolve.explain.source import open_input

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


@pytest.mark.parametrize(
    "program", ["pass", "import time; time.sleep(60)", "print('not json')"], ids=["dies", "hangs", "garbles"]
)
def test_a_failing_worker_is_stopped_and_its_share_searched_here(tmp_path: Path, program: str) -> None:
    log = tmp_path / "c.log"
    awkward_log(log, 3000)
    needles = Needles.of(load_catalog().anchors)
    with open(log, "rb") as f:
        share = split_ranges(f, log.stat().st_size, 8000)
    worker = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE)
    got = list(_from_worker(worker, str(log), share, needles, 4096, timeout=1.0))
    assert got == list(_in_turn(str(log), share, needles, 4096))
    assert worker.poll() is not None  # stopped, not left behind


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


def _needles() -> Needles:
    return Needles.of(sorted({a for e in load_catalog().entries for a in e.anchors}))
