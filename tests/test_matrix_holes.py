"""The data holes of issue 21, as properties of the packaged matrix and as answers a user sees.

What was looked up (2026-12-01) is recorded here, with where from, so that the tests need no network:
- jaxlib's CUDA releases before 0.1.59: the jax-ml/jax tags jaxlib-v0.1.32 .. jaxlib-v0.1.58 and the changelog
  (https://docs.jax.dev/en/latest/changelog.html), which also names 0.1.41 (untagged); no 0.1.53 or 0.1.54.
- the nvidia-* wheels pip >= 25 resolves for pip-era releases (scripts/verify_pins.py's resolver, pip 26.3).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from subprocess import CompletedProcess

import pytest
from packaging.version import Version

from dnnresolve.matrix import Matrix, load_matrix, packaged_matrix_path
from dnnresolve.model import CudnnRule

Cli = Callable[..., CompletedProcess[str]]

JAXLIB_BEFORE_0_1_59 = [f"0.1.{n}" for n in range(32, 59) if n not in (53, 54)]


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    return load_matrix(packaged_matrix_path())


def test_every_jaxlib_cuda_release_from_0_1_32_has_a_row(matrix: Matrix) -> None:
    missing = [v for v in JAXLIB_BEFORE_0_1_59 if not any(r.cuda for r in matrix.find("jaxlib", f"=={v}"))]
    assert missing == []


def test_every_jax_cuda_variant_states_its_cudnn(matrix: Matrix) -> None:
    # JAX loads cuDNN from the system (or from the nvidia-* wheels its pins bring): with no cuDNN stated,
    # any cuDNN passes, even one of another major.
    silent = [
        f"{r.package} {r.version} CUDA {c}"
        for name in ("jaxlib", "jax")
        for r in matrix.releases(name)
        if r.cudnn_rule is not CudnnRule.BUNDLED
        for c in r.cuda
        if not r.cudnn_for(c)
    ]
    assert silent == []


def test_jaxlib_pins_name_the_release_they_install(matrix: Matrix) -> None:
    # a recipe of a row that covers several releases must still be a build of one of them
    for r in matrix.releases("jaxlib"):
        for recipe in r.install:
            if recipe.kind == "pip" and recipe.requirement.startswith("jaxlib=="):
                pinned = Version(recipe.requirement.split("==")[1])
                assert r.matches(Version(pinned.public)), (str(r.version), recipe.requirement)


def test_a_cuda_11_jaxlib_refuses_a_cudnn_7(run_cli: Cli) -> None:
    proc = run_cli(
        "plan", "jaxlib==0.1.61", "--cuda", "11.2", "--cudnn", "7.6.5", "--driver", "460.32.03",
        "--gpu", "7.0", "--python", "3.8", "--os", "linux", "--no-detect", "--json",
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["satisfied"] is False
    cudnn = [c for c in data["requirements"][0]["checks"] if c["component"] == "cudnn"]
    assert cudnn and cudnn[0]["status"] != "ok", cudnn


def test_torch_1_8_2_lts_installs_from_its_own_index(run_cli: Cli) -> None:
    # https://pytorch.org/get-started/previous-versions/#v182-with-lts-support (read 2026-12-01): the LTS
    # wheels are on download.pytorch.org/whl/lts/1.8/{cu102,cu111,cpu}, not on PyPI
    proc = run_cli(
        "plan", "torch==1.8.2", "--driver", "470.82.01", "--gpu", "7.0", "--python", "3.8", "--os", "linux",
        "--no-detect", "--json",
    )  # fmt: skip
    data = json.loads(proc.stdout)
    req = data["requirements"][0]
    assert req["known"] and req["release"] == "1.8.2" and req["verdict"] == "runs", req
    assert "whl/lts/1.8/cu" in proc.stdout
