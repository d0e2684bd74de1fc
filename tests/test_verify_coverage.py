"""scripts/verify_coverage.py against a real HTTP index on 127.0.0.1 serving PEP 691 JSON pages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.servers import Reply, serve

REPO = Path(__file__).resolve().parents[1]


def _page(*filenames: str, yanked: tuple[str, ...] = ()) -> Reply:
    files = [
        {"filename": name, "url": f"../../files/{name}", "hashes": {}, "yanked": name in yanked} for name in filenames
    ]
    body = json.dumps({"meta": {"api-version": "1.0"}, "name": "x", "files": files}).encode()
    return Reply(body, content_type="application/vnd.pypi.simple.v1+json")


def _row(package: str, version: str, os: str, covers: str = "", aliases: str = "") -> str:
    return f"""
[[framework]]
package = "{package}"
version = "{version}"
{f'covers = "{covers}"' if covers else ""}
{f"aliases = [{aliases}]" if aliases else ""}
os = [{os}]
python = ["3.11"]
source = "https://pypi.org/project/{package}/{version}/"
"""


def _run(index: str, matrix: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "verify_coverage.py"),
            "--index-url",
            index,
            "--matrix",
            str(matrix),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


TORCH = _page(
    "torch-1.0.0-cp311-cp311-manylinux1_x86_64.whl",
    "torch-1.1.0-cp311-cp311-manylinux1_x86_64.whl",
    "torch-1.1.0-cp311-cp311-macosx_10_9_x86_64.whl",
    "torch-1.2.0-cp311-cp311-manylinux_2_28_x86_64.whl",
    "torch-1.2.0-cp311-cp311-win_amd64.whl",
    "torch-1.2.1-cp311-cp311-win_amd64.whl",
    "torch-1.3.0rc1-cp311-cp311-manylinux1_x86_64.whl",
    "torch-1.3.0.tar.gz",
    "torch-1.4.0-cp311-cp311-manylinux1_x86_64.whl",
    "torch-1.5.0-cp311-cp311-manylinux1_x86_64.whl",
    yanked=("torch-1.4.0-cp311-cp311-manylinux1_x86_64.whl",),
)


def test_releases_no_row_covers_are_named_per_system(tmp_path: Path) -> None:
    matrix = tmp_path / "m.toml"
    matrix.write_text(
        _row("torch", "1.0.0", '"linux"') + _row("torch", "1.2.0", '"linux", "windows"', covers=">=1.2.0,<1.3")
    )
    with serve({"/simple/torch/": TORCH}) as srv:
        out = _run(srv.url("/simple"), matrix)
    assert out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    # 1.1.0 has a Linux wheel and lies between rows; its macOS wheel is no system of the matrix
    assert "MISSING torch linux: 1.1.0" in lines
    # 1.2.1 is covered on Windows by the 1.2 row; the pre-release, the sdist-only and the yanked release do not count
    assert not any("1.2.1" in line or "1.3.0" in line or "1.4.0" in line for line in lines)
    assert "STALE   torch: the index has 1.5.0, the matrix ends at 1.2.0" in lines
    assert "newer   torch linux, after the newest linux row (1.2.0): 1.5.0" in lines
    assert lines[-1] == "2 difference(s)"

    matrix.write_text(matrix.read_text() + _row("torch", "1.1.0", '"linux"') + _row("torch", "1.5.0", '"linux"'))
    with serve({"/simple/torch/": TORCH}) as srv:
        out = _run(srv.url("/simple"), matrix)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.splitlines() == ["ok      torch: every release from 1.0.0 on is covered", "0 difference(s)"]


def test_a_name_the_framework_left_is_answered_by_its_own_rows(tmp_path: Path) -> None:
    # jaxlib's own rows, then jax's rows naming jaxlib, then jax alone (CUDA moved to a plugin)
    matrix = tmp_path / "m.toml"
    matrix.write_text(
        _row("jaxlib", "0.3.25", '"linux"')
        + _row("jax", "0.4.1", '"linux"', covers=">=0.4.0,<0.4.30", aliases='"jaxlib"')
        + _row("jax", "0.5.0", '"linux"', covers=">=0.4.30,<0.6")
    )
    jaxlib = _page(
        "jaxlib-0.3.25-cp311-cp311-manylinux2014_x86_64.whl",
        "jaxlib-0.4.1-cp311-cp311-manylinux2014_x86_64.whl",
        "jaxlib-0.5.0-cp311-cp311-manylinux2014_x86_64.whl",
    )
    jax = _page("jax-0.4.1-py3-none-any.whl", "jax-0.5.0-py3-none-any.whl")
    with serve({"/simple/jaxlib/": jaxlib, "/simple/jax/": jax}) as srv:
        out = _run(srv.url("/simple"), matrix)
        only = _run(srv.url("/simple"), matrix, "--package", "JAXlib")
        unknown = _run(srv.url("/simple"), matrix, "--package", "tensorflow")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "named   jaxlib: the rows of jax answer for 0.5.0" in out.stdout.splitlines()
    assert "ok      jax: every release from 0.4.1 on is covered" in out.stdout.splitlines()
    assert only.returncode == 0 and "jax:" not in only.stdout
    assert unknown.returncode == 2 and "no rows for tensorflow" in unknown.stderr
