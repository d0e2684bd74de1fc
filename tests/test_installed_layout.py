"""dnnresolve as the wheel installs it: the package with ``data/*.compiled`` in place of the TOML, compiled by the
same step the wheel's build runs (``compiled.compile_shipped``). Its first question parses no TOML, hashes and
writes nothing; ``update`` knows the packaged matrix by what its compiled form records."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dnnresolve.compiled import compile_shipped

from .servers import Reply, serve

REPO = Path(__file__).resolve().parents[1]
CLASSIC = (
    "Loaded runtime CuDNN library: 5005 (compatibility version 5000) but source was compiled with 5103 "
    "(compatibility version 5100)"
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    shutil.copytree(REPO / "src" / "dnnresolve", root / "dnnresolve", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "dnnresolve" / "data").mkdir()
    compile_shipped(REPO / "data", root / "dnnresolve" / "data")
    return root


def run(site: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DNNRESOLVE_")}
    env.update(PYTHONPATH=str(site), NO_COLOR="1", DNNRESOLVE_CACHE_DIR=str(cache), NO_PROXY="127.0.0.1")
    code = (
        "import sys\n"
        "from dnnresolve.cli import main\n"
        "status = main(sys.argv[1:])\n"
        "sys.stderr.write('TOML ' + str(any(m in sys.modules for m in ('tomllib', 'tomli'))) + '\\n')\n"
        "sys.exit(status)\n"
    )
    argv = [sys.executable, "-c", code, *args]
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=site, timeout=120)


def test_first_questions_parse_no_toml_and_write_nothing(site: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    r = run(site, cache, "matrix", "tensorflow-gpu==1.0.0", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["releases"][0]["cuda"] == ["8.0"] and "TOML False" in r.stderr
    r = run(site, cache, "explain", "--json", "--no-detect", CLASSIC)
    assert r.returncode == 1 and "TOML False" in r.stderr, r.stderr
    (d,) = json.loads(r.stdout)["diagnoses"]
    assert d["found"] == {"cudnn": "5.0.5"} and d["expected"] == {"cudnn": "5.1.3"}
    r = run(site, cache, "plan", "tensorflow-gpu==1.0", "--no-detect", "--json")
    assert r.returncode in (0, 1) and "TOML False" in r.stderr, r.stderr
    assert not cache.exists() or not any(cache.rglob("*"))


def test_update_knows_the_packaged_matrix_by_its_recorded_sha256(site: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    packaged = (REPO / "data" / "compat_matrix.toml").read_bytes()
    newer = packaged + (
        b'\n[[gpu]]\nname = "Example GPU X1"\ncompute_capability = "9.0"\narchitecture = "Hopper"\n'
        b'source = "https://developer.nvidia.com/cuda-gpus"\n'
    )

    def routes(data: bytes) -> dict[str, Reply]:
        line = f"{hashlib.sha256(data).hexdigest()}  compat_matrix.toml\n".encode()
        return {"/m/compat_matrix.toml": Reply(data), "/m/compat_matrix.toml.sha256": Reply(line)}

    with serve(routes(packaged)) as srv:
        r = run(site, cache, "update", "--url", srv.url("/m/compat_matrix.toml"), "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["status"] == "current", r.stdout + r.stderr
    with serve(routes(newer)) as srv:
        r = run(site, cache, "update", "--url", srv.url("/m/compat_matrix.toml"), "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["status"] == "updated", r.stdout + r.stderr
    r = run(site, cache, "matrix", "--json")
    assert r.returncode == 0 and "cached update" in r.stderr, r.stderr


def test_a_damaged_shipped_file_is_one_clear_line(site: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(site, broken)
    (broken / "dnnresolve" / "data" / "compat_matrix.compiled").write_bytes(b"DNRC\x00")
    r = run(broken, tmp_path / "cache", "matrix", "torch", "--offline")
    assert r.returncode == 2, r.stderr
    (line,) = [x for x in r.stderr.splitlines() if not x.startswith("TOML ")]
    assert "compat_matrix.compiled" in line and "reinstall" in line and "Traceback" not in r.stderr


def test_the_shipped_catalog_is_the_catalog_its_toml_validates_to(site: Path) -> None:
    """The wheel ships the catalog validated (``compile_catalog``), built back by position without validating
    again: every entry, marker, library rule and the anchors that prefilter a line are those the TOML gives."""
    from dnnresolve.explain.catalog import load_catalog, parse_catalog

    shipped = site / "dnnresolve" / "data" / "error_catalog.compiled"
    compiled = load_catalog(shipped)
    parsed = parse_catalog((REPO / "data" / "error_catalog.toml").read_text(encoding="utf-8"), str(shipped))
    assert len(compiled.entries) == len(parsed.entries) > 100
    assert compiled.entries == parsed.entries
    assert [e.line for e in compiled.entries] == [e.line for e in parsed.entries]
    assert compiled.markers == parsed.markers and compiled.libraries == parsed.libraries
    assert compiled.anchors == parsed.anchors and compiled.framework_names == parsed.framework_names
    assert compiled.packages == parsed.packages
    classic = next(e for e in compiled.entries if e.pattern.search(CLASSIC))
    assert classic == next(e for e in parsed.entries if e.pattern.search(CLASSIC))
