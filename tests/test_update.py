"""`dnnresolve update` against real servers on 127.0.0.1: a good update is cached and used; every bad one
fails with one clear line and leaves the cache byte-for-byte as it was."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dnnresolve.credentials import redact
from dnnresolve.matrix import packaged_matrix_path
from dnnresolve.remote import parse_checksum

from .conftest import REPO
from .servers import Reply, proxy_server, serve, silent_server

# what the user cache holds, and when, is these tests' subject: each starts from an empty one
pytestmark = pytest.mark.cold_cache

PACKAGED = packaged_matrix_path().read_bytes()
NEWER_ROW = b"""
[[framework]]
package = "example-gpu-framework"
version = "1.1.0"
covers = "==1.1.*"
os = ["linux"]
python = ["3.5"]
cuda = ["8.0"]
cudnn = ["5.1"]
source = "https://www.tensorflow.org/install/source#gpu"
"""
NEWER = PACKAGED + NEWER_ROW
INVALID = PACKAGED + NEWER_ROW.replace(b'cuda = ["8.0"]', b'cuda = "8.0"')
MATRIX_PATH = "/data/compat_matrix.toml"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def routes(matrix: bytes, checksum: str | None = None, **reply: Any) -> dict[str, Reply]:
    line = f"{checksum or sha(matrix)}  compat_matrix.toml\n"
    return {
        MATRIX_PATH: Reply(matrix, content_type="text/plain", **reply),
        MATRIX_PATH + ".sha256": Reply(line.encode(), content_type="text/plain"),
    }


def snapshot(directory: Path) -> dict[str, bytes]:
    files = sorted(p for p in directory.rglob("*") if p.is_file()) if directory.exists() else []
    return {str(p.relative_to(directory)): p.read_bytes() for p in files}


Run = Callable[..., Any]


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "user-cache"  # run_cli points DNNRESOLVE_CACHE_DIR here


def versions_listed(run_cli: Run, *flags: str) -> tuple[list[str], str]:
    r = run_cli("matrix", "example-gpu-framework", "--json", *flags)
    assert r.returncode in (0, 1), r.stderr  # 1: the packaged matrix does not know the test's package
    out = json.loads(r.stdout)
    releases = out.get("releases", [out] if "version" in out else [])
    return [rel["version"] for rel in releases], r.stderr


def good_update(run_cli: Run) -> None:
    with serve(routes(NEWER)) as srv:
        r = run_cli("update", "--url", srv.url(MATRIX_PATH))
    assert r.returncode == 0, r.stderr


def test_update_verifies_caches_and_commands_use_the_cache(run_cli: Run, cache: Path) -> None:
    with serve(routes(NEWER)) as srv:
        url = srv.url(MATRIX_PATH)
        r = run_cli("update", "--url", url)
    assert r.returncode == 0, r.stderr
    assert f"updated the compatibility matrix from {url}" in r.stdout
    assert f"sha256   {sha(NEWER)} (verified)" in r.stdout
    meta = json.loads((cache / "matrix.json").read_text())
    assert meta["url"] == url and meta["sha256"] == sha(NEWER)
    assert meta["fetched_at"].endswith("Z")
    assert (cache / meta["file"]).read_bytes() == NEWER

    versions, stderr = versions_listed(run_cli)
    assert versions == ["1.1.0"]
    assert stderr.startswith(f"dnnresolve: matrix: cached update from {url}, fetched ") and "(today)" in stderr

    versions, stderr = versions_listed(run_cli, "--offline")
    assert versions == [] and stderr == ""


def test_update_url_from_environment_and_json_output(run_cli: Run, cache: Path) -> None:
    with serve(routes(NEWER)) as srv:
        r = run_cli("update", "--json", env={"DNNRESOLVE_UPDATE_URL": srv.url(MATRIX_PATH)})
        again = run_cli("update", "--json", env={"DNNRESOLVE_UPDATE_URL": srv.url(MATRIX_PATH)})
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert (
        rec["status"] == "updated"
        and rec["sha256"] == sha(NEWER)
        and rec["rows"]["framework"] == PACKAGED.count(b"[[framework]]") + 1
    )
    assert json.loads(again.stdout)["status"] == "unchanged"


@pytest.mark.parametrize(
    ("name", "make_routes", "words"),
    [
        ("truncated file", lambda: routes(NEWER[:200], checksum=sha(NEWER)), "checksum mismatch"),
        ("connection closed early", lambda: routes(NEWER[:200], declared_length=len(NEWER)), "cut short"),
        ("wrong checksum", lambda: routes(NEWER, checksum="0" * 64), "checksum mismatch"),
        (
            "invalid schema",
            lambda: routes(INVALID),
            f"the downloaded matrix is not valid: [[framework]] row {PACKAGED.count(b'[[framework]]') + 1} "
            "(example-gpu-framework 1.1.0), field 'cuda'",
        ),
        ("http 500", lambda: {**routes(NEWER), MATRIX_PATH: Reply(b"oops", 500)}, "answered HTTP 500"),
        ("no checksum", lambda: {MATRIX_PATH: Reply(NEWER)}, ".sha256 answered HTTP 404"),
        ("garbage checksum", lambda: {**routes(NEWER), MATRIX_PATH + ".sha256": Reply(b"<html>")}, "bad checksum"),
    ],
)
def test_bad_update_fails_clearly_and_keeps_the_cache(
    run_cli: Run, cache: Path, name: str, make_routes: Callable[[], dict[str, Reply]], words: str
) -> None:
    good_update(run_cli)
    before = snapshot(cache)
    assert sorted(n.split("-")[0] for n in before) == ["compiled/matrix", "matrix", "matrix.json"], sorted(before)
    with serve(make_routes()) as srv:
        r = run_cli("update", "--url", srv.url(MATRIX_PATH))
    assert r.returncode == 2, name
    assert r.stderr.startswith("dnnresolve update: error: ") and r.stderr.count("\n") == 1, r.stderr
    assert words in r.stderr and "Traceback" not in r.stderr
    assert snapshot(cache) == before
    assert versions_listed(run_cli)[0] == ["1.1.0"]


def test_server_that_never_answers_times_out(run_cli: Run, cache: Path) -> None:
    good_update(run_cli)
    before = snapshot(cache)
    with silent_server() as base:
        start = time.monotonic()
        r = run_cli("update", "--url", base + MATRIX_PATH, env={"DNNRESOLVE_HTTP_TIMEOUT": "0.5"})
        elapsed = time.monotonic() - start
    assert r.returncode == 2
    assert f"no answer from {base}{MATRIX_PATH}.sha256 within 0.5 s" in r.stderr
    assert elapsed < 15
    assert snapshot(cache) == before


def test_refused_url_and_credentials_never_shown(run_cli: Run, cache: Path) -> None:
    r = run_cli("update", "--url", "http://alice:s3cretpw@example.org/compat_matrix.toml")
    assert r.returncode == 2
    assert "plain http" in r.stderr and "http://***@example.org/" in r.stderr and "s3cretpw" not in r.stderr
    with serve({MATRIX_PATH + ".sha256": Reply(b"down", 500)}) as srv:
        url = srv.url(MATRIX_PATH).replace("http://", "http://alice:s3cretpw@")
        r = run_cli("update", "--url", url)
    assert r.returncode == 2 and "answered HTTP 500" in r.stderr
    assert "s3cretpw" not in r.stderr and "alice" not in r.stderr
    assert not cache.exists()
    with silent_server() as base:
        url = base.replace("http://", "http://alice:s3cretpw@") + MATRIX_PATH
        r = run_cli("update", "--url", url, env={"DNNRESOLVE_HTTP_TIMEOUT": "0.3"})
    assert "no answer" in r.stderr and "s3cretpw" not in r.stderr


def test_connection_refused_is_one_line(run_cli: Run) -> None:
    with serve() as srv:
        url = srv.url(MATRIX_PATH)
    r = run_cli("update", "--url", url)
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert f"cannot connect to {url}.sha256: Connection refused" in r.stderr


def test_packaged_matrix_is_already_current(run_cli: Run, cache: Path) -> None:
    good_update(run_cli)
    with serve(routes(PACKAGED)) as srv:
        r = run_cli("update", "--url", srv.url(MATRIX_PATH))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("already current:") and "removed the older cached update" in r.stdout
    assert not list(cache.glob("matrix*"))
    versions, stderr = versions_listed(run_cli)
    assert versions == [] and stderr == ""


def test_damaged_or_outdated_cache_is_set_aside(run_cli: Run, cache: Path) -> None:
    good_update(run_cli)
    meta = json.loads((cache / "matrix.json").read_text())
    cached = cache / meta["file"]
    cached.write_bytes(cached.read_bytes() + b"\n# edited\n")
    versions, stderr = versions_listed(run_cli)
    assert versions == []
    assert "cached update ignored:" in stderr and "does not match its recorded sha256" in stderr

    good_update(run_cli)
    meta = json.loads((cache / "matrix.json").read_text())
    # as if dnnresolve was upgraded since the fetch: another packaged matrix, another file
    meta["packaged_sha256"], meta["packaged_key"] = "0" * 64, "the file of an older install"
    (cache / "matrix.json").write_text(json.dumps(meta))
    versions, stderr = versions_listed(run_cli)
    assert versions == [] and "packaged matrix changed since it was fetched" in stderr


def test_update_refuses_offline(run_cli: Run) -> None:
    r = run_cli("update", "--offline")
    assert r.returncode == 2 and "cannot run with --offline" in r.stderr


@pytest.mark.parametrize(
    "text",
    [
        "{h}  compat_matrix.toml\n",
        "{h} *compat_matrix.toml\n",
        "{h}\n",
        "SHA256 (compat_matrix.toml) = {h}\n",
        "# sums\n" + "1" * 64 + "  other.toml\n{h}  compat_matrix.toml\n",
    ],
)
def test_checksum_formats(text: str) -> None:
    h = sha(b"x")
    assert parse_checksum(text.format(h=h.upper()), "compat_matrix.toml") == h


def test_checksum_without_our_file_is_refused() -> None:
    with pytest.raises(ValueError, match="does not list"):
        parse_checksum("1" * 64 + "  a.toml\n" + "2" * 64 + "  b.toml\n", "compat_matrix.toml")


def test_redact() -> None:
    assert redact("see https://u:p@w@host:8/x?y=1 and ftp://h/") == "see https://***@host:8/x?y=1 and ftp://h/"


def test_malformed_url_is_one_line(run_cli: Run) -> None:
    r = run_cli("update", "--url", "https://a:b@[::1/compat_matrix.toml")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "is not a valid URL" in r.stderr
    assert "a:b" not in r.stderr


def test_redirects_are_checked_before_they_are_followed(run_cli: Run, cache: Path) -> None:
    moved = {
        "/old.toml.sha256": Reply(b"", 301, headers={"Location": MATRIX_PATH + ".sha256"}),
        "/old.toml": Reply(b"", 302, headers={"Location": MATRIX_PATH}),
    }
    with serve({**routes(NEWER), **moved}) as srv:
        r = run_cli("update", "--url", srv.url("/old.toml"))
    assert r.returncode == 0, r.stderr
    # A downgrade to plain http elsewhere is refused without contacting that host (tests never leave 127.0.0.1).
    with serve({"/old.toml.sha256": Reply(b"", 302, headers={"Location": "http://example.org/x.sha256"})}) as srv:
        r = run_cli("update", "--url", srv.url("/old.toml"))
    assert r.returncode == 2
    assert "redirect to http://example.org/x.sha256 uses plain http" in r.stderr


def test_bad_timeout_setting_and_unwritable_cache(run_cli: Run, tmp_path: Path) -> None:
    r = run_cli("update", "--url", "https://127.0.0.1:9/m.toml", env={"DNNRESOLVE_HTTP_TIMEOUT": "soon"})
    assert r.returncode == 2 and "DNNRESOLVE_HTTP_TIMEOUT='soon' is not a positive number of seconds" in r.stderr
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x")
    with serve(routes(NEWER)) as srv:
        r = run_cli("update", "--url", srv.url(MATRIX_PATH), env={"DNNRESOLVE_CACHE_DIR": str(blocker / "cache")})
    assert r.returncode == 2 and "cannot write the matrix cache" in r.stderr and r.stderr.count("\n") == 1


def test_a_cached_update_edited_in_place_is_still_caught(run_cli: Run, cache: Path) -> None:
    """An edit that keeps the size, the inode and the modification time (``rsync --inplace -t``) is still seen:
    the update is known by its content, never by its times."""
    good_update(run_cli)
    meta = json.loads((cache / "matrix.json").read_text())
    assert versions_listed(run_cli)[0] != []  # the update is used
    cached = cache / meta["file"]
    before = cached.stat()
    data = cached.read_bytes()
    with open(cached, "r+b") as f:
        f.write(data.replace(b"example-gpu-framework", b"example-gpu-frameworx"))  # same size, new bytes
    os.utime(cached, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (cached.stat().st_ino, cached.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    versions, stderr = versions_listed(run_cli)
    assert versions == [] and "does not match its recorded sha256" in stderr


PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def through(proxy: str) -> dict[str, str]:
    """Every proxy variable set to ``proxy``, and nothing exempt from it (run_cli exempts loopback by default)."""
    return {**{name: proxy for name in PROXY_VARIABLES}, "NO_PROXY": "", "no_proxy": ""}


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_loopback_update_never_goes_through_a_proxy(run_cli: Run, cache: Path, host: str) -> None:
    # issue #26: with HTTP(S)_PROXY set and no NO_PROXY, a local mirror was asked through the proxy, whose 502
    # was then reported as the mirror's own answer
    with proxy_server(502) as proxy, serve(routes(NEWER)) as srv:
        r = run_cli("update", "--url", srv.url(MATRIX_PATH).replace("127.0.0.1", host), env=through(proxy.url))
    assert r.returncode == 0, r.stderr
    assert proxy.contacts == []
    assert [path for path, _ in srv.seen] == [MATRIX_PATH + ".sha256", MATRIX_PATH]
    assert json.loads((cache / "matrix.json").read_text())["sha256"] == sha(NEWER)


def test_an_error_from_a_proxy_names_the_proxy_not_the_url(run_cli: Run) -> None:
    # A host that is not this machine goes through the proxy as the environment says; the proxy is on
    # 127.0.0.1 and answers itself, so nothing leaves the machine (.invalid names never resolve).
    with proxy_server(502) as proxy:
        address = proxy.url.removeprefix("http://")
        r = run_cli(
            "update",
            "--url",
            "https://matrix.invalid/compat_matrix.toml",
            env=through(f"http://pxuser:pxsecret@{address}"),
        )
    assert proxy.contacts == ["CONNECT matrix.invalid:443"]
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert f"the proxy {address} (https_proxy) refused to reach https://matrix.invalid/compat_matrix.toml.sha256" in (
        r.stderr
    )
    assert "502 Bad Gateway" in r.stderr
    assert "pxsecret" not in r.stderr and "pxuser" not in r.stderr


def run_bounded(
    tmp_path: Path, *args: str, env: dict[str, str], timeout: float = 20
) -> subprocess.CompletedProcess[str]:
    """run_cli with a short bound on the wait: the fault here is a command that does not end."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("DNNRESOLVE_")}
    full_env.update({"NO_COLOR": "1", "PYTHONPATH": str(REPO / "src"), "NO_PROXY": "127.0.0.1,localhost,::1"})
    full_env.update({"DNNRESOLVE_CACHE_DIR": str(tmp_path / "user-cache"), **env})
    return subprocess.run(
        [sys.executable, "-m", "dnnresolve", *args], capture_output=True, text=True, env=full_env, timeout=timeout
    )


@pytest.mark.parametrize("where", ["checksum", "matrix", "headers"])
def test_a_trickling_server_meets_the_overall_deadline(run_cli: Run, cache: Path, tmp_path: Path, where: str) -> None:
    # issue #26: one byte every half second is within any read timeout, so the download never ended
    good_update(run_cli)
    before = snapshot(cache)
    slow = routes(NEWER)
    if where == "matrix":
        slow[MATRIX_PATH].trickle_s = 0.5
    else:
        slow[MATRIX_PATH + ".sha256"].trickle_s = 0.5
        slow[MATRIX_PATH + ".sha256"].trickle_headers = where == "headers"
    with serve(slow) as srv:
        r = run_bounded(tmp_path, "update", "--url", srv.url(MATRIX_PATH), env={"DNNRESOLVE_HTTP_DEADLINE": "2"})
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("dnnresolve update: error: the update took longer than 2 s; gave up")
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    shown = srv.url(MATRIX_PATH) + ("" if where == "matrix" else ".sha256")
    assert f"while reading {shown} " in r.stderr and "DNNRESOLVE_HTTP_DEADLINE" in r.stderr
    assert snapshot(cache) == before


def test_bad_deadline_setting(run_cli: Run) -> None:
    r = run_cli("update", "--url", "https://127.0.0.1:9/m.toml", env={"DNNRESOLVE_HTTP_DEADLINE": "0"})
    assert r.returncode == 2 and "DNNRESOLVE_HTTP_DEADLINE='0' is not a positive number of seconds" in r.stderr


NEWER_TABLE = b'\n[[rocm]]\nversion = "6.0"\nsource = "https://rocm.docs.amd.com/"\n'


@pytest.mark.parametrize(
    ("name", "matrix", "words"),
    [
        ("a table this reader does not know", PACKAGED + NEWER_TABLE, "'rocm'"),
        ("a newer schema", b"schema = 2\n" + PACKAGED, "schema 2"),
    ],
)
def test_a_matrix_for_a_newer_dnnresolve_names_what_to_upgrade(
    run_cli: Run, cache: Path, name: str, matrix: bytes, words: str
) -> None:
    # (issue 21) a newer dnnresolve's matrix: one line that says this dnnresolve is too old for it and how to
    # upgrade; the cache is kept as it was
    good_update(run_cli)
    before = snapshot(cache)
    with serve(routes(matrix)) as srv:
        r = run_cli("update", "--url", srv.url(MATRIX_PATH))
    assert r.returncode == 2, name
    assert r.stderr.startswith("dnnresolve update: error: ") and r.stderr.count("\n") == 1, r.stderr
    assert words in r.stderr and "upgrade dnnresolve" in r.stderr and "pip install -U dnnresolve" in r.stderr
    assert snapshot(cache) == before


def test_a_matrix_of_this_schema_says_so_and_is_taken(run_cli: Run, cache: Path) -> None:
    with serve(routes(b"schema = 1\n" + NEWER)) as srv:
        r = run_cli("update", "--url", srv.url(MATRIX_PATH))
    assert r.returncode == 0, r.stderr
    assert versions_listed(run_cli)[0] == ["1.1.0"]
