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


def conda_env(tmp_path: Path, *, toolkit: str = "cudatoolkit", cuda: str = "11.3.1") -> Path:
    """The modern fixture machine (driver 570.86.15) with a conda env holding conda's pytorch 1.12.1 (CUDA 11.3)."""
    root = make_machine(tmp_path, "modern")
    env = root / PREFIX.lstrip("/")
    site = env / "lib/python3.9/site-packages"
    site.mkdir(parents=True)
    _record(
        env, "python", "3.9.13", "haa1d7c7_2", "https://repo.anaconda.com/pkgs/main/linux-64", ["libgcc-ng >=11.2.0"]
    )
    if toolkit == "cudatoolkit":
        _record(env, "cudatoolkit", cuda, "h2bc3f7f_2", "https://repo.anaconda.com/pkgs/main/linux-64", [])
        cuda_dep = "cudatoolkit >=11.3,<11.4"
    else:  # NVIDIA's packages: the runtime, pinned by cuda-version
        _record(env, "cuda-version", cuda, "3", "https://conda.anaconda.org/nvidia/noarch", [])
        _record(env, "cuda-cudart", f"{cuda}.89", "0", "https://conda.anaconda.org/nvidia/linux-64", [])
        cuda_dep = f"cuda-version {cuda}.*"
    _record(env, "pytorch-mutex", "1.0", "cuda", "https://conda.anaconda.org/pytorch/noarch", [])
    _record(
        env,
        "pytorch",
        "1.12.1",
        "py3.9_cuda11.3_cudnn8.3.2_0",
        "https://conda.anaconda.org/pytorch/linux-64",
        [cuda_dep, "python >=3.9,<3.10.0a0", "pytorch-mutex 1.0 cuda", "typing_extensions", "blas * mkl"],
        constrains=["cpuonly <0"],
        files=["lib/python3.9/site-packages/torch/__init__.py"],
        requested_spec="pytorch==1.12.1=py3.9_cuda11.3_cudnn8.3.2_0",
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
