"""Plans in an active conda environment whose framework conda installed: read from its conda-meta records.

The records carry the fields conda writes into ``conda-meta/NAME-VERSION-BUILD.json`` (conda's PrefixRecord: name,
version, build, build_number, channel, subdir, fn, url, depends, constrains, files, requested_spec). The pytorch build
``py3.9_cuda11.3_cudnn8.3.2_0`` is the one PyTorch's channel published for 1.12.1 (``conda install
pytorch==1.12.1=py3.9_cuda11.3_cudnn8.3.2_0 cudatoolkit=11.3 -c pytorch``, as READMEs pin it); its dependencies
follow ``conda search --info`` of the pytorch channel's CUDA builds (``pytorch-mutex 1.0 cuda``, a cudatoolkit range).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ..detect.machines import make_machine

PREFIX = "/opt/conda/envs/dl"


def _record(env: Path, name: str, version: str, build: str, channel: str, depends: list[str], **extra: Any) -> None:
    subdir = "noarch" if channel.endswith("noarch") else "linux-64"
    fn = f"{name}-{version}-{build}.tar.bz2"
    record = {
        "build": build,
        "build_number": int(build.rsplit("_", 1)[-1]) if build.rsplit("_", 1)[-1].isdigit() else 0,
        "channel": channel,
        "constrains": extra.pop("constrains", []),
        "depends": depends,
        "files": extra.pop("files", []),
        "fn": fn,
        "name": name,
        "requested_spec": extra.pop("requested_spec", ""),
        "subdir": subdir,
        "url": f"{channel}/{fn}",
        "version": version,
        **extra,
    }
    meta = env / "conda-meta"
    meta.mkdir(parents=True, exist_ok=True)
    (meta / f"{name}-{version}-{build}.json").write_text(json.dumps(record, indent=2))


# (pytorch version, its build on the pytorch channel, Python, the packages that pin its CUDA: name, version, build,
# channel); build strings as conda environments list them (pytorch 1.12.1 for CUDA 11.3; 2.1.0 for 12.1 with
# pytorch-cuda 12.1 ha16c6d3_5; 2.1.0 for 11.8 in the pytorch/pytorch:2.1.0-cuda11.8 image, cuda-cudart 11.8.89 0)
ANACONDA = "https://repo.anaconda.com/pkgs/main/linux-64"
ENVS: dict[str, tuple[str, str, str, list[tuple[str, str, str, str]]]] = {
    "cudatoolkit": (
        "1.12.1",
        "py3.9_cuda11.3_cudnn8.3.2_0",
        "3.9.13",
        [("cudatoolkit", "11.3.1", "h2bc3f7f_2", ANACONDA)],
    ),
    "pytorch-cuda": (
        "2.1.0",
        "py3.10_cuda12.1_cudnn8.9.2_0",
        "3.10.14",
        [("pytorch-cuda", "12.1", "ha16c6d3_5", "https://conda.anaconda.org/pytorch/noarch")],
    ),
    "cuda-version": (
        "2.1.0",
        "py3.10_cuda11.8_cudnn8.7.0_0",
        "3.10.14",
        [
            ("cuda-version", "11.8", "3", "https://conda.anaconda.org/nvidia/noarch"),
            ("cuda-cudart", "11.8.89", "0", "https://conda.anaconda.org/nvidia/linux-64"),
        ],
    ),
}


def conda_env(tmp_path: Path, kind: str = "cudatoolkit") -> Path:
    """The modern fixture machine (driver 570.86.15) with a conda env holding conda's pytorch of one CUDA build."""
    version, build, python, pins = ENVS[kind]
    py = ".".join(python.split(".")[:2])
    root = make_machine(tmp_path, "modern")
    env = root / PREFIX.lstrip("/")
    (env / f"lib/python{py}/site-packages").mkdir(parents=True)
    _record(env, "python", python, "h955ad1f_0", ANACONDA, ["libgcc-ng >=11.2.0"])
    for name, pin, pin_build, channel in pins:
        _record(env, name, pin, pin_build, channel, [])
    cuda = build.split("_cuda", 1)[1].split("_", 1)[0]
    pin_dep = {"cudatoolkit": f"cudatoolkit >={cuda},<{cuda[:-1]}{int(cuda[-1]) + 1}"}.get(
        kind, f"pytorch-cuda {cuda}.*"
    )
    _record(env, "pytorch-mutex", "1.0", "cuda", "https://conda.anaconda.org/pytorch/noarch", [])
    _record(
        env,
        "pytorch",
        version,
        build,
        "https://conda.anaconda.org/pytorch/linux-64",
        [pin_dep, f"python >={py},<3.{int(py.split('.')[1]) + 1}.0a0", "pytorch-mutex 1.0 cuda", "typing_extensions"],
        constrains=["cpuonly <0"],
        files=[f"lib/python{py}/site-packages/torch/__init__.py"],
        requested_spec=f"pytorch=={version}={build}",
    )
    return root


def _env() -> dict[str, str]:
    return {"CONDA_PREFIX": PREFIX, "CONDA_DEFAULT_ENV": "dl"}


def _steps(plan: dict[str, Any]) -> list[list[list[str]]]:
    return [[s["argv"] for s in o["steps"]] for o in plan["requirements"][0]["options"]]


def test_detect_reads_the_framework_conda_installed_with_its_build(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = conda_env(tmp_path)
    out = run_cli("detect", "--root", str(root), env=_env())
    assert out.returncode == 0, out.stderr
    assert "torch 1.12.1 (conda, CUDA 11.3 build)" in out.stdout
    data = json.loads(run_cli("detect", "--root", str(root), "--json", env=_env()).stdout)
    [torch] = [p for p in data["packages"] if p["name"] == "torch"]
    assert torch["version"] == "1.12.1" and torch["conda"] == {
        "build": "py3.9_cuda11.3_cudnn8.3.2_0",
        "channel": "pytorch",
    }
    assert torch["build"]["cuda"] == "11.3"


def test_plan_of_the_release_conda_installed_has_nothing_to_do(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # driver 570 runs the CUDA 11.3 build: before, plan proposed `pip install torch==1.12.1` over conda's
    root = conda_env(tmp_path)
    out = run_cli("plan", "torch==1.12.1", "--root", str(root), env=_env())
    assert out.returncode == 0, out.stderr
    assert "nothing to do" in out.stdout and "pip install" not in out.stdout


@pytest.mark.parametrize(
    ("kind", "cuda", "pin"),
    [("pytorch-cuda", "12.1", "conda pytorch-cuda 12.1"), ("cuda-version", "11.8", "conda cuda-version 11.8")],
)
def test_detect_reads_the_cuda_pin_of_the_environment(run_cli, tmp_path: Path, kind: str, cuda: str, pin: str) -> None:  # type: ignore[no-untyped-def]
    # pytorch-cuda and cuda-version hold the environment's CUDA without being a CUDA install themselves
    root = conda_env(tmp_path, kind)
    out = run_cli("detect", "--root", str(root), env=_env())
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.startswith("conda CUDA"))
    assert cuda in line, out.stdout
    data = json.loads(run_cli("detect", "--root", str(root), "--json", env=_env()).stdout)
    assert data["conda"]["cuda"] == cuda and pin in out.stdout


def test_a_release_of_the_same_cuda_is_a_conda_install_into_the_environment(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # torch 1.11.0 has a conda build for cudatoolkit 11.3, the environment's: before, `pip install torch==1.11.0`
    root = conda_env(tmp_path)
    out = run_cli("plan", "torch==1.11.0", "--root", str(root), "--json", env=_env())
    steps = _steps(json.loads(out.stdout))
    assert steps[0] == [
        [
            "conda",
            "install",
            "-y",
            "-c",
            "pytorch",
            "pytorch==1.11.0",
            "cudatoolkit=11.3",
            "torchvision==0.12.0",
            "torchaudio==0.11.0",
        ]
    ]
    assert not any(argv[:3] == ["python", "-m", "pip"] for option in steps for argv in option)


def test_a_release_of_another_cuda_is_a_new_environment(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # torch 2.1.0's conda builds need pytorch-cuda 11.8 or 12.1; the environment holds cudatoolkit 11.3
    root = conda_env(tmp_path)
    out = run_cli("plan", "torch==2.1.0", "--root", str(root), "--json", env=_env())
    steps = _steps(json.loads(out.stdout))
    first = steps[0]
    assert first[0][:5] == ["conda", "create", "-y", "-n", "torch-2.1.0"] and "pytorch-cuda=12.1" in first[0]
    assert first[1] == ["conda", "activate", "torch-2.1.0"]
    for option in steps:  # nothing installs into this environment: a new one first, every time
        assert option[0][:2] == ["conda", "create"] or not any("pip" in argv or "install" in argv for argv in option)
    title = json.loads(out.stdout)["requirements"][0]["options"][0]["title"]
    assert "one conda environment holds one CUDA" in title and "CUDA 11.3 (conda cudatoolkit 11.3.1)" in title


def test_a_release_conda_has_no_package_of_goes_to_a_new_environment(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # PyTorch publishes no conda package of 2.8.0: its pip install, but in an environment of its own
    root = conda_env(tmp_path)
    out = run_cli("plan", "torch==2.8.0", "--root", str(root), "--json", env=_env())
    for option in _steps(json.loads(out.stdout)):
        pip = [i for i, argv in enumerate(option) if argv[:3] == ["python", "-m", "pip"]]
        if pip:
            assert option[0][:2] == ["conda", "create"] and option[1][:2] == ["conda", "activate"], option


# conda-forge's cupy: one package per CUDA, its build taking the environment's cuda-version (tests/data/
# conda_forge_cupy.json: cupy 13.1.0 and 13.3.0 have CUDA 11.8 builds taking cuda-version >=11.2,<12 and CUDA 12.4 /
# 12.6 builds taking >=12.0,<13; 14.x CUDA 12.9 builds take >=12,<13); conda-forge's records name the channel by URL
FORGE = "https://conda.anaconda.org/conda-forge"


def cupy_env(tmp_path: Path, version: str, cuda: str, takes: str) -> Path:
    """The modern fixture machine with a conda env holding conda-forge's cupy and the cuda-version it runs with."""
    root = make_machine(tmp_path, "modern")
    env = root / PREFIX.lstrip("/")
    (env / "lib/python3.10/site-packages/cupy").mkdir(parents=True)
    _record(env, "python", "3.10.14", "hd12c33a_0_cpython", f"{FORGE}/linux-64", [])
    _record(env, "cuda-version", cuda, "h4ba93d1_3", f"{FORGE}/noarch", [])
    _record(
        env,
        "cupy",
        version,
        "py310h7a2f9e5_0",
        f"{FORGE}/linux-64",
        [f"cupy-core {version} py310h1a2b3c4_0", f"cuda-version {takes}", "python_abi 3.10.* *_cp310"],
        files=["lib/python3.10/site-packages/cupy/__init__.py"],
        requested_spec="cupy",
    )
    return root


def test_detect_reads_conda_cupy_as_the_package_of_the_environments_cuda(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # before, conda's cupy was cupy-cuda12x whatever the environment's CUDA: here its CUDA 11.8 build, and the plan
    # of cupy-cuda11x==13.3.0 proposed `pip install cupy-cuda11x==13.3.0` over conda's cupy; the environment's
    # cuda-version 11.8 serves it (test_conda_installed_build_is_judged_against_the_environments_cuda)
    root = cupy_env(tmp_path, "13.3.0", "11.8", ">=11.2,<12")
    out = run_cli("detect", "--root", str(root), env=_env())
    assert out.returncode == 0, out.stderr
    assert "cupy-cuda11x 13.3.0 (conda" in out.stdout and "cupy-cuda12x" not in out.stdout
    out = run_cli("plan", "cupy-cuda11x==13.3.0", "--root", str(root), env=_env())
    assert out.returncode in (0, 1) and not out.stderr, out.stderr
    assert "nothing to do: this machine runs it as it is" in out.stdout and "pip install" not in out.stdout


def test_a_conda_forge_build_of_the_same_major_installs_into_the_environment(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # cupy 14.2.0's conda recipe is the CUDA 12.9 build, which takes cuda-version >=12,<13: the environment's 12.4
    # keeps it (check_conda's rule, conda_cuda.takes). Before, only a recipe of CUDA 12.4 itself stayed in the
    # environment: the plan made a new one ("its conda build needs CUDA 12.9, and this environment holds CUDA 12.4")
    root = cupy_env(tmp_path, "13.1.0", "12.4", ">=12.0,<13")
    out = run_cli("plan", "cupy-cuda12x==14.2.0", "--root", str(root), "--json", env=_env())
    assert out.returncode in (0, 1) and not out.stderr, out.stderr
    options = json.loads(out.stdout)["requirements"][0]["options"]
    assert _steps(json.loads(out.stdout))[0] == [
        ["conda", "install", "-y", "-c", "conda-forge", "cupy==14.2.0", "cuda-version=12.4"]
    ]
    assert "keeps the environment's CUDA 12.4 (conda cuda-version 12.4)" in options[0]["title"]
    assert not any(argv[:2] == ["conda", "create"] for o in _steps(json.loads(out.stdout)) for argv in o[:1])


def test_another_framework_of_another_cuda_goes_to_a_new_environment(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # the environment holds cudatoolkit 11.3 for conda's pytorch; cupy-cuda12x 13.3.0's builds are for CUDA 12.
    # Before: `pip install cupy-cuda12x==13.3.0` into this environment, with nothing said
    root = conda_env(tmp_path)
    out = run_cli("plan", "cupy-cuda12x==13.3.0", "--root", str(root), "--json", env=_env())
    assert out.returncode in (0, 1) and not out.stderr, out.stderr
    plan = json.loads(out.stdout)
    for option, steps in zip(plan["requirements"][0]["options"], _steps(plan)):
        assert steps[0][:5] == ["conda", "create", "-y", "-n", "cupy-cuda12x-13.3.0"], steps
        assert steps[1] == ["conda", "activate", "cupy-cuda12x-13.3.0"]
        assert "cupy-cuda12x 13.3.0's CUDA 12.0 build" in option["title"]
        assert "holds CUDA 11.3 (conda cudatoolkit 11.3.1), which conda's torch 1.12.1" in option["title"]
        assert "one conda environment holds one CUDA" in option["title"]
    # a release of the environment's CUDA major stays in it: cupy-cuda11x's builds take cudatoolkit 11.3
    out = run_cli("plan", "cupy-cuda11x==13.3.0", "--root", str(root), "--json", env=_env())
    assert not any(argv[:2] == ["conda", "create"] for o in _steps(json.loads(out.stdout)) for argv in o)


def test_check_holds_a_requirements_file_to_the_environments_cuda(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # the same in check: a requirements file checked for this conda environment (its detect --json as --target).
    # Before, no finding
    root = conda_env(tmp_path)
    profile = tmp_path / "target.json"
    profile.write_text(run_cli("detect", "--root", str(root), "--json", env=_env()).stdout)
    req = tmp_path / "requirements.txt"
    req.write_text("numpy\ncupy-cuda12x==13.3.0\n")
    out = run_cli("check", "--json", str(req), "--target", str(profile))
    assert out.returncode == 1, out.stderr
    [f] = [f for f in json.loads(out.stdout)["findings"] if f["rule"] == "conda-cuda-mix"]
    assert f["line"] == 2 and f["severity"] == "error"
    assert "cupy-cuda12x==13.3.0 need CUDA 12.0" in f["message"]
    assert "dl holds CUDA 11.3 (conda cudatoolkit 11.3.1), which conda's torch 1.12.1" in f["message"]
    assert "conda environment of its own" in f["fix"]
    req.write_text("cupy-cuda11x==13.3.0\n")  # CUDA 11.x builds: the environment's 11.3 takes them
    out = run_cli("check", "--json", str(req), "--target", str(profile))
    assert not [f for f in json.loads(out.stdout)["findings"] if f["rule"] == "conda-cuda-mix"]


def test_conda_installed_build_is_judged_against_the_environments_cuda(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # conda-forge's cupy 13.3.0 CUDA 11 build in an environment held to cuda-version 11.8, with conda's cudatoolkit
    # 11.8 beside it, on a machine whose system CUDA is 12.4: conda's cupy loads the environment's CUDA (its
    # libraries sit in the environment's lib/, which conda's builds find first). Before, the plan judged the
    # system's 12.4 ("built for CUDA 11.2; CUDA 12.4.127 is in use") and told the user to install CUDA 11.2 by hand
    root = cupy_env(tmp_path, "13.3.0", "11.8", ">=11.2,<12")
    _record(root / PREFIX.lstrip("/"), "cudatoolkit", "11.8.0", "h4ba93d1_13", f"{FORGE}/linux-64", [])
    out = run_cli("plan", "cupy-cuda11x==13.3.0", "--root", str(root), "--json", env=_env())
    assert not out.stderr, out.stderr
    plan = json.loads(out.stdout)
    [cuda] = [c for c in plan["requirements"][0]["checks"] if c["component"] == "cuda"]
    assert cuda["status"] == "ok", cuda
    assert cuda["found"] == "11.8.0" and "environment" in cuda["reason"]
    assert "runfile" not in out.stdout and "cuda-toolkit-archive" not in out.stdout
    # the same build in an environment held to CUDA 12 would not load: conda installed it for 11.x
    root = cupy_env(tmp_path / "12", "13.3.0", "12.4", ">=11.2,<12")
    out = run_cli("plan", "cupy-cuda11x==13.3.0", "--root", str(root), "--json", env=_env())
    [cuda] = [c for c in json.loads(out.stdout)["requirements"][0]["checks"] if c["component"] == "cuda"]
    assert cuda["status"] == "fail", cuda


# Anaconda's defaults channel builds tensorflow-gpu itself (tests/data/anaconda_tensorflow_gpu.json): other CUDA builds
# than the wheels, each bringing cudatoolkit and cudnn as conda packages. The records are those of a published
# `conda env export` of such an environment (found 2026-12-02 with the search tool's find_string
# "tensorflow-gpu=1.14.0=h0d30ee6_0"): tensorflow-gpu 1.14.0 h0d30ee6_0 over tensorflow gpu_py36h3fb9ad6_0 and
# tensorflow-base gpu_py36he45bfe2_0 (the 1.14.0 CUDA 10.1 base build recorded from Anaconda's recipes), cudatoolkit
# 10.1.168 0, cudnn 7.6.0 cuda10.1_0, python 3.6.6 h6e4f718_2
def tf_env(tmp_path: Path) -> Path:
    """The modern fixture machine (driver 570), a conda env holding Anaconda's tensorflow-gpu 1.14.0 for CUDA 10.1."""
    root = make_machine(tmp_path, "modern")
    env = root / PREFIX.lstrip("/")
    (env / "lib/python3.6/site-packages/tensorflow").mkdir(parents=True)
    _record(env, "python", "3.6.6", "h6e4f718_2", ANACONDA, [])
    _record(env, "cudatoolkit", "10.1.168", "0", ANACONDA, [])
    _record(env, "cudnn", "7.6.0", "cuda10.1_0", ANACONDA, [])
    base = ["cudatoolkit >=10.1,<10.2", "cudnn >=7.6.0,<8.0a0", "python >=3.6,<3.7.0a0"]
    files = ["lib/python3.6/site-packages/tensorflow/__init__.py"]
    _record(env, "tensorflow-base", "1.14.0", "gpu_py36he45bfe2_0", ANACONDA, base, files=files)
    _record(env, "tensorflow", "1.14.0", "gpu_py36h3fb9ad6_0", ANACONDA, ["tensorflow-base 1.14.0 gpu_py36he45bfe2_0"])
    _record(
        env, "tensorflow-gpu", "1.14.0", "h0d30ee6_0", ANACONDA, ["tensorflow 1.14.0"], requested_spec="tensorflow-gpu"
    )
    return root


def _tf_plan(run_cli, root: Path, spec: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    out = run_cli("plan", spec, "--root", str(root), "--gpu", "V100", "--json", env=_env())
    assert out.returncode in (0, 1) and not out.stderr, out.stderr
    plan: dict[str, Any] = json.loads(out.stdout)
    return plan


def test_anacondas_build_for_the_environments_cuda_installs_into_it(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # tensorflow-gpu 2.0.0: the wheel is a CUDA 10.0 build, Anaconda's has a CUDA 10.1 one with cuDNN 7.6 (for Python
    # 2.7, 3.6 and 3.7). The case was 2.4.1 (wheel CUDA 11.0) until its Pythons were recorded: 3.7-3.9, none for this
    # environment's 3.6 (tests/test_conda_python_pick.py). Before, the plan judged the wheel and put a CUDA runfile and
    # a cuDNN download before the `conda install`, titled "its CUDA 11.0 build keeps the environment's CUDA 10.1"
    root = tf_env(tmp_path)
    plan = _tf_plan(run_cli, root, "tensorflow-gpu==2.0.0")
    req = plan["requirements"][0]
    assert req["release"] == "2.0.0" and req["cuda_variant"] == "10.1" and req["verdict"] == "runs", req
    assert _steps(plan)[0] == [
        ["conda", "install", "-y", "-c", "defaults", "tensorflow-gpu==2.0.0", "cudatoolkit=10.1", "cudnn=7.6"]
    ]
    title = req["options"][0]["title"]
    assert "CUDA 10.1 build from defaults keeps the environment's CUDA 10.1 (conda cudatoolkit 10.1.168)" in title
    assert "AnacondaRecipes/tensorflow_recipes" in req["source"]
    # the release conda installed there runs as it is: its CUDA 10.1 build, not the CUDA 10.0 wheel
    plan = _tf_plan(run_cli, root, "tensorflow-gpu==1.14.0")
    assert plan["requirements"][0]["satisfied"] and "pip" not in json.dumps(plan["requirements"][0]["options"])


def test_anacondas_build_of_another_cuda_is_a_new_environment_of_conda_packages(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # tensorflow-gpu 1.13.1: Anaconda built it for CUDA 9.0, 9.2 and 10.0 (cudnn 7.3), none of which cudatoolkit 10.1
    # takes. Before: a CUDA 10.0 runfile and a cuDNN 7.6.5 download by hand, then `conda create`, which brings both
    # The new environment pins a Python the build was made for (the metapackage's config lists gpu_py27, py36 and
    # py37 builds): the environment's own 3.6. Before, no python= pin: conda picked one
    root = tf_env(tmp_path)
    plan = _tf_plan(run_cli, root, "tensorflow-gpu==1.13.1")
    first = _steps(plan)[0]
    assert first == [
        ["conda", "create", "-y", "-n", "tensorflow-gpu-1.13.1", "-c", "defaults", "python=3.6",
         "tensorflow-gpu==1.13.1", "cudatoolkit=10.0", "cudnn=7.3"],
        ["conda", "activate", "tensorflow-gpu-1.13.1"],
    ]  # fmt: skip
    for option in _steps(plan):  # nothing by hand: conda brings CUDA and cuDNN
        assert all(argv[:1] == ["conda"] for argv in option), option


def test_a_range_plans_the_release_conda_falls_back_to(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # driver 410.48 gives __cuda 10.0: of tensorflow-gpu 2.0-2.4, conda installs 2.0.0 (its CUDA 10.0 build), since
    # the builds of 2.1.0-2.4.1 are cudatoolkit 10.1 ones. Before: the plan was for 2.4.1, which conda does not install
    root = tf_env(tmp_path)
    out = run_cli(
        "plan", "tensorflow-gpu>=2.0,<2.5", "--root", str(root), "--gpu", "V100", "--driver", "410.48", "--json",
        env=_env(),
    )  # fmt: skip
    req = json.loads(out.stdout)["requirements"][0]
    assert req["release"] == "2.0.0", req["release"]
    assert _steps(json.loads(out.stdout))[0][0] == [
        "conda", "create", "-y", "-n", "tensorflow-gpu-2.0.0", "-c", "defaults", "python=3.6", "tensorflow-gpu==2.0.0",
        "cudatoolkit=10.0", "cudnn=7.6",
    ]  # fmt: skip
