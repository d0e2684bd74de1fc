"""`explain` on logs whose lines hold long digit runs (a library file name with a 300-digit version): read in about
the time of any log of that size, not in minutes. Bounds on a hang, not speed measurements (``scripts/bench``)."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

RunCli = Callable[..., CompletedProcess[str]]
BOUND_S = 30  # generous (a loaded 2-core machine): this log takes 1-3 s; before #22's fix it took over a minute
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


def test_long_digit_runs_are_read_in_seconds(run_cli: RunCli, tmp_path: Path) -> None:
    lines = _tensorflow_log(random.Random(22))
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
    assert out["diagnoses"][0]["line"] == len(lines)
