"""Which release a conda range installs where the environment's Python is known (issue #21): conda takes the newest
release allowed that has a build for that Python and for the driver's ``__cuda``, not the newest ``__cuda`` admits.
check (an environment file's ``python=`` pin), plan (an active conda environment's Python) and check --fleet answer
alike. The Pythons of each build: tests/data/anaconda_tensorflow_gpu.json (the tensorflow-base build strings of
Anaconda's recipes: 1.10.0's builds are gpu_py27/py35/py36, 1.11.0-1.15.0 and 2.0.0-2.1.0 have no py35 build, 2.2.0's
are py36-py38)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .fleet.test_fleet_dir import DOCS_FLEET, write_fleet
from .plan.test_conda_env import _env, tf_env
from .test_check_conda import _defaults_env

Run = Callable[..., subprocess.CompletedProcess[str]]


def _checked(report: dict[str, Any]) -> list[str]:
    return [p["release"] for p in report["checked_lines"]]


def test_a_range_with_a_python_pin_is_the_newest_release_with_a_build_for_it(run_cli: Run, tmp_path: Path) -> None:
    # driver 410.48 gives __cuda 10.0: 2.0.0 is the newest of tensorflow-gpu 1.9-2.4 with a build it admits, but
    # none for Python 3.5; 1.10.0 is the newest with one (its CUDA 9.2 build the newest CUDA). Before: "checked:
    # tensorflow-gpu 2.0.0 for CUDA 10.0" and "pin an exact version, e.g. tensorflow-gpu==2.0.0"
    deps = ["python=3.5", "tensorflow-gpu>=1.9,<2.5"]
    rc, report = _defaults_env(run_cli, tmp_path, deps, "--driver", "410.48", "--gpu", "V100")
    assert _checked(report) == ["tensorflow-gpu 1.10.0 for CUDA 9.2"], report
    [f] = [f for f in report["findings"] if f["rule"] == "unpinned"]
    assert f["fix"] == "pin an exact version, e.g. tensorflow-gpu==1.10.0", f
    assert "conda installs tensorflow-gpu 1.10.0" in f["message"] and "Python 3.5" in f["message"], f
    assert "__cuda >= 10.1" in f["message"] and "2.0.0" in f["message"], f
    assert rc == 0 and not [f for f in report["findings"] if f["severity"] == "error"], report["findings"]


def test_a_python_pin_drops_the_newest_even_where_the_driver_admits_it(run_cli: Run, tmp_path: Path) -> None:
    # driver 418.39 gives __cuda 10.1, which admits every build of tensorflow-gpu 2.0-2.2; 2.2.0 has none for Python
    # 2.7 (py36-py38), 2.1.0 has. Before: "checked: tensorflow 2.2.0 for CUDA 10.1", nothing said
    deps = ["python=2.7", "tensorflow-gpu>=2.0,<2.3"]
    rc, report = _defaults_env(run_cli, tmp_path, deps, "--driver", "418.39", "--gpu", "V100")
    assert _checked(report) == ["tensorflow 2.1.0 for CUDA 10.1"], report
    [f] = [f for f in report["findings"] if f["rule"] == "unpinned"]
    assert f["fix"] == "pin an exact version, e.g. tensorflow-gpu==2.1.0", f
    assert "conda installs tensorflow-gpu 2.1.0" in f["message"] and "Python 2.7" in f["message"], f
    assert "2.2.0" in f["message"] and "__cuda" not in f["message"].split(":", 2)[2], f  # 2.2.0: Python only
    assert rc == 0
    # a Python the newest has a build for: the newest, nothing said of a fallback
    _, report = _defaults_env(run_cli, tmp_path, ["python=3.7", "tensorflow-gpu>=2.0,<2.3"], "--driver", "418.39")
    assert _checked(report) == ["tensorflow 2.2.0 for CUDA 10.1"]
    assert not any("conda installs" in f["message"] for f in report["findings"])


def test_plan_in_a_conda_environment_takes_the_release_with_a_build_for_its_python(
    run_cli: Run, tmp_path: Path
) -> None:
    # Anaconda's tensorflow-gpu 1.14.0 installed by conda (tests/plan/test_conda_env.py), the environment's Python
    # given as 3.5: of tensorflow-gpu 1.9-1.13, conda installs 1.10.0 (1.11.0-1.13.1 have no Python 3.5 build), in
    # an environment of its own (its CUDA 9.2 build; this one holds cudatoolkit 10.1). Before: a plan for 1.13.1, in
    # "a new environment with Python 3.6"
    root = tf_env(tmp_path)
    out = run_cli(
        "plan", "tensorflow-gpu>=1.9,<1.14", "--root", str(root), "--gpu", "V100", "--driver", "410.48",
        "--python", "3.5", "--json", env=_env(),
    )  # fmt: skip
    assert not out.stderr, out.stderr
    req = json.loads(out.stdout)["requirements"][0]
    assert (req["release"], req["cuda_variant"]) == ("1.10.0", "9.2"), (req["release"], req["cuda_variant"])
    [python] = [c for c in req["checks"] if c["component"] == "python"]
    assert python["status"] == "ok" and python["found"] == "3.5", python
    assert req["options"][0]["steps"][0]["argv"] == [
        "conda", "create", "-y", "-n", "tensorflow-gpu-1.10.0", "-c", "defaults", "python=3.5",
        "tensorflow-gpu==1.10.0", "cudatoolkit=9.2", "cudnn=7.2",
    ]  # fmt: skip


def test_check_fleet_takes_the_release_with_a_build_for_the_files_python(run_cli: Run, tmp_path: Path) -> None:
    # per node, the same pick as check: with the file's python=3.5, tensorflow-gpu 1.10.0 on driver 410.48 (__cuda
    # 10.0; 2.1.0 and 2.2.0 ask for 10.1, 1.11.0-2.0.0 have no Python 3.5 build) and on 418.39 (__cuda 10.1; 2.2.0
    # and the rest have no Python 3.5 build). Before: 2.0.0 and 2.2.0, each offered in a new Python 3.6 environment
    k20m = json.loads((DOCS_FLEET / "nodes" / "k20m-1.json").read_text())
    nodes = {"n410": (["gpu"], {**k20m, "driver": "410.48"}), "n418": (["gpu"], {**k20m, "driver": "418.39"})}
    fleet = write_fleet(tmp_path / "fleet", nodes)
    (tmp_path / "environment.yml").write_text(
        "channels:\n  - defaults\ndependencies:\n  - python=3.5\n  - tensorflow-gpu>=1.9,<2.3\n"
    )
    done = run_cli("check", "environment.yml", "--fleet", str(fleet), "--json")
    assert not done.stderr, done.stderr
    groups = [g["plan"]["requirements"][0] for g in json.loads(done.stdout)["groups"]]
    assert [(r["release"], r["cuda_variant"]) for r in groups] == [("1.10.0", "9.2")] * 2, groups
    for r in groups:
        first = [s["argv"] for s in r["options"][0]["steps"]]
        assert not any("python=3.6" in argv for argv in first), first


def test_anacondas_tensorflow_gpu_2_4_1_is_for_python_3_7_to_3_9(run_cli: Run, tmp_path: Path) -> None:
    # the tensorflow metapackage's linux cuda101 config of 2.4.1 lists tensorflow-base gpu_py37/py38/py39h29c2da4_0
    # (tests/data/anaconda_tensorflow_gpu.json), the builds users' `conda list` show beside tensorflow-gpu 2.4.1
    # h30adc30_0. Before: "the Pythons it was made for are not recorded; 3.6 not checked", and no error
    deps = ["python=3.6", "tensorflow-gpu=2.4.1"]
    rc, report = _defaults_env(run_cli, tmp_path, deps, "--driver", "418.87.01", "--gpu", "V100")
    [f] = [f for f in report["findings"] if f["severity"] == "error"]
    assert rc == 1 and "Python 3.6" in f["message"] and "3.7, 3.8, 3.9" in f["message"], f
    rc, report = _defaults_env(run_cli, tmp_path, ["python=3.9", "tensorflow-gpu=2.4.1"], "--driver", "418.87.01")
    assert rc == 0 and _checked(report) == ["tensorflow 2.4.1 for CUDA 10.1"], report["findings"]


def test_a_build_for_another_python_is_one_new_environment_of_conda_packages(run_cli: Run, tmp_path: Path) -> None:
    # tensorflow-gpu 2.4.1 in the Python 3.6 environment of tests/plan/test_conda_env.py (cudatoolkit 10.1): its CUDA
    # 10.1 build fits the environment's CUDA, not its Python (3.7-3.9). Before: two `conda create` of one name (the
    # Python's, then the packages') under the title "its conda build needs CUDA 10.1, and this environment holds CUDA
    # 10.1 ...: one conda environment holds one CUDA"
    root = tf_env(tmp_path)
    out = run_cli("plan", "tensorflow-gpu==2.4.1", "--root", str(root), "--gpu", "V100", "--json", env=_env())
    assert not out.stderr, out.stderr
    first = json.loads(out.stdout)["requirements"][0]["options"][0]
    assert [s["argv"] for s in first["steps"]] == [
        ["conda", "create", "-y", "-n", "tensorflow-2.4.1", "-c", "defaults", "python=3.7", "tensorflow-gpu==2.4.1",
         "cudatoolkit=10.1", "cudnn=7.6"],
        ["conda", "activate", "tensorflow-2.4.1"],
    ], first  # fmt: skip
    assert "Python 3.6" in first["title"] and "one CUDA" not in first["title"], first["title"]


def test_a_pick_whose_pythons_are_not_recorded_is_not_said_to_be_made_for_the_python(
    run_cli: Run, tmp_path: Path
) -> None:
    # python=3.6, tensorflow-gpu 2.0-2.4, driver 418.39, in a matrix whose 2.2.0 build names no Python: 2.4.1's builds
    # are for 3.7-3.9, 2.2.0's is not ruled out, and the warning says so rather than "made for Python 3.6". (The case
    # was Anaconda's 2.3.0 build until it proved never served: tests/test_anaconda_unpublished.py; every served build
    # now names its Pythons.)
    from dnnresolve.matrix import packaged_matrix_path

    text = packaged_matrix_path().read_text(encoding="utf-8")
    named = (
        '"cudnn=7.6"], channels = ["defaults"], python = ["3.6", "3.7", "3.8"], url = '
        '"https://github.com/AnacondaRecipes/tensorflow_recipes/blob/2d8d6bd'
    )
    assert text.count(named) == 1
    matrix = tmp_path / "m.toml"
    matrix.write_text(text.replace(named, named.replace(' python = ["3.6", "3.7", "3.8"],', "")))
    deps = ["python=3.6", "tensorflow-gpu>=2.0,<2.5"]
    _, report = _defaults_env(run_cli, tmp_path, deps, "--driver", "418.39", "--gpu", "V100", "--matrix", str(matrix))
    assert _checked(report) == ["tensorflow 2.2.0 for CUDA 10.1"], report
    [f] = [f for f in report["findings"] if f["rule"] == "unpinned"]
    assert "made for Python 3.6" not in f["message"] and "not recorded" in f["message"], f["message"]
    # with the Pythons its sources name (3.6-3.8) it is made for 3.6; the pick is not 2.3.0, whose linux-64 GPU build
    # Anaconda never served
    _, report = _defaults_env(run_cli, tmp_path, deps, "--driver", "418.39", "--gpu", "V100")
    assert _checked(report) == ["tensorflow 2.2.0 for CUDA 10.1"], report
    [f] = [f for f in report["findings"] if f["rule"] == "unpinned"]
    assert "tensorflow-gpu 2.2.0" in f["message"] and "made for Python 3.6" in f["message"], f["message"]
