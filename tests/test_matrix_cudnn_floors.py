"""Every [[cudnn]] row states the oldest GPU NVIDIA's support matrix lists for it, per CUDA major, with the page,
or says why it states none (#21); the stated floors never go down from one release to the next."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tomllib
from packaging.version import Version

DATA = Path(__file__).resolve().parents[1] / "data" / "compat_matrix.toml"


def _rows() -> list[dict[str, Any]]:
    with DATA.open("rb") as f:
        rows: list[dict[str, Any]] = tomllib.load(f)["cudnn"]
    return rows


def _cc(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def test_every_cudnn_row_states_its_floor_or_says_why_not() -> None:
    rows = _rows()
    assert len(rows) >= 98
    for row in rows:
        floors = row.get("compute_capability_min_by_cuda")
        why = row.get("compute_capability_unstated", "")
        assert floors or row.get("compute_capability_min") or why.strip(), row["version"]
        if floors:
            assert not why, row["version"]
            assert str(row["compute_capability_source"]).startswith("https://docs.nvidia.com/"), row["version"]
            majors = {c.split(".")[0] for c in row["cuda"]}
            assert set(floors) <= majors, row["version"]


def test_a_floor_per_cuda_major_never_goes_down() -> None:
    last: dict[str, tuple[str, tuple[int, ...]]] = {}
    for row in sorted(_rows(), key=lambda r: Version(r["version"])):
        for major, cc in (row.get("compute_capability_min_by_cuda") or {}).items():
            if major in last:
                assert _cc(cc) >= last[major][1], (row["version"], major, last[major])
            last[major] = (row["version"], _cc(cc))


def test_kepler_leaves_cuda_11_between_8_5_and_8_9_1() -> None:
    floors = {r["version"]: r.get("compute_capability_min_by_cuda", {}) for r in _rows()}
    assert floors["8.5.0"]["11"] == "3.5" and floors["8.9.1"]["11"] == "5.0"
    assert floors["9.0.0"] == {"12": "5.0", "11": "5.0"}
    assert floors["9.17.0"]["12"] == "7.5"
