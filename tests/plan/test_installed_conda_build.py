"""The build conda installed in the active environment, judged as it is (issue #21): a requirement the installed
release meets is "nothing to do" only where that build runs here, not where the best pick for the machine does.

Anaconda's tensorflow-gpu 1.14.0 build in ``tf_env`` is its CUDA 10.1 one (conda-meta: cudatoolkit 10.1.168, the
build strings name no CUDA); CUDA 10.1 needs driver 418.39. conda's pytorch 1.12.1 in ``conda_env`` is
``py3.9_cuda11.3_cudnn8.3.2_0`` with cudatoolkit 11.3; driver 418.39 runs no CUDA 11 (minor-version compatibility
starts at 450.80.02). Driver 375.26 gives conda's ``__cuda`` 8.0: of tensorflow-gpu 1.9-2.0, conda installs 1.10.0,
whose CUDA 8.0 build runs on a P100 (sm_60).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .test_conda_env import PREFIX, _env, _record, conda_env, tf_env


def _plan(run_cli, root: Path, spec: str, *flags: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    out = run_cli("plan", spec, "--root", str(root), *flags, "--json", env=_env())
    assert out.returncode == 1 and not out.stderr, (out.returncode, out.stderr)
    plan: dict[str, Any] = json.loads(out.stdout)
    return plan


def _driver(root: Path, driver: str) -> Path:
    (root / "sys/module/nvidia/version").write_text(f"{driver}\n")
    return root


def test_a_range_the_installed_release_meets_judges_the_build_conda_installed(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # before: "nothing to do: this machine runs it as it is", since the pick (1.10.0's CUDA 8.0 build) runs; the
    # installed 1.14.0 is a CUDA 10.1 build, which driver 375.26 cannot run
    root = tf_env(tmp_path)
    flags = ("--gpu", "P100", "--driver", "375.26")
    plan = _plan(run_cli, root, "tensorflow-gpu>=1.9,<2.1", *flags)
    req = plan["requirements"][0]
    assert not plan["satisfied"] and not req["satisfied"], req["options"]
    assert req["release"] == "1.10.0" and req["cuda_variant"] == "8.0"
    first = req["options"][0]
    assert not first["title"].startswith("nothing to do"), first
    # conda replaces conda's package, in this environment: nothing else conda installed there holds its CUDA 10.1
    assert [s["argv"] for s in first["steps"]] == [
        ["conda", "install", "-y", "-c", "defaults", "tensorflow-gpu==1.10.0", "cudatoolkit=8.0"]
    ]
    assert first["title"].startswith("replace conda's tensorflow-gpu 1.14.0 (conda, h0d30ee6_0) with tensorflow-gpu")
    assert "CUDA 10.1 (conda cudatoolkit 10.1.168), which this install replaces" in first["title"]
    why = " ".join(first["notes"])
    assert "tensorflow-gpu 1.14.0" in why and "CUDA 10.1" in why and "cannot run here" in why, first
    assert "418.39" in why, why
    text = run_cli("plan", "tensorflow-gpu>=1.9,<2.1", "--root", str(root), *flags, env=_env())
    assert text.returncode == 1 and "nothing to do" not in text.stdout, text.stdout


def test_an_exact_pin_keeps_the_installed_build_only_with_a_driver_that_runs_it(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # before: "keep tensorflow-gpu 1.14.0: a driver >= 384.81", the driver of its CUDA 9.0 build; the build
    # installed is the CUDA 10.1 one, which 384.81 does not run either
    root = tf_env(tmp_path)
    plan = _plan(run_cli, root, "tensorflow-gpu==1.14.0", "--gpu", "P100", "--driver", "375.26")
    req = plan["requirements"][0]
    assert not req["satisfied"]
    for option in req["options"]:
        if option["title"].startswith("keep tensorflow-gpu 1.14.0"):
            assert option["driver_upgrade"]["least"] == "418.39", option
            assert all(s["argv"][:1] != ["conda"] for s in option["steps"]), option


def test_doctor_holds_the_installed_conda_build_to_the_driver(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # doctor checks tensorflow-gpu==1.14.0 as installed: the same plan, and the same "keep" as above
    root = _driver(tf_env(tmp_path), "375.26")
    out = run_cli("doctor", "--root", str(root), "--json", env=_env())
    assert out.returncode == 1, out.stderr
    [req] = [r for r in json.loads(out.stdout)["requirements"] if r["requirement"] == "tensorflow-gpu==1.14.0"]
    assert req["verdict"] == "cannot run" and not req["satisfied"]
    for option in req["options"]:
        assert not option["title"].startswith("keep tensorflow-gpu 1.14.0: a driver >= 384.81"), option


@pytest.mark.parametrize(
    ("spec", "release"), [("tensorflow-gpu>=1.9,<2.1", "2.0.0"), ("tensorflow-gpu==1.14.0", "1.14.0")]
)
def test_a_driver_below_the_installed_builds_cuda_is_never_nothing_to_do(
    run_cli, tmp_path: Path, spec: str, release: str
) -> None:  # type: ignore[no-untyped-def]
    # driver 410.48 gives __cuda 10.0: conda's pick of the range is 2.0.0 (its CUDA 10.0 build). Before, a new
    # environment, leaving this one with a build that cannot run
    root = tf_env(tmp_path)
    req = _plan(run_cli, root, spec, "--gpu", "V100", "--driver", "410.48")["requirements"][0]
    assert not req["satisfied"] and not req["options"][0]["title"].startswith("nothing to do")
    [install] = [s["argv"] for s in req["options"][0]["steps"]]
    assert install[:2] == ["conda", "install"] and f"tensorflow-gpu=={release}" in install, install
    assert "cudatoolkit=10.0" in install
    # a build of the environment's CUDA 10.1 with a driver that runs it keeps that CUDA (not "replace ... which this
    # install replaces")
    for option in req["options"]:
        if any("cudatoolkit=10.1" in s["argv"] for s in option["steps"]):
            assert option["driver_upgrade"] and "keeps the environment's CUDA 10.1" in option["title"], option


def test_a_build_another_framework_holds_the_cuda_of_goes_to_a_new_environment(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # conda's pytorch of CUDA 10.1 beside it: replacing the environment's cudatoolkit would break that one
    root = tf_env(tmp_path)
    env = root / PREFIX.lstrip("/")
    (env / "lib/python3.6/site-packages/torch").mkdir(parents=True)
    _record(
        env, "pytorch", "1.4.0", "py3.6_cuda10.1.243_cudnn7.6.3_0", "https://conda.anaconda.org/pytorch/linux-64",
        ["cudatoolkit >=10.1,<10.2"], files=["lib/python3.6/site-packages/torch/__init__.py"],
    )  # fmt: skip
    req = _plan(run_cli, root, "tensorflow-gpu>=1.9,<2.1", "--gpu", "P100", "--driver", "375.26")["requirements"][0]
    assert not req["satisfied"]
    first = [s["argv"] for s in req["options"][0]["steps"]]
    assert first[0][:2] == ["conda", "create"] and "cudatoolkit=8.0" in first[0], first


@pytest.mark.parametrize("spec", ["torch>=1.10,<1.13", "torch==1.12.1", "torch<2"])
def test_condas_pytorch_build_is_held_to_the_driver(run_cli, tmp_path: Path, spec: str) -> None:  # type: ignore[no-untyped-def]
    # conda's pytorch 1.12.1 py3.9_cuda11.3_cudnn8.3.2_0 on driver 418.39: no CUDA 11 runs there
    root = conda_env(tmp_path)
    req = _plan(run_cli, root, spec, "--gpu", "V100", "--driver", "418.39")["requirements"][0]
    assert not req["satisfied"] and not req["options"][0]["title"].startswith("nothing to do"), req["options"][0]
    for option in req["options"]:
        if option["title"].startswith("keep torch 1.12.1"):
            least = tuple(int(x) for x in option["driver_upgrade"]["least"].split("."))
            assert least >= (450, 80, 2), option


def test_doctor_reads_no_gpu_code_where_condas_record_names_no_library(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # Anaconda's tensorflow-gpu and tensorflow are metapackages: their conda records list no library (tensorflow-base
    # holds them). Before: "none of its 0 libraries carries GPU code: a CPU-only build; install a CUDA build" for
    # both, and exit 1, on driver 570, which runs the CUDA 10.1 build
    out = run_cli("doctor", "--root", str(tf_env(tmp_path)), "--json", env=_env())
    assert out.returncode == 0, out.stdout
    doctor = json.loads(out.stdout)
    assert not [f for f in doctor["gpu_code"] if f["status"] == "fail"], doctor["gpu_code"]
    assert any("tensorflow-gpu 1.14.0: its file list names no library" in n for n in doctor["gpu_code_notes"])


def test_condas_pytorch_is_replaced_by_a_build_that_runs_not_by_itself(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # driver 440.33 runs CUDA 10.2, no CUDA 11 (minor-version compatibility starts at 450.80.02): torch 1.12.1's CUDA
    # 10.2 build runs. Before, the first option installed the CUDA 11.3 build again ("its CUDA 11.3 build keeps the
    # environment's CUDA 11.3"), under the CUDA 10.2 build's title; torch 1.12.0's option did the same
    root = conda_env(tmp_path)
    req = _plan(run_cli, root, "torch==1.12.1", "--gpu", "V100", "--driver", "440.33")["requirements"][0]
    steps = [[s["argv"] for s in o["steps"]] for o in req["options"]]
    assert steps[0] == [
        ["conda", "install", "-y", "-c", "pytorch", "pytorch==1.12.1", "cudatoolkit=10.2", "torchvision==0.13.1",
         "torchaudio==0.12.1"]
    ]  # fmt: skip
    assert "cudatoolkit 11.3.1), which this install replaces" in req["options"][0]["title"]
    assert not [argv for option in steps for argv in option if "cudatoolkit=11.3" in argv], steps
