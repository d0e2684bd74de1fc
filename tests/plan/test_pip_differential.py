"""`check` against pip's own resolver (issue 21): pairs of pip-era pins recorded with pip 26.3 --dry-run
(tests/data/pip_resolver_pairs.json, 2026-12-01). pip >= 25 normalizes extras (PEP 685); pip 23.2 silently drops
jax's with_cuda extra, so older resolvers are no reference. A file holding a pair gets a wheel-conflict finding
exactly when pip refused the pair."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

PAIRS = json.loads((Path(__file__).parents[1] / "data" / "pip_resolver_pairs.json").read_text(encoding="utf-8"))


def _cases() -> list[Any]:
    out = []
    for pair in PAIRS["pairs"]:
        out.append(pytest.param(pair, id=" + ".join(pair["asked"])))
    return out


@pytest.mark.parametrize("pair", _cases())
def test_check_finds_a_wheel_conflict_exactly_when_pip_refuses(run_cli, tmp_path: Path, pair: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "requirements.txt").write_text("\n".join(pair["asked"]) + "\n")
    r = run_cli("check", "requirements.txt", "--json")
    assert r.returncode in (0, 1), r.stderr
    conflicts = [f["message"] for f in json.loads(r.stdout)["findings"] if f["rule"] == "wheel-conflict"]
    assert bool(conflicts) == (not pair["resolves"]), (pair.get("pip_said"), conflicts)
    assert r.returncode == (0 if pair["resolves"] else 1)
