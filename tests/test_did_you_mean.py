"""Forgiving input (issue #25, point 6): a misspelt package, GPU or option is answered with the nearest names
dnnresolve knows, as one line and exit status 2 where the command cannot go on; banners only where they matter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dnnresolve.matrix import load_matrix
from dnnresolve.suggest import package_suggestions

NO_MACHINE = ["--no-detect", "--driver", "535.104.05", "--python", "3.11"]


def _one_line_error(res, command: str = "plan") -> str:  # type: ignore[no-untyped-def]
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"dnnresolve {command}: error: "), res.stderr
    assert "Traceback" not in res.stderr
    return lines[0]


# ------------------------------------------------------------------ package names


def test_plan_of_a_misspelt_package_is_bad_input_with_the_name_meant(run_cli) -> None:  # type: ignore[no-untyped-def]
    """The issue's example, on this machine as it is: no driver banner first, one line, exit 2."""
    line = _one_line_error(run_cli("plan", "tensorfow-gpu==1.0"))
    assert "tensorfow-gpu is not in the compatibility matrix" in line
    assert "did you mean 'tensorflow-gpu'?" in line
    assert "No NVIDIA driver" not in line


def test_plan_of_a_package_the_matrix_does_not_know_says_where_the_known_ones_are(run_cli) -> None:  # type: ignore[no-untyped-def]
    line = _one_line_error(run_cli("plan", "numpy==1.26.0", *NO_MACHINE))
    assert "numpy is not in the compatibility matrix" in line and "did you mean" not in line
    assert "'dnnresolve matrix' lists the packages it knows" in line


def test_plan_names_each_unknown_package_of_several(run_cli) -> None:  # type: ignore[no-untyped-def]
    line = _one_line_error(run_cli("plan", "torhc==2.1.0", "torch==2.1.0", "pytorch", *NO_MACHINE))
    assert "torhc (did you mean 'torch'?)" in line and "pytorch (did you mean 'torch'?)" in line


def test_install_still_passes_unknown_packages_to_pip(run_cli) -> None:  # type: ignore[no-untyped-def]
    res = run_cli("install", "numpy==1.26.0", "--dry-run", *NO_MACHINE)
    assert res.returncode == 0, res.stderr
    assert "numpy==1.26.0" in res.stdout


@pytest.mark.parametrize(
    "typed, meant",
    [
        ("tensorfow-gpu", ["tensorflow-gpu"]),
        ("tensorflowgpu", ["tensorflow-gpu"]),
        ("TensorFlow_GPU", []),  # (the name itself, in another spelling: known, nothing to suggest)
        ("pytorch", ["torch"]),
        ("jaxlb", ["jaxlib"]),
        ("jxa", ["jax"]),
        ("cupy-cuda12", ["cupy-cuda12x"]),
        # sibling packages, not slips: a whole short word, only digits, or a word more or less
        ("tensorflow-cpu", []),
        ("mxnet-cu118", []),
        ("onnxruntime", []),
        ("paddlepaddle", []),
        ("tensorboard", []),
        ("torchvision", []),
        ("numpy", []),
    ],
)
def test_package_suggestions_are_slips_not_siblings(typed: str, meant: list[str]) -> None:
    assert package_suggestions(typed, load_matrix().packages()) == meant


def test_check_keeps_an_unknown_package_a_note_with_the_name_meant(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    reqs = tmp_path / "requirements.txt"
    reqs.write_text("tensorfow-gpu==1.0\nnumpy==1.26.0\ntensorflow-cpu==2.15.0\ntorhc==2.1.0\n")
    res = run_cli("check", str(reqs), "--json")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    notes = {f["package"]: f for f in report["findings"] if f["rule"] == "not-checked"}
    assert notes["tensorfow-gpu"]["severity"] == "info" and notes["tensorfow-gpu"]["line"] == 1
    assert "did you mean 'tensorflow-gpu'?" in notes["tensorfow-gpu"]["message"]
    assert notes["torhc"]["line"] == 4 and "did you mean 'torch'?" in notes["torhc"]["message"]
    assert "tensorflow-cpu" not in notes and "numpy" not in notes  # no slip: in the summary's "not checked"
    assert report["not_checked"] == ["numpy", "tensorflow-cpu"]
    text = run_cli("check", str(reqs))
    assert text.returncode == 0 and "did you mean 'tensorflow-gpu'?" in text.stdout


def test_matrix_of_a_misspelt_package_names_the_one_meant(run_cli) -> None:  # type: ignore[no-untyped-def]
    res = run_cli("matrix", "tensorfow")
    assert res.returncode == 1
    assert "tensorfow is not in the compatibility matrix; did you mean 'tensorflow'?" in res.stdout


# ------------------------------------------------------------------ GPU names


@pytest.mark.parametrize("typed", ["RTX 4090ti", "4090", "rtx4090", "RTX 4090 Ti", "geforce rtx 4090"])
def test_gpu_names_as_people_type_them_are_read(run_cli, typed: str) -> None:  # type: ignore[no-untyped-def]
    res = run_cli("plan", "torch==2.1.0", *NO_MACHINE, "--gpu", typed, "--json")
    assert res.returncode in (0, 1), res.stderr
    checks = json.loads(res.stdout)["requirements"][0]["checks"]
    assert [c["found"] for c in checks if c["component"] == "compute_capability"] == ["8.9"]


@pytest.mark.parametrize("typed, capability", [("3.5", "3.5"), ("8.6", "8.6"), ("sm_75", "7.5")])
def test_a_bare_compute_capability_stays_one(run_cli, typed: str, capability: str) -> None:  # type: ignore[no-untyped-def]
    res = run_cli("plan", "torch==2.1.0", *NO_MACHINE, "--gpu", typed, "--json")
    checks = json.loads(res.stdout)["requirements"][0]["checks"]
    assert [c["found"] for c in checks if c["component"] == "compute_capability"] == [capability]


def test_a_gpu_name_near_known_ones_is_refused_with_them(run_cli) -> None:  # type: ignore[no-untyped-def]
    line = _one_line_error(run_cli("plan", "torch==2.1.0", *NO_MACHINE, "--gpu", "RTX 4900"))
    assert "--gpu 'RTX 4900': not a GPU the matrix knows; did you mean 'GeForce RTX 4090'" in line
    assert "e.g. --gpu 3.5" not in line


def test_a_gpu_name_of_several_capabilities_is_refused_with_each(run_cli) -> None:  # type: ignore[no-untyped-def]
    """'6000' is a Quadro RTX 6000 (7.5), an RTX A6000 (8.6), a Quadro P6000 (6.1)...: no guess."""
    line = _one_line_error(run_cli("plan", "torch==2.1.0", *NO_MACHINE, "--gpu", "6000"))
    assert "of different compute capabilities" in line
    assert "'Quadro RTX 6000'" in line and "'RTX A6000'" in line


def test_a_gpu_name_like_none_says_how_to_find_the_capability(run_cli) -> None:  # type: ignore[no-untyped-def]
    line = _one_line_error(run_cli("plan", "torch==2.1.0", *NO_MACHINE, "--gpu", "Banana X"))
    assert "not a GPU the matrix knows" in line and "did you mean" not in line
    assert "nvidia-smi --query-gpu=compute_cap --format=csv" in line


# ------------------------------------------------------------------ options and commands


def test_a_misspelt_option_names_the_one_meant_and_the_commands_help(run_cli) -> None:  # type: ignore[no-untyped-def]
    line = _one_line_error(run_cli("plan", "torch==2.1", "--drvier", "470"))
    assert "unrecognized arguments: --drvier (did you mean --driver?)" in line
    assert "dnnresolve plan --help" in line


def test_a_misspelt_option_with_its_value_attached(run_cli) -> None:  # type: ignore[no-untyped-def]
    line = _one_line_error(run_cli("check", "--strcit", "--drvier=470"), "check")
    assert "--strcit (did you mean --strict?)" in line and "--drvier=470 (did you mean --driver?)" in line
    assert "dnnresolve check --help" in line


def test_an_option_before_its_command_is_answered_as_that_command(run_cli) -> None:  # type: ignore[no-untyped-def]
    line = _one_line_error(run_cli("--json", "plan", "torch==2.1", "--drvier", "470"))
    assert "--json (give it after 'plan')" in line and "--drvier (did you mean --driver?)" in line
    assert "dnnresolve plan --help" in line


def test_an_option_like_none_is_named_without_a_guess(run_cli) -> None:  # type: ignore[no-untyped-def]
    line = _one_line_error(run_cli("plan", "torch==2.1", "--xyzzy"))
    assert "unrecognized arguments: --xyzzy (see 'dnnresolve plan --help')" in line


def test_a_misspelt_command_names_the_one_meant(run_cli) -> None:  # type: ignore[no-untyped-def]
    res = run_cli("plna", "torch==2.1")
    assert res.returncode == 2 and res.stdout == ""
    assert (
        res.stderr.strip()
        == "dnnresolve: error: unknown command 'plna' (did you mean 'plan'?) (see 'dnnresolve --help')"
    )


# ------------------------------------------------------------------ banners


def test_the_driver_banner_comes_only_with_a_check_it_explains(run_cli) -> None:  # type: ignore[no-untyped-def]
    """A plan whose driver and GPU checks read '?' says why; one that shows no such check (no release matches)
    does not."""
    banner = "No NVIDIA driver or GPU is known for this machine"
    shown = run_cli("plan", "torch==2.1.0", "--no-detect")
    assert banner in shown.stdout
    assert any(line.lstrip().startswith("?") and "driver" in line for line in shown.stdout.splitlines())
    nothing = run_cli("plan", "torch==99.0", "--no-detect")
    assert "no release of torch in the matrix satisfies torch==99.0" in nothing.stdout
    assert banner not in nothing.stdout
