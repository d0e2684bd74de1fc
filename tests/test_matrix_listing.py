"""`dnnresolve matrix` (issue #25, point 7): answers first, sourcing notes behind --verbose (JSON keeps them);
rows in one order everywhere: by package, then release, newest first."""

from __future__ import annotations

import json

import pytest
from packaging.version import Version

# sourcing detail the torch 2.8.0 row's note holds: a PR number, a commit id, what a binary was read with
SOURCING = ("PR 188925", "00c7a380", "verify_archs.py")


def test_matrix_text_keeps_sourcing_notes_behind_verbose(run_cli) -> None:  # type: ignore[no-untyped-def]
    plain = run_cli("matrix", "torch==2.8.0", env={"COLUMNS": "100"})
    assert plain.returncode == 0, plain.stderr
    assert not any(detail in plain.stdout for detail in SOURCING)
    assert "pip install torch==2.8.0" in plain.stdout and "https://pytorch.org/" in plain.stdout  # the answers stay
    assert "notes on how these values were sourced: dnnresolve matrix torch==2.8.0 --verbose" in plain.stdout
    verbose = run_cli("matrix", "torch==2.8.0", "--verbose", env={"COLUMNS": "100"})
    assert verbose.returncode == 0
    flat = " ".join(verbose.stdout.split())  # (the table wraps the note)
    assert all(detail in flat for detail in SOURCING)
    assert "--verbose" not in verbose.stdout


def test_matrix_json_keeps_the_notes(run_cli) -> None:  # type: ignore[no-untyped-def]
    (record,) = json.loads(run_cli("matrix", "torch==2.8.0", "--json").stdout)["releases"]
    assert all(detail in record["note"] for detail in SOURCING)


def _listed(run_cli, *args: str) -> list[tuple[str, Version]]:  # type: ignore[no-untyped-def]
    res = run_cli("matrix", *args, "--json")
    assert res.returncode == 0, res.stderr
    return [(r["package"], Version(r["version"])) for r in json.loads(res.stdout)["releases"]]


@pytest.mark.parametrize(
    "args",
    [("--cuda", "11.8"), ("--cudnn", "8.6"), ("tensorflow",), ("torch>=2.0",), ("jax",), ("--cuda", "12.4")],
    ids=lambda a: " ".join(a),
)
def test_matrix_lists_rows_by_package_then_newest_release_first(run_cli, args: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    rows = _listed(run_cli, *args)
    assert len({p for p, _ in rows}) >= 1 and len(rows) > 2
    packages = [p for p, _ in rows]
    assert packages == sorted(packages)
    for package in set(packages):
        versions = [v for p, v in rows if p == package]
        assert versions == sorted(versions, reverse=True), package


def test_matrix_text_lists_in_the_same_order(run_cli) -> None:  # type: ignore[no-untyped-def]
    rows = _listed(run_cli, "--cuda", "11.8")
    text = run_cli("matrix", "--cuda", "11.8", env={"COLUMNS": "200"}).stdout
    labels = [f"{p} {v}" for p, v in rows]
    at = [text.find(label + " ") for label in dict.fromkeys(labels)]
    assert -1 not in at and at == sorted(at)
