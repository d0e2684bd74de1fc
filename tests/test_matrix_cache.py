"""The matrix cache: validated rows reused across processes, never able to break a command."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from dnnresolve.matrix import packaged_matrix_path

Run = Callable[..., subprocess.CompletedProcess[str]]


def _record(run_cli: Run, *env: tuple[str, str]) -> dict[str, object]:
    r = run_cli("matrix", "tensorflow-gpu==1.0.0", "--json", "--offline", env=dict(env))
    assert r.returncode == 0, r.stderr
    rec: dict[str, object] = json.loads(r.stdout)
    return rec


def test_second_run_reads_the_cache_and_answers_the_same(run_cli: Run, tmp_path: Path) -> None:
    first = _record(run_cli)
    (cached,) = (tmp_path / "user-cache" / "parsed").glob("matrix-*.marshal")
    second = _record(run_cli)
    assert first == second and first["cuda"] == ["8.0"]
    assert cached.exists()


def test_a_corrupt_cache_file_is_ignored(run_cli: Run, tmp_path: Path) -> None:
    _record(run_cli)
    (cached,) = (tmp_path / "user-cache" / "parsed").glob("matrix-*.marshal")
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
