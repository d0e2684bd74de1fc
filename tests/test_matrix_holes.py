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


# The pip-era releases PyPI serves (pip 26.3 `pip index versions`, 2026-12-01; jax with --python-version 3.12,
# tensorflow with 3.11) and the extras whose install brings nvidia-* wheels. torch: every release from 1.13.0 (the
# first whose Linux wheels require nvidia-* wheels) in PyPI's simple index (2026-12-02), whose plain install brings
# them; jax 0.4.15 and 0.4.32 are yanked (0.4.15 is an sdist only).
def _each(versions: str, extras: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    return dict.fromkeys(versions.split(" "), extras)


PIP_ERA = {
    "torch": _each(
        "1.13.0 1.13.1 2.0.0 2.0.1 2.1.0 2.1.1 2.1.2 2.2.0 2.2.1 2.2.2 2.3.0 2.3.1 2.4.0 2.4.1 2.5.0 2.5.1 2.6.0 "
        "2.7.0 2.7.1 2.8.0 2.9.0 2.9.1 2.10.0 2.11.0 2.12.0 2.12.1 2.13.0 2.14.0 2.14.1 2.15.0",
        ("",),
    ),
    "tensorflow": _each(
        "2.14.0 2.14.1 2.15.0 2.15.0.post1 2.15.1 2.16.1 2.16.2 2.17.0 2.17.1 2.18.0 2.18.1 2.19.0 2.19.1 "
        "2.20.0 2.21.0",
        ("and-cuda",),
    ),
    "jax": {
        **_each(
            "0.4.7 0.4.8 0.4.9 0.4.10 0.4.11 0.4.12 0.4.13 0.4.14 0.4.16 0.4.17 0.4.18 0.4.19 0.4.20 0.4.21 0.4.22 "
            "0.4.23 0.4.24 0.4.25",
            ("cuda12_pip", "cuda11_pip"),
        ),
        **_each("0.4.26 0.4.27 0.4.28 0.4.29", ("cuda12_pip", "cuda12")),
        **_each(
            "0.4.30 0.4.31 0.4.33 0.4.34 0.4.35 0.4.36 0.4.37 0.4.38 0.5.0 0.5.1 0.5.2 0.5.3 0.6.0 0.6.1 0.6.2 "
            "0.7.0 0.7.1",
            ("cuda12",),
        ),
        **_each(
            "0.7.2 0.8.0 0.8.1 0.8.2 0.8.3 0.9.0 0.9.0.1 0.9.1 0.9.2 0.10.0 0.10.1 0.10.2 0.11.0 0.11.1 0.11.2 0.12.0 "
            "0.12.0.1",
            ("cuda12", "cuda13"),
        ),
    },
}


def test_every_pip_era_release_has_the_pins_of_its_own_metadata(matrix: Matrix) -> None:
    missing = []
    for package, releases in PIP_ERA.items():
        for version, extras in releases.items():
            have = {p.extra for p in matrix.wheel_pins_of(package) if p.version == Version(version) and p.requires}
            missing += [f"{package}[{e}]=={version}" for e in extras if e not in have]
    assert missing == []


def test_pip_refuses_torch_2_5_1_beside_jax_0_7_0(run_cli: Cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # pip 26.3 refuses the pair: torch 2.5.1 pins nvidia-cudnn-cu12==9.1.0.70, jax-cuda12-plugin 0.7.0 asks >=9.8
    req = tmp_path / "requirements.txt"
    req.write_text("torch==2.5.1\njax[cuda12]==0.7.0\n")
    proc = run_cli("check", str(req), "--driver", "560.35.03", "--gpu", "8.0", "--python", "3.11", "--os", "linux",
                   "--json")  # fmt: skip
    findings = json.loads(proc.stdout)["findings"]
    clash = [f for f in findings if f["severity"] == "error" and "nvidia-cudnn-cu12" in f["message"]]
    assert clash and "9.1.0.70" in clash[0]["message"] and ">=9.8" in clash[0]["message"], findings
    assert proc.returncode == 1
