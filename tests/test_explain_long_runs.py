"""`explain` on logs whose lines hold long digit runs (a library file name with a 300-digit version): read in about
the time of any log of that size, not in minutes. Bounds on a hang, not speed measurements (``scripts/bench``)."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest

RunCli = Callable[..., CompletedProcess[str]]
BOUND_S = 10  # generous: these logs take 1-3 s; before #22's fix they took 13-20 s and over a minute
TF = "2024-03-12 10:{m:02d}:{s:02d}.{us:06d}: W tensorflow/stream_executor/platform/default/dso_loader.cc:64] "
REAL = "Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file"


def _digits(rnd: random.Random, n: int) -> str:
    return "".join(rnd.choice("0123456789") for _ in range(n))


def _tensorflow_log(rnd: random.Random) -> list[str]:
    """TensorFlow's loader line, as it prints it, for 100 library names with a 300-digit version."""
    lines = []
    for i in range(100):
        name = f"libcudart.so.{_digits(rnd, 300)}"
        lines.append(
            TF.format(m=i // 60, s=i % 60, us=rnd.randrange(10**6))
            + f"Could not load dynamic library '{name}'; dlerror: {name}: cannot open shared object file: "
            "No such file or directory"
        )
    return lines


def _bare_lines(rnd: random.Random) -> list[str]:
    """The loader's sentence alone, as a title quotes it: lines of one length (a terminal's wrap, as the scanner
    must suppose), each ending in a quote (where a wrapped message may go on)."""
    return [f"Could not load dynamic library 'libcudart.so.{_digits(rnd, 300)}'" for _ in range(250)]


@pytest.mark.parametrize("make", [_tensorflow_log, _bare_lines], ids=["tensorflow-log", "bare-lines"])
def test_long_digit_runs_are_read_in_seconds(run_cli: RunCli, tmp_path: Path, make: Callable[..., list[str]]) -> None:
    lines = make(random.Random(22))
    lines.append(TF.format(m=9, s=0, us=1) + REAL)  # a real message after them is still found, on its line
    log = tmp_path / "train.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    start = time.monotonic()
    r = run_cli("explain", "--file", str(log), "--json", "--no-detect")
    elapsed = time.monotonic() - start
    assert r.returncode == 1, r.stderr  # (problems found)
    assert elapsed < BOUND_S, f"explain took {elapsed:.1f} s on {len(lines)} lines with 300-digit library names"
    out = json.loads(r.stdout)
    assert out["lines_read"] == len(lines)
    assert [(d["id"], d["expected"]) for d in out["diagnoses"]] == [
        ("tf-dso-missing", {"library": "libcudart.so.11.0", "cuda": "11.0"})
    ]
    if make is _tensorflow_log:  # (lines of one length ending in a quote read as one wrapped message: told earlier)
        assert out["diagnoses"][0]["line"] == len(lines)
