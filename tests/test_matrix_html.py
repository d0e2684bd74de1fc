"""`matrix --format html`: one self-contained page, read as a user reads it, in a real headless browser (Debian's
chromium driven by playwright): it filters, and what it shows is what `matrix --json` and `plan` answer."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest

RunCli = Callable[..., CompletedProcess[str]]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _records(answer: Any) -> list[dict[str, Any]]:
    """The release records of a `matrix --json` answer."""
    if isinstance(answer, dict) and "releases" in answer:
        return list(answer["releases"])
    return [answer] if isinstance(answer, dict) and "package" in answer else list(answer)


def _matrix(run_cli: RunCli, *args: str) -> list[dict[str, Any]]:
    r = run_cli("matrix", *args, "--json")
    assert r.returncode in (0, 1), r.stderr
    return _records(json.loads(r.stdout)) if r.returncode == 0 else []


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import os
    import subprocess
    import sys

    from .conftest import REPO

    out = tmp_path_factory.mktemp("html") / "matrix.html"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DNNRESOLVE_")}
    env["PYTHONPATH"] = str(REPO / "src")
    r = subprocess.run(
        [sys.executable, "-m", "dnnresolve", "matrix", "--format", "html", "--output", str(out)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0 and r.stdout == "", r.stderr
    return out


def _data(page: Path) -> dict[str, Any]:
    text = page.read_text(encoding="utf-8")
    m = re.search(r'<script id="matrix-data" type="application/json">(.*?)</script>', text, re.S)
    assert m is not None
    return dict(json.loads(m.group(1)))


def test_the_page_needs_nothing_from_the_network(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"<script[^>]+src=|<link[^>]+href=|<img|@import|url\(|<iframe", text, re.I)
    assert oct(page.stat().st_mode & 0o777) != oct(0o600)  # a page as any program writes one, not a private file


def test_the_page_holds_every_build_of_every_release(page: Path, run_cli: RunCli) -> None:
    builds = {(b["package"], b["version"], b["os"], b["cuda"]) for b in _data(page)["builds"]}
    packages = [p["package"] for p in json.loads(run_cli("matrix", "--json").stdout)["packages"]]
    expected = {
        (r["package"], r["version"], ", ".join(r["os"]), cuda)
        for p in packages
        for r in _matrix(run_cli, p)
        for cuda in (r["cuda"] or [""])
    }
    assert builds == expected
    for b in _data(page)["builds"]:
        assert b["source"].startswith("https://") and (not b["cuda"] or b["cuda_source"].startswith("https://"))


def test_writing_the_page_where_it_cannot_be_written_is_one_line(run_cli: RunCli, tmp_path: Path) -> None:
    r = run_cli("matrix", "--format", "html", "--output", str(tmp_path / "no" / "such" / "page.html"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "page.html" in r.stderr and "Traceback" not in r.stderr
    r = run_cli("matrix", "torch", "--format", "html")
    assert r.returncode == 2 and "filter it in the page" in r.stderr


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (scripts/test installs Debian's chromium)")
    playwright = pytest.importorskip("playwright.sync_api")
    flags = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--no-first-run"]  # fmt: skip
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=flags)
        try:
            yield b
        finally:
            b.close()


def _shown(tab: Any) -> list[dict[str, str]]:
    rows = tab.locator("#rows tr")
    keys = ("package", "version", "os", "cuda", "verdict")
    return [{k: rows.nth(i).get_attribute(f"data-{k}") or "" for k in keys} for i in range(rows.count())]


def test_the_page_filters_as_matrix_answers(page: Path, browser: Any, run_cli: RunCli) -> None:
    tab = browser.new_page()
    tab.goto(page.as_uri())
    total = len(_data(page)["builds"])
    assert tab.locator("#count").text_content() == f"{total} of {total} builds"

    tab.select_option("#framework", "torch")
    tab.fill("#release", "2.1")
    shown = {(r["version"], r["os"], r["cuda"]) for r in _shown(tab)}
    asked = _matrix(run_cli, "torch==2.1.*")
    assert shown == {(r["version"], ", ".join(r["os"]), c) for r in asked for c in r["cuda"]} and shown

    tab.fill("#release", "")
    tab.fill("#cuda", "11.8")
    shown_releases = {(r["version"], r["os"]) for r in _shown(tab)}
    assert shown_releases == {(r["version"], ", ".join(r["os"])) for r in _matrix(run_cli, "torch", "--cuda", "11.8")}
    assert {r["cuda"] for r in _shown(tab)} == {"11.8"}

    tab.select_option("#framework", "")
    tab.fill("#cuda", "")
    tab.fill("#cudnn", "5.1")
    shown_releases = {(r["package"], r["version"]) for r in _shown(tab)}
    assert shown_releases == {(r["package"], r["version"]) for r in _matrix(run_cli, "--cudnn", "5.1")}
    tab.close()


def test_what_runs_on_my_machine_is_what_plan_answers(page: Path, browser: Any, run_cli: RunCli) -> None:
    """A Tesla K80 with driver 470: the page's verdict on each Linux build of torch 2.5.1 is plan's for it."""
    tab = browser.new_page()
    tab.goto(page.as_uri())
    tab.select_option("#framework", "torch")
    tab.fill("#release", "2.5.1")
    tab.fill("#driver", "470.82.01")
    tab.fill("#gpu", "Tesla K80")
    worst = {"ok": "o", "warn": "w", "fail": "f"}
    seen = 0
    for row in _shown(tab):
        if row["os"] != "linux":
            continue
        tag = "+cu" + row["cuda"].replace(".", "")
        r = run_cli("plan", f"torch==2.5.1{tag}", "--no-detect", "--driver", "470.82.01", "--gpu", "Tesla K80",
                    "--python", "3.11", "--json")  # fmt: skip
        checks = {c["component"]: c["status"] for c in json.loads(r.stdout)["requirements"][0]["checks"]}
        statuses = [checks["driver"], checks["compute_capability"]]
        expected = "f" if "fail" in statuses else "w" if "warn" in statuses else worst["ok"]
        assert row["verdict"] == expected, (row, checks)
        seen += 1
    assert seen == 3  # CUDA 11.8 (runs through minor-version compatibility), 12.1 and 12.4 (cannot)
    assert [r["verdict"] for r in _shown(tab) if r["os"] == "linux"] == ["w", "f", "f"]
    tab.close()


def test_the_page_prints_the_table_without_its_controls(page: Path, browser: Any) -> None:
    tab = browser.new_page()
    tab.goto(page.as_uri())
    tab.emulate_media(media="print")
    assert not tab.locator("#filters").is_visible() and tab.locator("table").is_visible()
    assert tab.pdf()[:5] == b"%PDF-"
    tab.close()
