"""A plan installs exactly the release asked, in a build that exists (issue 21)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

MODERN = (
    "--no-detect",
    "--os",
    "linux",
    "--python",
    "3.11",
    "--cuda",
    "12.5",
    "--cudnn",
    "9.3",
    "--driver",
    "555.42.02",
)
OLD = ("--no-detect", "--os", "linux", "--python", "3.9", "--cuda", "11.6", "--cudnn", "8.4", "--driver", "555.42.02")


def _steps(run_cli, spec: str, target: tuple[str, ...]) -> tuple[dict, list[str]]:  # type: ignore[no-untyped-def,type-arg]
    r = run_cli("plan", spec, *target, "--gpu", "8.9", "--json")
    assert r.returncode in (0, 1), r.stderr
    req = json.loads(r.stdout)["requirements"][0]
    shells = [" ".join(s["argv"]) for o in req["options"] for s in o["steps"] if s.get("argv")]
    return req, shells


@pytest.mark.parametrize("version", ["2.19.0", "2.18.0", "2.17.0", "2.16.1"])
def test_a_tensorflow_pin_installs_that_release(run_cli, version: str) -> None:  # type: ignore[no-untyped-def]
    _, shells = _steps(run_cli, f"tensorflow=={version}", MODERN)
    assert f"python -m pip install tensorflow[and-cuda]=={version}" in shells, shells


@pytest.mark.parametrize(
    ("spec", "pin"), [("jaxlib==0.1.61", "jaxlib==0.1.61+cuda"), ("jaxlib==0.1.66", "jaxlib==0.1.66+cuda")]
)
def test_a_jaxlib_pin_installs_that_release(run_cli, spec: str, pin: str) -> None:  # type: ignore[no-untyped-def]
    _, shells = _steps(run_cli, spec, OLD)
    ours = [s for s in shells if "jaxlib==" in s]
    assert ours and all(pin in s for s in ours), shells


def test_a_paddle_post_release_plans_its_own_build(run_cli) -> None:  # type: ignore[no-untyped-def]
    # .post116 is Paddle's CUDA 11.6 build of 2.4.2; 2.3.2.post112 its CUDA 11.2 build of 2.3.2 (row ==2.3.2)
    for spec, cuda in (("paddlepaddle-gpu==2.4.2.post116", "11.6"), ("paddlepaddle-gpu==2.3.2.post112", "11.2")):
        r = run_cli("plan", spec, *OLD, "--gpu", "8.6", "--json")
        req = json.loads(r.stdout)["requirements"][0]
        assert req["cuda_variant"] == cuda, (spec, req["release"], req["cuda_variant"])
        assert "no release" not in r.stdout


def test_a_plain_torch_pin_is_pypis_build_on_an_old_driver(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # no index line: pip installs PyPI's torch 2.1.0, the CUDA 12.1 build, which needs driver >= 525.60.13
    req = tmp_path / "requirements.txt"
    req.write_text("torch==2.1.0\n")
    r = run_cli("check", str(req), "--driver", "470.82.01", "--python", "3.11", "--json")
    assert r.returncode == 1
    findings = json.loads(r.stdout)["findings"]
    assert any(f["severity"] == "error" and "CUDA 12.1" in f["message"] for f in findings), findings


def test_a_local_path_in_a_conda_pip_section_is_a_note(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # as in a popular research repository: pip builds submodules/diff-gaussian-rasterization from its directory
    env = tmp_path / "environment.yml"
    env.write_text(
        "name: x\ndependencies:\n  - python=3.8\n  - pip\n  - pip:\n"
        "    - submodules/diff-gaussian-rasterization\n    - git+https://github.com/a/b.git\n"
    )
    r = run_cli("check", str(env), "--driver", "535.104.05", "--json")
    assert r.returncode == 0, r.stderr
    messages = [f["message"] for f in json.loads(r.stdout)["findings"]]
    assert any("submodules/diff-gaussian-rasterization: not checked: a local path" in m for m in messages), messages


LINUX = ("--no-detect", "--os", "linux", "--python", "3.10", "--driver", "555.42.02", "--gpu", "8.6")


def test_plan_skips_a_line_its_marker_excludes(run_cli) -> None:  # type: ignore[no-untyped-def]
    # pip skips `torch==2.1.0; sys_platform == "win32"` on Linux: nothing to plan, a note says why
    spec = 'torch==2.1.0; sys_platform == "win32"'
    r = run_cli("plan", spec, *LINUX)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "skipped: its marker" in r.stdout and "torch 2.1.0" not in r.stdout, r.stdout
    out = json.loads(run_cli("plan", spec, *LINUX, "--json").stdout)
    assert out["requirements"] == [] and out["satisfied"] is True
    assert any(n["line"] == spec and n["note"].startswith("skipped: its marker") for n in out["notes"]), out["notes"]


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("./path", "not checked: a local path"),
        ("-e .", "not checked: an editable install"),
        ("git+https://github.com/a/b.git", "not checked: a VCS checkout"),
    ],
)
def test_plan_notes_a_line_that_names_no_release(run_cli, spec: str, why: str) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("plan", spec, "torch==2.1.0", *LINUX, "--json")
    assert r.returncode in (0, 1), r.stderr
    out = json.loads(r.stdout)
    assert [n["line"] for n in out["notes"]] == [spec] and out["notes"][0]["note"].startswith(why), out["notes"]
    assert [q["package"] for q in out["requirements"]] == ["torch"]
    text = run_cli("plan", spec, *LINUX)
    assert text.returncode == 0 and f"{spec}: {why}" in text.stdout, text.stdout + text.stderr


def test_plan_of_a_wheel_url_plans_the_release_and_build_its_file_names(run_cli) -> None:  # type: ignore[no-untyped-def]
    url = "https://download.pytorch.org/whl/cu118/torch-2.1.0%2Bcu118-cp310-cp310-linux_x86_64.whl"
    r = run_cli("plan", f"torch @ {url}", *LINUX, "--json")
    req = json.loads(r.stdout)["requirements"][0]
    assert (req["release"], req["cuda_variant"]) == ("2.1.0", "11.8"), req
    # a wheel file the matrix has no row for is named as such, never planned as another release
    other = run_cli("plan", f"torch @ {url.replace('2.1.0', '2.0.99')}", *LINUX, "--json")
    req = json.loads(other.stdout)["requirements"][0]
    assert req["release"] is None and req["options"] == [], req


def test_check_skips_a_line_its_marker_excludes_with_a_note_as_plan_does(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    line = 'torch==2.1.0; sys_platform == "win32"'
    (tmp_path / "requirements.txt").write_text(f"{line}\n")
    r = run_cli("check", "requirements.txt", "--driver", "470.82.01", "--python", "3.11", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads(r.stdout)
    [f] = report["findings"]
    assert (f["severity"], f["line"]) == ("info", 1) and f"{line}: skipped: its marker" in f["message"], f
    assert report["checked"] == []
    plan = json.loads(run_cli("plan", line, *LINUX, "--json").stdout)
    assert plan["notes"][0]["note"] in f["message"]


def test_check_reads_a_wheel_url_line_as_the_release_and_build_its_file_names(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # as plan does: the file name says torch 2.1.0, CUDA 11.8 build (PyPI's plain 2.1.0 is the CUDA 12.1 one)
    url = "https://download.pytorch.org/whl/cu118/torch-2.1.0%2Bcu118-cp311-cp311-linux_x86_64.whl"
    (tmp_path / "requirements.txt").write_text(f"torch @ {url}\n")
    r = run_cli("check", "requirements.txt", "--driver", "470.82.01", "--python", "3.11", "--json")
    report = json.loads(r.stdout)
    assert report["checked"] == ["torch"], report
    [pin] = report["checked_lines"]
    assert pin["release"] == "torch 2.1.0 for CUDA 11.8", pin
    assert not any(f["severity"] == "error" for f in report["findings"]), report["findings"]
