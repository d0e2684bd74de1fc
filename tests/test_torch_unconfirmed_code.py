"""GPU code only some build-script states carry (#21): torch 1.8.0+cu111 (Linux) and 1.0.0 cu100 (Windows) were
built the day pytorch/builder changed their TORCH_CUDA_ARCH_LIST, and no source says which state built them. The
matrix states the code every state carries (``sm``) and the code only some carry (``sm_unconfirmed``); a GPU
that only the latter covers gets a warning that it may or may not run, never a pass or a failure."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest

from dnnresolve.matrix import packaged_matrix_path

Cli = Callable[..., CompletedProcess[str]]

# before 8924a150: 5.0;7.0;8.0;8.6; after it: 3.7;5.0;6.0;7.0;7.5;8.0;8.6 (pytorch/builder manywheel/build.sh)
LINUX_CU111 = ("plan", "torch==1.8.0+cu111", "--no-detect", "--offline", "--os", "linux", "--python", "3.8")


def _plan(run_cli: Cli, gpu: str, *more: str) -> CompletedProcess[str]:
    out = run_cli(*LINUX_CU111, "--driver", "460.32.03", "--gpu", gpu, *more)
    assert out.returncode in (0, 1), out.stdout + out.stderr
    return out


def _table(stdout: str) -> str:
    """The checks above the options, the reasons' wrapped lines joined."""
    return re.sub(r"\s*\n\s*", " ", stdout.split("Options, best first:", 1)[0])


@pytest.mark.parametrize("gpu", ["6.1", "3.7"])
def test_plan_of_torch_1_8_0_cu111_says_it_may_lack_code_for_a_gpu_only_one_script_state_covers(
    run_cli: Cli, gpu: str
) -> None:
    # It said "ok compute_capability needs >= 3.7" and "install it: this machine has what it needs", although
    # the script state before 8924a150 has nothing for sm_61 (libtorch 1.8.0 cu111 failed there, pytorch issues
    # 53476 and 54053) and nothing for sm_37.
    out = _plan(run_cli, gpu)
    sm = "sm_" + gpu.replace(".", "")
    table = _table(out.stdout)
    assert "warn     compute_capability" in table, out.stdout
    assert f"may lack code for {sm}" in table, out.stdout
    assert "build scripts of that day differ" in table, out.stdout
    said = " ".join(out.stdout.split())
    assert "this machine has what it needs" not in said, out.stdout
    assert "install it, though it may not run here; read the warnings first (compute_capability)" in said, out.stdout


def test_plan_of_torch_1_8_0_cu111_on_an_rtx_3090_passes_on_code_every_state_carries(run_cli: Cli) -> None:
    out = _plan(run_cli, "8.6")
    line = next(x for x in out.stdout.splitlines() if "compute_capability" in x)
    assert line.split()[0] == "ok", out.stdout
    assert "needs sm_50, sm_70, sm_80, sm_86" in line, out.stdout  # it said "needs >= 3.7"
    assert "1. install it: this machine has what it needs" in out.stdout, out.stdout


def test_plan_of_torch_1_8_0_cu111_on_a_k20_fails_in_every_state(run_cli: Cli) -> None:
    out = _plan(run_cli, "3.5")
    table = _table(out.stdout)
    assert "MISSING  compute_capability" in table, out.stdout
    # the reason names what it carries, and what only some states carry; neither runs on sm_35
    assert "none runs on sm_35" in table, out.stdout
    assert "sm_37" in table and "sm_60" in table, out.stdout


def test_plan_json_of_torch_1_8_0_cu111_on_a_gtx_1080_is_a_warning(run_cli: Cli) -> None:
    out = _plan(run_cli, "6.1", "--json")
    text = json.dumps(json.loads(out.stdout))
    assert '"status": "warn"' in text and "may lack code for sm_61" in text, out.stdout


def test_check_of_torch_1_8_0_cu111_on_a_gtx_1080_warns_rather_than_passes(run_cli: Cli, tmp_path: Path) -> None:
    # check said "torch 1.8.0 for CUDA 11.1 ... ok", no warning
    req = tmp_path / "requirements.txt"
    req.write_text("--find-links https://download.pytorch.org/whl/torch_stable.html\ntorch==1.8.0+cu111\n")
    out = run_cli(
        "check", str(req), "--no-detect", "--offline", "--os", "linux", "--python", "3.8", "--driver", "460.32.03",
        "--gpu", "6.1",
    )  # fmt: skip
    assert "Traceback" not in out.stderr, out.stderr
    said = " ".join(out.stdout.split())
    assert "torch 1.8.0 (CUDA 11.1) may not run: compute_capability: this build may lack code for sm_61" in said, said
    assert "1 warning(s)" in said, out.stdout


def test_matrix_shows_the_code_only_some_build_states_carry(run_cli: Cli) -> None:
    out = run_cli("matrix", "torch==1.8.0", "--json", "--offline")
    assert out.returncode == 0, out.stderr
    (row,) = json.loads(out.stdout)["releases"]
    (cu111,) = [r for r in row["install"] if r["kind"] == "pip" and r["cuda"] == "11.1"]
    assert cu111["sm"] == ["5.0", "7.0", "8.0", "8.6"], cu111
    assert cu111["sm_unconfirmed"] == ["3.7", "6.0", "7.5"], cu111
    out = run_cli("matrix", "torch==1.8.0", "--offline")
    assert "sm_50 sm_70 sm_80 sm_86, perhaps sm_37 sm_60 sm_75" in " ".join(out.stdout.split()), out.stdout


def test_matrix_and_plan_know_torch_1_0_0_cu100_on_windows(run_cli: Cli) -> None:
    # windows/cuda100.bat: 3.5;5.0+PTX;6.0;6.1;7.0 until 5c53299b added 7.5 the day of the release
    out = run_cli("matrix", "torch==1.0.0", "--os", "windows", "--json", "--offline")
    assert out.returncode == 0, out.stderr
    (row,) = json.loads(out.stdout)["releases"]
    (cu100,) = [r for r in row["install"] if r["cuda"] == "10.0"]
    assert cu100["sm"] == ["3.5", "5.0", "6.0", "6.1", "7.0"], cu100
    assert (cu100["ptx"], cu100["sm_unconfirmed"]) == (["5.0"], ["7.5"]), cu100
    # sm_70's SASS runs on sm_75 in either state: a plain pass, the code it rests on named
    out = run_cli(
        "plan", "torch==1.0.0", "--cuda", "10.0", "--no-detect", "--offline", "--os", "windows", "--python", "3.6",
        "--driver", "411.31", "--gpu", "7.5",
    )  # fmt: skip
    line = next(x for x in out.stdout.splitlines() if "compute_capability" in x)
    assert line.split()[0] == "ok" and "sm_35" in line, out.stdout


def test_a_recipe_whose_unconfirmed_code_repeats_its_certain_code_is_one_line_exit_2(
    run_cli: Cli, tmp_path: Path
) -> None:
    text = packaged_matrix_path().read_text(encoding="utf-8")
    stated = 'sm = ["5.0", "7.0", "8.0", "8.6"], sm_unconfirmed = ["3.7", "6.0", "7.5"]'
    assert text.count(stated) == 1
    bad = tmp_path / "m.toml"
    bad.write_text(text.replace(stated, 'sm = ["5.0", "7.0", "8.0", "8.6"], sm_unconfirmed = ["3.7", "5.0"]'))
    out = run_cli("matrix", "torch==1.8.0", "--matrix", str(bad))
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr, out.stderr
    assert f"{bad}:" in out.stderr and "sm_unconfirmed" in out.stderr and "5.0" in out.stderr, out.stderr


@pytest.mark.parametrize(
    ("driver", "said"),
    [
        # 450.80.02 runs CUDA 11.1 only through minor-version compatibility: it cannot compile 11.1's PTX, so only
        # a state that carries sm_60 runs here -- a doubt, not the failure the certain PTX alone gives
        ("450.80.02", "may lack code for sm_61"),
        # 460 compiles the PTX every state carries: it runs in every state, at worst after a JIT at first use
        ("460.32.03", "the driver compiles their PTX (compute_50)"),
    ],
)
def test_ptx_every_state_carries_decides_unless_the_driver_cannot_compile_it(
    run_cli: Cli, tmp_path: Path, driver: str, said: str
) -> None:
    text = packaged_matrix_path().read_text(encoding="utf-8")
    stated = 'sm = ["5.0", "7.0", "8.0", "8.6"], sm_unconfirmed = ["3.7", "6.0", "7.5"]'
    m = tmp_path / "m.toml"
    m.write_text(text.replace(stated, 'sm = ["5.0"], ptx = ["5.0"], sm_unconfirmed = ["6.0"]'))
    out = run_cli(*LINUX_CU111, "--matrix", str(m), "--driver", driver, "--gpu", "6.1")
    assert out.returncode == 1, out.stdout + out.stderr
    table = _table(out.stdout)
    assert "warn     compute_capability" in table and said in table, out.stdout
