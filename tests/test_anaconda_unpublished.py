"""Builds a channel's recipes name but the channel never published (#21): Anaconda's tensorflow_recipes set up
linux-64 GPU variants of tensorflow-base 2.3.0 (CUDA 10.1) and 2.5.0 (CUDA 10.1, then 11.3), but the defaults channel
served no linux-64 GPU build of either. What users' machines printed: `conda search tensorflow=2.3` of 2020-11-25
lists eigen and mkl builds only (https://github.com/AnacondaRecipes/tensorflow_recipes/issues/24), Anaconda's
maintainer wrote "right now we don't support GPU variant for Linux ... Only mkl and eigen variants are present for
Linux" (https://github.com/ContinuumIO/anaconda-issues/issues/12163, 2020-11-23) and "We haven't done final build
variant for Tensorflow on Linux for GPU-variant" (https://github.com/ContinuumIO/anaconda-issues/issues/12246,
2021-01-22); a Linux `conda search` of 2021-08-10 lists tensorflow 2.4.1 gpu_py38 and 2.5.0 eigen_py38 and
mkl_py38, no 2.5.0 gpu build, beside cudatoolkit 11.3.1 and cudnn 8.2.1 (https://github.com/tensorflow/tensorflow/
issues/51400); on 2021-09-07 a Linux user asked Anaconda to update TensorFlow 2.4.1 to 2.5 or 2.6 for an RTX 3060
(https://github.com/ContinuumIO/anaconda-issues/issues/12602). The recipe commit that brought 2.5.0 says "just cpu
linux variant build" (AnacondaRecipes/tensorflow_recipes f641171). A plan, check or matrix must not offer them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest

from .plan.test_conda_env import _env, tf_env

Run = Callable[..., CompletedProcess[str]]
TF_BUILDS = Path(__file__).parent / "data" / "anaconda_tensorflow_gpu.json"
UNPUBLISHED = ("2.3.0", "2.5.0")


@pytest.mark.parametrize("version", UNPUBLISHED)
def test_matrix_offers_no_defaults_build_anaconda_never_published(run_cli: Run, version: str) -> None:
    # it listed "conda install -c defaults tensorflow-gpu==2.3.0 cudatoolkit=10.1 cudnn=7.6" (2.5.0: for 10.1 and
    # 11.3), a command conda answers with PackagesNotFoundError on Linux
    out = run_cli("matrix", f"tensorflow-gpu=={version}", "--offline")
    assert out.returncode == 0, out.stderr
    assert f"conda install -c defaults tensorflow-gpu=={version}" not in out.stdout, out.stdout
    out = run_cli("matrix", f"tensorflow-gpu=={version}", "--offline", "--json")
    (row,) = json.loads(out.stdout)["releases"]
    assert row["os"] == ["linux"], row["os"]
    assert [r for r in row["install"] if r["kind"] == "conda"] == [], row["install"]
    # the row says why: Anaconda served no linux-64 GPU build of it
    assert "no linux-64 GPU build" in row["note"] and "anaconda-issues/issues/12163" in row["note"], row["note"]


@pytest.mark.parametrize("version", UNPUBLISHED)
def test_plan_in_a_conda_environment_does_not_conda_install_an_unpublished_build(tmp_path: Path, version: str) -> None:
    # the plan wrote "conda install -y -c defaults tensorflow-gpu==2.5.0 cudatoolkit=10.1 cudnn=7.6", titled "its
    # CUDA 10.1 build from defaults keeps the environment's CUDA 10.1"
    root = tf_env(tmp_path)
    env = {**os.environ, **_env()}
    out = subprocess.run(
        [sys.executable, "-m", "dnnresolve", "plan", f"tensorflow-gpu=={version}", "--root", str(root), "--gpu",
         "V100", "--json"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert out.returncode in (0, 1) and not out.stderr, out.stderr
    plan: dict[str, Any] = json.loads(out.stdout)
    req = plan["requirements"][0]
    argvs = [s["argv"] for o in req["options"] for s in o["steps"]]
    named = [a for a in argvs if a[:1] == ["conda"] and f"tensorflow-gpu=={version}" in a]
    assert named == [], argvs
    assert "build from defaults" not in json.dumps(req["options"]), req["options"]
    assert "AnacondaRecipes" not in req["source"], req["source"]


def test_the_recorded_builds_say_which_were_never_published() -> None:
    """The record of Anaconda's recipes keeps these builds, marked unpublished with the printed evidence."""
    data = json.loads(TF_BUILDS.read_text())
    for version in UNPUBLISHED:
        for build in data["releases"][version]["linux_64"]:
            assert build["published"] is False, (version, build)
            assert any("issues/12163" in e for e in build["not_published"]), build
    published = [b for v, r in data["releases"].items() if v not in UNPUBLISHED for b in r["linux_64"]]
    assert all(b.get("published", True) for b in published)


def test_check_of_a_defaults_environment_is_not_judged_as_an_unpublished_build(run_cli: Run, tmp_path: Path) -> None:
    # "checked: tensorflow 2.5.0 for CUDA 10.1 ok" on driver 418.87: judged as a build conda cannot install. What
    # the line can install is the PyPI wheel (CUDA 11.2), which that driver does not run, and the fix says so
    env = tmp_path / "environment.yml"
    env.write_text("channels:\n  - defaults\ndependencies:\n  - python=3.8\n  - tensorflow-gpu=2.5.0\n")
    out = run_cli("check", "--json", str(env), "--os", "linux", "--driver", "418.87.01", "--gpu", "V100")
    report = json.loads(out.stdout)
    assert [p["release"] for p in report["checked_lines"]] == ["tensorflow 2.5.0 for CUDA 11.2"], report
    [f] = [f for f in report["findings"] if f["severity"] == "error"]
    assert out.returncode == 1 and "conda has no package of this build" in f["fix"], f
