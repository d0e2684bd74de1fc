"""The user cache cannot be turned against its user: what another user could write is not read, nothing is
written through a planted symlink, a FIFO or an oversized file in it neither hangs nor breaks a command, and
there is no cache without a home. Real directories, modes, symlinks and FIFOs; the real command line."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from dnnresolve import compiled
from dnnresolve.matrix import packaged_matrix_path
from dnnresolve.matrix.parse import compile_matrix

# what the user cache holds, and when, is these tests' subject: each starts from an empty one
pytestmark = pytest.mark.cold_cache

Run = Callable[..., subprocess.CompletedProcess[str]]
REPO = Path(__file__).resolve().parents[1]
TRUE_SOURCE = "https://www.tensorflow.org/install/source#gpu"
FORGED_SOURCE = "https://forged.example/"


def _source(run_cli: Run, cache: Path, *extra: str) -> tuple[str, str]:
    r = run_cli(
        "matrix", "tensorflow-gpu==1.0.0", "--json", "--offline", *extra, env={"DNNRESOLVE_CACHE_DIR": str(cache)}
    )
    assert r.returncode == 0, r.stderr
    return str(json.loads(r.stdout)["releases"][0]["source"]), r.stderr


def _forge(cache: Path) -> Path:
    """A compiled matrix with another source on every TensorFlow row, named as the packaged matrix's entry."""
    real = packaged_matrix_path().read_bytes()
    forged = real.replace(TRUE_SOURCE.encode(), FORGED_SOURCE.encode())
    blobs, meta = compile_matrix(forged, "forged")
    directory = cache / "compiled"
    directory.mkdir(parents=True, exist_ok=True)
    entry = directory / compiled._entry_name("matrix", compiled.source_key(real))
    entry.write_bytes(compiled.build("matrix", compiled.source_key(real), blobs, meta))
    return entry


def test_a_private_cache_is_used_and_made_0700(run_cli: Run, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert _source(run_cli, cache)[0] == TRUE_SOURCE
    for d in (cache, cache / "compiled"):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700, d
    (entry,) = (cache / "compiled").iterdir()
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    # the control for the tests below: an entry in a private directory is trusted as it is
    cache2 = tmp_path / "cache2"
    cache2.mkdir(mode=0o700)
    _forge(cache2).chmod(0o600)
    (cache2 / "compiled").chmod(0o700)
    assert _source(run_cli, cache2)[0] == FORGED_SOURCE


@pytest.mark.parametrize("loose", ["cache", "compiled", "entry"])
def test_what_group_or_others_may_write_is_not_read(run_cli: Run, tmp_path: Path, loose: str) -> None:
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    entry = _forge(cache)
    (cache / "compiled").chmod(0o700)
    entry.chmod(0o600)
    {"cache": cache, "compiled": cache / "compiled", "entry": entry}[loose].chmod(0o777 if loose != "entry" else 0o666)
    source, stderr = _source(run_cli, cache, "--debug")
    assert source == TRUE_SOURCE
    assert "writable by group or others" in stderr


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file away needs root")
def test_an_entry_another_user_owns_is_not_read(run_cli: Run, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    entry = _forge(cache)
    (cache / "compiled").chmod(0o700)
    entry.chmod(0o644)
    os.chown(entry, 65534, 65534)  # nobody
    source, stderr = _source(run_cli, cache, "--debug")
    assert source == TRUE_SOURCE and "owned by uid 65534" in stderr


def test_a_symlink_in_place_of_an_entry_is_neither_followed_nor_written_through(run_cli: Run, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    forged = _forge(elsewhere)  # a well-formed entry outside the cache
    forged.chmod(0o600)
    (cache / "compiled").mkdir(parents=True, mode=0o700)
    cache.chmod(0o700)
    link = cache / "compiled" / forged.name
    link.symlink_to(forged)
    victim_before = forged.read_bytes()
    source, _stderr = _source(run_cli, cache, "--debug")
    assert source == TRUE_SOURCE  # not read through the link
    assert forged.read_bytes() == victim_before  # not written through it either: the link itself was replaced
    assert not link.is_symlink() and link.is_file()


def test_a_fifo_in_place_of_an_entry_or_the_update_metadata_does_not_block(run_cli: Run, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _source(run_cli, cache)  # writes the real entry
    (entry,) = (cache / "compiled").iterdir()
    entry.unlink()
    os.mkfifo(entry, 0o600)
    os.mkfifo(cache / "matrix.json", 0o600)
    r = run_cli("matrix", "tensorflow-gpu==1.0.0", "--json", env={"DNNRESOLVE_CACHE_DIR": str(cache)})
    assert r.returncode == 0 and json.loads(r.stdout)["releases"][0]["source"] == TRUE_SOURCE, r.stderr


def test_an_oversized_entry_is_not_read(run_cli: Run, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _source(run_cli, cache)
    (entry,) = (cache / "compiled").iterdir()
    with open(entry, "r+b") as f:  # sparse: costs no disk
        f.truncate(65 << 20)
    source, stderr = _source(run_cli, cache, "--debug")
    assert source == TRUE_SOURCE and "not used" in stderr


def test_pruning_survives_dangling_symlinks_and_strays(run_cli: Run, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    directory = cache / "compiled"
    directory.mkdir(parents=True, mode=0o700)
    cache.chmod(0o700)
    for i in range(compiled.KEEP + 5):
        (directory / f"matrix-old{i:02d}.bin").write_bytes(b"stale")
    (directory / "matrix-dangling.bin").symlink_to(tmp_path / "nowhere")
    os.mkfifo(directory / "matrix-fifo.bin")
    copy = tmp_path / "m.toml"  # a matrix with no entry yet: this run compiles and prunes
    shutil.copy(packaged_matrix_path(), copy)
    r = run_cli(
        "matrix", "tensorflow-gpu==1.0.0", "--json", "--matrix", str(copy), env={"DNNRESOLVE_CACHE_DIR": str(cache)}
    )
    assert r.returncode == 0, r.stderr
    left = sorted(p.name for p in directory.iterdir())
    assert len(left) == compiled.KEEP, left
    assert "matrix-dangling.bin" not in left and "matrix-fifo.bin" not in left


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the home rule is for Linux")
def test_no_home_means_no_cache_not_one_at_the_root(run_cli: Run, tmp_path: Path) -> None:
    root_cache = Path("/.cache/dnnresolve")
    existed = root_cache.exists()
    work = tmp_path / "cwd"
    work.mkdir()
    env = {"HOME": "", "XDG_CACHE_HOME": "", "DNNRESOLVE_CACHE_DIR": ""}
    r = run_cli("matrix", "tensorflow-gpu==1.0.0", "--json", "--debug", env=env, cwd=work)
    assert r.returncode == 0, r.stderr
    assert "no cache: no usable home directory" in r.stderr
    assert existed or not root_cache.exists()
    assert list(work.iterdir()) == []  # nor one relative to the working directory
