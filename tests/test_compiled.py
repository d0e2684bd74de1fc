"""Compiled data (``compiled``): validated rows reused across processes, keyed by content, never able to break a
command."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from dnnresolve import matrix as matrix_module
from dnnresolve.matrix import load_matrix, packaged_matrix_path
from dnnresolve.matrix.parse import parse_matrix

# what the user cache holds, and when, is these tests' subject: each starts from an empty one
pytestmark = pytest.mark.cold_cache

REPO = Path(__file__).resolve().parents[1]
Run = Callable[..., subprocess.CompletedProcess[str]]


def _record(run_cli: Run, *env: tuple[str, str]) -> dict[str, object]:
    r = run_cli("matrix", "tensorflow-gpu==1.0.0", "--json", "--offline", env=dict(env))
    assert r.returncode == 0, r.stderr
    (rec,) = json.loads(r.stdout)["releases"]
    assert isinstance(rec, dict)
    return rec


def test_second_run_reads_the_cache_and_answers_the_same(run_cli: Run, tmp_path: Path) -> None:
    first = _record(run_cli)
    (cached,) = (tmp_path / "user-cache" / "compiled").glob("matrix-*.bin")
    second = _record(run_cli)
    assert first == second and first["cuda"] == ["8.0"]
    assert cached.exists()


def test_a_corrupt_cache_file_is_ignored(run_cli: Run, tmp_path: Path) -> None:
    _record(run_cli)
    (cached,) = (tmp_path / "user-cache" / "compiled").glob("matrix-*.bin")
    cached.write_bytes(b"\x00not marshal")
    assert _record(run_cli)["version"] == "1.0.0"


def test_an_unwritable_cache_never_breaks_a_command(run_cli: Run, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    assert _record(run_cli, ("DNNRESOLVE_CACHE_DIR", str(blocker / "cache")))["version"] == "1.0.0"


def test_an_edited_matrix_is_validated_again(run_cli: Run, tmp_path: Path) -> None:
    copy = tmp_path / "m.toml"
    shutil.copy(packaged_matrix_path(), copy)
    r = run_cli("matrix", "tensorflow-gpu", "--json", "--matrix", str(copy))
    assert r.returncode == 0, r.stderr
    copy.write_text(copy.read_text(encoding="utf-8") + '\n[[gpu]]\nname = "X"\n', encoding="utf-8")
    r = run_cli("matrix", "tensorflow-gpu", "--json", "--matrix", str(copy))
    assert r.returncode == 2 and "[[gpu]]" in r.stderr, r.stderr


def test_cached_rows_answer_every_query_as_the_parsed_matrix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DNNRESOLVE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(matrix_module, "_CACHE", {})
    path = tmp_path / "m.toml"
    shutil.copy(packaged_matrix_path(), path)
    load_matrix(path)  # parses and writes the cache
    matrix_module._CACHE.clear()
    cached = load_matrix(path)  # reads it
    assert cached._rows is not None, "the second load must come from the cache"
    parsed = parse_matrix(path.read_text(encoding="utf-8"), str(path))
    for spec in ("==1.0", "==1.0.1", ">=2.0,<2.3", "==2.1.0", "==0.4.30", "==9.9", ""):
        for package in parsed.packages():
            assert cached.find(package, spec) == parsed.find(package, spec), (package, spec)
    for f in parsed.frameworks:  # every release the matrix names, and its neighbours
        base = f.version.base_version
        for v in (str(f.version), f"{base}rc1", f"{base}.post1", f"{base}.1", f"1!{base}"):
            assert cached.find(f.package, f"=={v}") == parsed.find(f.package, f"=={v}"), (f.package, v)
    for name in ("Tesla K20m", "NVIDIA A100-SXM4-40GB", "GeForce GTX 1080 Ti", "H200", "no such card", ""):
        assert cached.gpu(name) == parsed.gpu(name), name
    # the same file rewritten (same size, other bytes): a new key, so the edit is seen
    text = path.read_text(encoding="utf-8").replace('package = "tensorflow-gpu"', 'package = "tensorflow-gpx"', 1)
    path.write_text(text, encoding="utf-8")
    matrix_module._CACHE.clear()
    assert "tensorflow-gpx" in load_matrix(path).packages()


def test_cached_rows_list_what_uses_a_cuda_or_cudnn_as_the_parsed_matrix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dnnresolve.versions import CudaVersion, CudnnVersion

    monkeypatch.setenv("DNNRESOLVE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(matrix_module, "_CACHE", {})
    load_matrix(packaged_matrix_path())
    matrix_module._CACHE.clear()
    cached = load_matrix(packaged_matrix_path())
    parsed = parse_matrix(packaged_matrix_path().read_text(encoding="utf-8"))
    for cuda in ("8.0", "11.8", "12.x", "13.0"):
        assert cached.using_cuda(CudaVersion.parse(cuda)) == parsed.using_cuda(CudaVersion.parse(cuda)), cuda
    for cudnn in ("5.1", "7.6", "8.9", "9.1"):
        got = cached.using_cudnn(CudnnVersion.parse(cudnn))
        assert got == parsed.using_cudnn(CudnnVersion.parse(cudnn)) and got, cudnn
        releases = cached.cudnn_releases(CudnnVersion.parse(cudnn))
        assert releases == parsed.cudnn_releases(CudnnVersion.parse(cudnn)) and releases, cudnn
    for os_name in ("linux", "windows"):
        table = cached.driver_table(os_name)
        assert table == parsed.driver_table(os_name) and len(table.toolkits) > 50, os_name


def test_an_edit_that_keeps_size_mtime_and_inode_is_seen(run_cli: Run, tmp_path: Path) -> None:
    """The attack on the old identity key: ``cp -p``, ``touch -r``, ``rsync --inplace -t`` keep the times."""
    copy = tmp_path / "m.toml"
    shutil.copy(packaged_matrix_path(), copy)
    before = os.stat(copy)
    r = run_cli("matrix", "tensorflow-gpu==1.0.0", "--json", "--matrix", str(copy))
    assert r.returncode == 0 and json.loads(r.stdout)["releases"][0]["cuda"] == ["8.0"], r.stderr
    data = copy.read_bytes()
    at = data.index(b'cuda = ["8.0"]', data.index(b'package = "tensorflow-gpu"\nversion = "1.0.0"'))
    with open(copy, "r+b") as f:  # in place: the same inode and size
        f.seek(at)
        f.write(b'cuda = ["9.0"]')
    os.utime(copy, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(copy)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    r = run_cli("matrix", "tensorflow-gpu==1.0.0", "--json", "--matrix", str(copy))
    assert r.returncode == 0 and json.loads(r.stdout)["releases"][0]["cuda"] == ["9.0"], r.stderr


def test_a_changed_schema_compiles_anew(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user cache's entry is named by the code that validates too: a checkout whose schema changed does not
    read rows another schema let through."""
    from dnnresolve import compiled

    monkeypatch.setattr(compiled, "_code_digest", None)
    first = compiled._entry_name("matrix", "k")
    monkeypatch.setattr(compiled, "COMPILERS", (*compiled.COMPILERS[:-1], "cli.py"))
    monkeypatch.setattr(compiled, "_code_digest", None)
    assert compiled._entry_name("matrix", "k") != first


def test_every_module_that_validates_is_in_the_code_digest() -> None:
    """What a compiled file holds is decided by the modules that load while the matrix and the catalog are
    validated; each of them must be in ``COMPILERS``, or an edit of it in a checkout would go unseen."""
    code = (
        "import sys\n"
        "from dnnresolve.matrix import packaged_matrix_path\n"
        "from dnnresolve.matrix.parse import compile_matrix\n"
        "from dnnresolve.explain.catalog import compile_catalog, packaged_catalog_path\n"
        "compile_matrix(packaged_matrix_path().read_bytes(), 'm')\n"
        "compile_catalog(packaged_catalog_path().read_bytes(), 'c')\n"
        "print('\\n'.join(sorted(m for m in sys.modules if m.startswith('dnnresolve.'))))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    from dnnresolve.compiled import COMPILERS

    package = REPO / "src" / "dnnresolve"
    names = [m.removeprefix("dnnresolve.").replace(".", "/") for m in out.split()]
    loaded = {f"{n}/__init__.py" if (package / n).is_dir() else f"{n}.py" for n in names}
    assert loaded <= set(COMPILERS), sorted(loaded - set(COMPILERS))


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="the shortcut is for Linux")
@pytest.mark.parametrize("xdg", ["", "/tmp/xdg-cache-home", "relative/ignored"])
def test_cache_directory_is_where_platformdirs_puts_it(monkeypatch: pytest.MonkeyPatch, xdg: str) -> None:
    import platformdirs

    from dnnresolve.cachedir import user_cache_path

    def user_cache_dir() -> Path:
        path = user_cache_path()
        assert path is not None
        return Path(path)

    monkeypatch.delenv("DNNRESOLVE_CACHE_DIR", raising=False)
    if xdg:
        monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    else:
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    if xdg.startswith("relative"):
        # The XDG spec says a relative path is invalid and to be ignored. platformdirs 4.14 ignores it; 4.4.0,
        # what pip installs for Python 3.9, uses it as given. dnnresolve follows the spec on every Python.
        assert user_cache_dir() == Path.home() / ".cache" / "dnnresolve"
        return
    assert user_cache_dir() == Path(platformdirs.user_cache_dir("dnnresolve"))
