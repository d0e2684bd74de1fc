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
            source = str(row["compute_capability_source"])
            if row.get("compute_capability_basis") == "library":
                # no page found: read from NVIDIA's own wheel, which the note names with its sha256
                assert source.startswith("https://pypi.org/project/nvidia-cudnn-cu"), row["version"]
                assert "sha256 " in row["compute_capability_note"] and ".whl" in row["compute_capability_note"]
            else:
                assert source.startswith("https://docs.nvidia.com/"), row["version"]
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


def test_kepler_leaves_cuda_11_with_cudnn_8_8_0() -> None:
    """No support matrix of 8.6-8.9.0 was found; NVIDIA's nvidia-cudnn-cu11 wheels carry sm_35 code up to 8.7.0.84
    and start at sm_50 from 8.8.0.121 (the same reading of 8.5.0.96 and 8.9.1.23 agrees with their matrices)."""
    rows = {r["version"]: r for r in _rows()}
    floors = {v: r.get("compute_capability_min_by_cuda", {}) for v, r in rows.items()}
    assert floors["8.6.0"] == {"11": "3.5"} and floors["8.7.0"] == {"11": "3.5"}
    assert floors["8.8.0"] == {"12": "5.0", "11": "5.0"} and floors["8.9.0"] == {"12": "5.0", "11": "5.0"}
    for v in ("8.6.0", "8.7.0", "8.8.0", "8.9.0"):
        assert rows[v]["compute_capability_basis"] == "library", v
    note = rows["8.7.0"]["compute_capability_note"]
    assert "nvidia_cudnn_cu11-8.7.0.84-py3-none-manylinux1_x86_64.whl" in note
    assert "b3e062498fbbb1c1930435a6a454c1b41c903e1e65b7063bd2b4021e8285408e" in note
    # a page's floor is never replaced by a reading of the library
    assert rows["8.5.0"].get("compute_capability_basis", "support_matrix") == "support_matrix"
    assert rows["8.9.1"].get("compute_capability_basis", "support_matrix") == "support_matrix"


def test_every_cuda_13_package_states_its_floor() -> None:
    """nvidia-cudnn-cu13 9.23.1-9.28.1 (read 2026-12-02 with scripts/verify_archs.py) carry code for 7.5 and newer in
    every library; 9.28.1 has no CUDA 12 wheel on PyPI, so its row states CUDA 13 alone."""
    rows = {r["version"]: r for r in _rows()}
    lacking = [
        v for v, r in rows.items() if "13.x" in r["cuda"] and "13" not in r.get("compute_capability_min_by_cuda", {})
    ]
    assert lacking == []
    assert rows["9.28.1"]["compute_capability_min_by_cuda"] == {"13": "7.5"}
    note = rows["9.28.1"]["compute_capability_note"]
    assert "nvidia_cudnn_cu13-9.28.1.4-py3-none-manylinux_2_27_x86_64.whl" in note
    assert "a54f205b1db1f2895d99f398754db1369816f0569dd459731f925635cf7b65ec" in note
    assert "not read" not in rows["9.24.0"]["compute_capability_note"]
