"""`plan --verify` against a real PEP 503 index on 127.0.0.1 serving tiny wheels built here."""

from __future__ import annotations

import json
from pathlib import Path

from ..servers import Reply, make_wheel, serve

TARGET = (
    "--no-detect",
    "--python",
    "3.11",
    "--cuda",
    "8.0",
    "--cudnn",
    "5.1.10",
    "--driver",
    "375.26",
    "--gpu",
    "K20m",
)


def _index(tmp: Path, tags: list[str]) -> dict[str, Reply]:
    routes: dict[str, Reply] = {}
    links = []
    for tag in tags:
        wheel = make_wheel(tmp, "tensorflow-gpu", "1.0.0", tag)
        routes[f"/files/{wheel.name}"] = Reply(wheel.read_bytes())
        links.append(f'<a href="../../files/{wheel.name}">{wheel.name}</a><br/>')
    routes["/simple/tensorflow-gpu/"] = Reply(("<html><body>" + "".join(links) + "</body></html>").encode())
    return routes


def test_verify_keeps_the_option_whose_wheel_exists(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with serve(_index(tmp_path, ["cp27-cp27mu-manylinux1_x86_64", "cp36-cp36m-manylinux1_x86_64"])) as srv:
        r = run_cli(
            "plan", "tensorflow-gpu==1.0", *TARGET, "--verify", "--json", env={"PIP_INDEX_URL": srv.url("/simple/")}
        )
    assert r.returncode == 1, r.stderr
    req = json.loads(r.stdout)["requirements"][0]
    first = req["options"][0]
    assert "conda create -y -n tensorflow-gpu-1.0.0 python=3.6" in [s["command"] for s in first["steps"]]
    assert any(n.startswith("verified: a wheel of tensorflow-gpu==1.0.0 for Python 3.6") for n in first["notes"])
    assert req["dropped"] == []


def test_verify_drops_the_option_whose_wheel_does_not_exist(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with serve(_index(tmp_path, ["cp27-cp27mu-manylinux1_x86_64"])) as srv:
        env = {"PIP_INDEX_URL": srv.url("/simple/")}
        r = run_cli("plan", "tensorflow-gpu==1.0", *TARGET, "--verify", "--json", env=env)
        text = run_cli("plan", "tensorflow-gpu==1.0", *TARGET, "--verify", env=env).stdout
    req = json.loads(r.stdout)["requirements"][0]
    assert all("python=3.6" not in json.dumps(o) for o in req["options"])
    assert req["dropped"] and "no wheel of tensorflow-gpu==1.0.0 for Python 3.6" in req["dropped"][0]
    assert "dropped, no wheel of tensorflow-gpu==1.0.0" in " ".join(text.split())


def test_verify_flags_an_index_that_cannot_be_read(run_cli) -> None:  # type: ignore[no-untyped-def]
    env = {"PIP_INDEX_URL": "http://user:secret@127.0.0.1:9/simple/", "DNNRESOLVE_HTTP_TIMEOUT": "2"}
    r = run_cli("plan", "tensorflow-gpu==1.0", *TARGET, "--verify", "--json", env=env)
    req = json.loads(r.stdout)["requirements"][0]
    notes = [n for o in req["options"] for n in o["notes"]]
    assert any(n.startswith("could not verify") for n in notes)
    assert "secret" not in r.stdout + r.stderr
