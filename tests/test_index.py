"""`index.wheel_exists` against real simple indexes on 127.0.0.1 (PEP 503 HTML, PEP 691 JSON, a PyTorch-style
variant index and a find-links page) serving tiny wheels built here."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dnnresolve.index import check_wheel, expand_platform, parse_python, wheel_exists
from dnnresolve.net import Deadline
from dnnresolve.verify import WheelQuery, index_checker

from .servers import LocalServer, Reply, make_wheel, proxy_server, serve, silent_server

PLAT = "manylinux_2_17_x86_64.manylinux2014_x86_64"
WHEELS = {  # index path -> (project, version, tag)
    "simple": [
        ("tinypkg", "1.0", "py3-none-any"),
        ("fastpkg", "2.1.0", f"cp311-cp311-{PLAT}"),
        ("fastpkg", "2.1.0", "cp311-cp311-win_amd64"),
        ("abipkg", "1.0", "cp38-abi3-win_amd64"),
    ],
    "whl/cu118": [("fastpkg", "2.1.0+cu118", "cp310-cp310-linux_x86_64")],
}
SDIST_ONLY = "srcpkg-0.5.tar.gz"
YANKED_ATTR = ' data-yanked=""'


def _html_page(files: list[tuple[str, bytes]], prefix: str, yanked: set[str]) -> bytes:
    links = "".join(
        f'<a href="{prefix}{name.replace("+", "%2B")}#sha256={hashlib.sha256(data).hexdigest()}"'
        f"{YANKED_ATTR if name in yanked else ''}>{name}</a><br/>\n"
        for name, data in files
    )
    return f"<!DOCTYPE html>\n<html><body>\n{links}</body></html>\n".encode()


def _json_page(project: str, files: list[tuple[str, bytes]], yanked: set[str]) -> bytes:
    doc = {
        "meta": {"api-version": "1.0"},
        "name": project,
        "files": [
            {
                "filename": n,
                "url": f"../../files/{n}",
                "hashes": {"sha256": hashlib.sha256(d).hexdigest()},
                "yanked": n in yanked,
            }
            for n, d in files
        ],
    }
    return json.dumps(doc).encode()


def build_index(tmp: Path, as_json: bool = False, yanked: frozenset[str] = frozenset()) -> dict[str, Reply]:
    routes: dict[str, Reply] = {}
    flat: list[tuple[str, bytes]] = []
    for root, wheels in WHEELS.items():
        by_project: dict[str, list[tuple[str, bytes]]] = {}
        for project, version, tag in wheels:
            path = make_wheel(tmp, project, version, tag)
            data = path.read_bytes()
            routes[f"/files/{path.name}"] = Reply(data)
            by_project.setdefault(project, []).append((path.name, data))
            flat.append((path.name, data))
        if root == "simple":
            by_project["srcpkg"] = [(SDIST_ONLY, b"sdist")]
        for project, files in by_project.items():
            page = f"/{root}/{project}/"
            if as_json:
                body = _json_page(project, files, set(yanked))
                routes[page] = Reply(body, content_type="application/vnd.pypi.simple.v1+json")
            else:
                prefix = "../../files/" if root == "simple" else "/files/"
                routes[page] = Reply(_html_page(files, prefix, set(yanked)), content_type="text/html")
    routes["/links.html"] = Reply(_html_page(flat, "files/", set()), content_type="text/html")
    return routes


@pytest.fixture(params=["html", "json"])
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LocalServer]:
    with serve(build_index(tmp_path, as_json=request.param == "json")) as srv:
        yield srv


@pytest.mark.parametrize(
    ("project", "version", "python", "platform", "expected"),
    [
        ("tinypkg", "1.0", "3.11", "manylinux_2_17_x86_64", True),
        ("TinyPkg", "1.0.0", None, None, True),
        ("tinypkg", "1.1", "3.11", "manylinux_2_17_x86_64", False),
        ("fastpkg", "2.1.0", "3.11", "manylinux_2_17_x86_64", True),
        ("fastpkg", "2.1.0", "cp311", "manylinux_2_28_x86_64", True),
        ("fastpkg", "2.1.0", "3.11", "manylinux2014_x86_64", True),
        ("fastpkg", "2.1.0", "3.11", "manylinux_2_12_x86_64", False),
        ("fastpkg", "2.1.0", "3.12", "manylinux_2_17_x86_64", False),
        ("fastpkg", "2.1.0", "3.11", "manylinux_2_17_aarch64", False),
        ("fastpkg", "2.1.0", "3.11", "win_amd64", True),
        ("fastpkg", "2.1.0", "3.11", None, True),
        ("fastpkg", "2.1.0", None, "macosx_11_0_arm64", False),
        ("abipkg", "1.0", "3.12", "win_amd64", True),
        ("abipkg", "1.0", "3.7", "win_amd64", False),
        ("srcpkg", "0.5", "3.11", None, False),
        ("nosuchpkg", "1.0", "3.11", None, False),
    ],
)
def test_simple_index(
    index: LocalServer, project: str, version: str, python: str | None, platform: str | None, expected: bool
) -> None:
    assert wheel_exists(index.url("/simple/"), project, version, python, platform) is expected


def test_notes_say_why(index: LocalServer) -> None:
    root = index.url("/simple")
    ok = check_wheel(root, "fastpkg", "2.1.0", "3.11", "manylinux_2_17_x86_64")
    assert ok.exists and ok.matches == (f"fastpkg-2.1.0-cp311-cp311-{PLAT}.whl",)
    assert ok.note == "1 wheel(s) for Python 3.11 / manylinux_2_17_x86_64"
    assert ok.page == index.url("/simple/fastpkg/")
    wrong = check_wheel(root, "fastpkg", "2.1.0", "3.12", "manylinux_2_17_x86_64")
    assert wrong.note.startswith("fastpkg==2.1.0 has wheels, but none for Python 3.12 / manylinux_2_17_x86_64")
    assert "cp311-cp311-manylinux2014_x86_64" in wrong.note
    assert "only a source distribution" in check_wheel(root, "srcpkg", "0.5", None, None).note
    assert "is not on the index" in check_wheel(root, "nosuchpkg", "1", None, None).note
    accept = next(h for path, h in index.seen if path == "/simple/fastpkg/")["Accept"]
    assert accept.startswith("application/vnd.pypi.simple.v1+json")


@pytest.mark.parametrize(
    ("version", "python", "expected"),
    [("2.1.0", "3.10", True), ("2.1.0+cu118", "3.10", True), ("2.1.0+cu121", "3.10", False), ("2.1.0", "3.11", False)],
)
def test_pytorch_style_variant_index(index: LocalServer, version: str, python: str, expected: bool) -> None:
    # download.pytorch.org/whl/<variant>/<project>/ pages list linux_x86_64 wheels with a +variant local version
    assert wheel_exists(index.url("/whl/cu118"), "fastpkg", version, python, "manylinux_2_17_x86_64") is expected


def test_find_links_page(tmp_path: Path) -> None:
    with serve(build_index(tmp_path)) as srv:
        page = srv.url("/links.html")
        assert wheel_exists(page, "fastpkg", "2.1.0", "3.10", "linux_x86_64", find_links=True) is True
        assert wheel_exists(page, "tinypkg", "1.0", "3.9", "win_amd64", find_links=True) is True
        assert wheel_exists(page, "tinypkg", "2.0", "3.9", "win_amd64", find_links=True) is False
        assert wheel_exists(page, "otherpkg", "1.0", None, None, find_links=True) is False


def test_yanked_wheels_still_count_with_a_note(tmp_path: Path) -> None:
    name = f"fastpkg-2.1.0-cp311-cp311-{PLAT}.whl"
    for as_json in (False, True):
        with serve(build_index(tmp_path, as_json=as_json, yanked=frozenset({name}))) as srv:
            check = check_wheel(srv.url("/simple"), "fastpkg", "2.1.0", "3.11", "manylinux_2_17_x86_64")
        assert check.exists is True and "all yanked" in check.note


def test_trouble_gives_none_and_a_note(tmp_path: Path) -> None:
    with serve({"/simple/tinypkg/": Reply(b"busy", 503)}) as srv:
        check = check_wheel(srv.url("/simple"), "tinypkg", "1.0", None, None)
    assert check.exists is None and "answered HTTP 503" in check.note
    with serve({"/simple/tinypkg/": Reply(b"{", content_type="application/vnd.pypi.simple.v1+json")}) as srv:
        check = check_wheel(srv.url("/simple"), "tinypkg", "1.0", None, None)
    assert check.exists is None and "not a PEP 691 project page" in check.note
    page = b'<a href="http://[broken/x.whl">x</a> <a href="tinypkg-1.0-py3-none-any.whl">a wheel</a>'
    with serve({"/simple/tinypkg/": Reply(page, content_type="text/html")}) as srv:
        assert wheel_exists(srv.url("/simple"), "tinypkg", "1.0", None, None) is True
    with serve() as srv:
        url = srv.url("/simple").replace("http://", "http://bob:hunter22@")
    check = check_wheel(url, "tinypkg", "1.0", None, None)
    assert check.exists is None and "Connection refused" in check.note and "hunter22" not in check.note
    assert check.page.startswith("http://***@127.0.0.1:")
    assert check_wheel(url, "tinypkg", "1.0", "three", None).note.startswith("cannot check: not a Python version")


def test_silent_index_times_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DNNRESOLVE_HTTP_TIMEOUT", "0.3")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with silent_server() as base:
        check = check_wheel(base + "/simple", "tinypkg", "1.0", None, None)
    assert check.exists is None and "no answer from" in check.note and "within 0.3 s" in check.note


def test_platform_expansion() -> None:
    plats = expand_platform("manylinux_2_17_x86_64")
    assert plats[:2] == ["manylinux_2_17_x86_64", "manylinux2014_x86_64"]
    assert "manylinux2010_x86_64" in plats and "manylinux1_x86_64" in plats and plats[-1] == "linux_x86_64"
    assert "manylinux_2_28_x86_64" not in plats
    assert expand_platform("win_amd64") == ["win_amd64"]
    assert "macosx_10_9_x86_64" in expand_platform("macosx_11_0_x86_64")
    assert parse_python("cp311") == parse_python("3.11") == (3, 11)


PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def set_proxies(monkeypatch: pytest.MonkeyPatch, proxy: str) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.setenv(name, proxy)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)


def test_a_loopback_index_is_never_asked_through_a_proxy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with proxy_server(502) as proxy, serve(build_index(tmp_path)) as srv:
        set_proxies(monkeypatch, proxy.url)
        check = check_wheel(srv.url("/simple"), "tinypkg", "1.0", "3.11", None)
        links = wheel_exists(
            srv.url("/links.html").replace("127.0.0.1", "localhost"), "tinypkg", "1.0", None, None, True
        )
    assert check.exists is True and links is True, check.note
    assert proxy.contacts == []


def test_an_index_error_from_a_proxy_names_the_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    # Another host goes through the proxy, as the environment says; the proxy answers itself (nothing leaves
    # 127.0.0.1). Its 502 is the proxy's, not the index's.
    with proxy_server(502) as proxy:
        address = proxy.url.removeprefix("http://")
        set_proxies(monkeypatch, f"http://pxuser:pxsecret@{address}")
        check = check_wheel("http://pypi.invalid/simple", "tinypkg", "1.0", None, None)
    assert proxy.contacts == ["GET http://pypi.invalid/simple/tinypkg/"]
    assert check.exists is None
    assert f"HTTP 502 Bad Gateway for http://pypi.invalid/simple/tinypkg/ through the proxy {address} (http_proxy)" in (
        check.note
    )
    assert "pxsecret" not in check.note and "pxuser" not in check.note


def trickling_index(tmp_path: Path) -> dict[str, Reply]:
    routes = build_index(tmp_path)
    for page in ("/simple/tinypkg/", "/simple/fastpkg/"):
        routes[page].trickle_s = 0.5
    return routes


def test_a_trickling_index_meets_the_deadline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DNNRESOLVE_HTTP_DEADLINE", "1")
    with serve(trickling_index(tmp_path)) as srv:
        start = time.monotonic()
        check = check_wheel(srv.url("/simple"), "tinypkg", "1.0", None, None)
        assert time.monotonic() - start < 10  # the page alone takes minutes at this rate
    assert check.exists is None
    assert check.note.startswith(
        f"could not read the index: the download took longer than 1 s; gave up while reading {check.page}"
    )


def test_plan_verify_checks_share_one_deadline(tmp_path: Path) -> None:
    # once the checks' deadline has passed, the remaining ones give up without asking the index
    Check = Callable[[WheelQuery], "tuple[bool | None, str]"]
    with serve(trickling_index(tmp_path)) as srv:
        check: Check = index_checker(Deadline.start(1.0, "checking the index"))
        first = check(WheelQuery(srv.url("/simple"), "tinypkg", "1.0", None, None))
        second = check(WheelQuery(srv.url("/simple"), "fastpkg", "2.1.0", None, None))
    assert first[0] is None and "checking the index took longer than 1 s; gave up while reading" in first[1]
    assert second[0] is None and "gave up before reading" in second[1]
    assert [path for path, _ in srv.seen] == ["/simple/tinypkg/"]


def test_plan_verify_with_proxies_set_reads_a_loopback_index_directly(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    wheel = make_wheel(tmp_path, "tensorflow-gpu", "1.0.0", "cp36-cp36m-manylinux1_x86_64")
    page = f'<a href="../../files/{wheel.name}">{wheel.name}</a>'.encode()
    routes = {"/simple/tensorflow-gpu/": Reply(page, content_type="text/html")}
    target = ("--no-detect", "--python", "3.11", "--cuda", "8.0", "--cudnn", "5.1.10", "--driver", "375.26")
    with proxy_server(502) as proxy, serve(routes) as srv:
        env = {name: proxy.url for name in PROXY_VARIABLES}
        env.update({"NO_PROXY": "", "no_proxy": "", "PIP_INDEX_URL": srv.url("/simple/")})
        r = run_cli("plan", "tensorflow-gpu==1.0", *target, "--gpu", "K20m", "--verify", "--json", env=env)
    notes = [n for o in json.loads(r.stdout)["requirements"][0]["options"] for n in o["notes"]]
    assert any(n.startswith("verified: a wheel of tensorflow-gpu==1.0.0") for n in notes), notes
    assert proxy.contacts == []
