"""A pin of a release a covering row stands for, asked of every command (issue #21, Deliver 2: a plan installs
exactly what was asked, a release that exists). cupy-cuda11x's 12.2.0 row covers 12.0-12.2; PyPI publishes 12.0.0,
12.1.0 and 12.2.0 (recorded in data/pypi_releases.json), and no 12.0.7."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

RunCli = Callable[..., CompletedProcess[str]]
TARGET = ("--driver", "535.104.05", "--python", "3.10")


def test_plan_of_a_release_pypi_never_published_says_so(run_cli: RunCli) -> None:
    r = run_cli("plan", "cupy-cuda11x==12.0.7", "--no-detect", *TARGET)
    flat = " ".join(r.stdout.split())
    assert "PyPI has no release cupy-cuda11x 12.0.7" in flat, r.stdout
    assert "the nearest published are 12.0.0 below and 12.1.0 above" in flat
    assert "pip install" not in flat


def test_check_of_a_release_pypi_never_published_is_an_error(run_cli: RunCli, tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("cupy-cuda11x==12.0.7\n")
    r = run_cli("check", "requirements.txt", *TARGET, "--json", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    [finding] = json.loads(r.stdout)["findings"]
    assert finding["severity"] == "error" and "PyPI has no release cupy-cuda11x 12.0.7" in finding["message"]


def test_a_published_release_a_row_covers_is_planned_and_shown_as_itself(run_cli: RunCli) -> None:
    r = run_cli("plan", "cupy-cuda11x==12.0.0", "--no-detect", *TARGET)
    assert "pip install cupy-cuda11x==12.0.0" in r.stdout, r.stdout
    # matrix shows the release asked, not the row's own 12.2.0, and its install line pins it
    r = run_cli("matrix", "cupy-cuda11x==12.0.0", "--json")
    [release] = json.loads(r.stdout)["releases"]
    assert release["version"] == "12.0.0", release["version"]
    assert any("cupy-cuda11x==12.0.0" in str(i.get("requirement", "")) for i in release["install"]), release["install"]
