"""`explain` through the planner: the machine as the flags and the log describe it, and the release the log names,
planned as `plan` plans it there; the planner's first option leads the fixes, with its matrix row as its source.
Real messages from tests/data/explain_messages.toml."""

from __future__ import annotations

import json
from collections.abc import Callable
from subprocess import CompletedProcess
from typing import Any

from .messages import real_message

RunCli = Callable[..., CompletedProcess[str]]

NO_KERNEL = real_message("https://github.com/facebookresearch/detectron2/issues/235")
GT_710 = real_message("https://github.com/johnolafenwa/DeepStack/issues/129")


def _explain(run_cli: RunCli, *args: str, text: str) -> dict[str, Any]:
    r = run_cli("explain", "--json", "--no-detect", *args, input=text)
    assert r.returncode == 1, r.stderr
    diagnosis: dict[str, Any] = json.loads(r.stdout)["diagnoses"][0]
    return diagnosis


def _first_option(run_cli: RunCli, *args: str) -> dict[str, Any]:
    r = run_cli("plan", "--json", "--no-detect", *args)
    option: dict[str, Any] = json.loads(r.stdout)["requirements"][0]["options"][0]
    return option


def _commands(option: dict[str, Any]) -> list[str]:
    return [s["command"] or s["description"] for s in option["steps"]]


def _row_source(run_cli: RunCli, spec: str) -> str:
    return str(json.loads(run_cli("matrix", spec, "--json").stdout)["releases"][0]["source"])


def test_a_k80_named_by_flag_gets_the_release_plan_picks_for_it(run_cli: RunCli) -> None:
    # issue #25: `explain --gpu "Tesla K80" "...no kernel image..."` gave "find the GPU's compute capability"
    d = _explain(run_cli, "--gpu", "Tesla K80", text=NO_KERNEL)
    option = _first_option(run_cli, "torch", "--gpu", "Tesla K80")
    # the release is the matrix's to say (the newest torch whose CUDA 11 build carries sm_37 code, #21)
    version = option["title"].removeprefix("use torch ").split(" ", 1)[0]
    said = f"use torch {version} instead: it runs with what this machine has"
    # (a cuDNN that lists compute capability 5.0 and newer is a caveat the title names, #21)
    assert option["title"] in (said, f"{said}, with cuDNN turned off (cuDNN 9.1 does not support sm_37)")
    assert version.startswith("2.")
    first = d["fixes"][0]
    # what the build needs (a K80's last branch, 470, runs CUDA 11.8 through minor-version compatibility),
    # then the commands
    assert first == (
        f"for this machine (Tesla K80, sm_37 (--gpu)): use torch {version} instead, its CUDA 11.8 build; its wheels "
        "carry code for sm_37; it needs driver >= 450.80.02 (CUDA 11.x minor-version compatibility; >= 520.61.05 for "
        "full support): " + "; then ".join(f"`{c}`" for c in _commands(option))
    )
    assert not d["fixes"][0].startswith("find the GPU's compute capability")
    # the source of that fix is the matrix row of that release, not the page the message was copied from
    assert d["plan"]["fix_source"] == _row_source(run_cli, f"torch=={version}") != d["source"]
    text = run_cli("explain", "--no-detect", "--gpu", "Tesla K80", NO_KERNEL).stdout
    assert f"  Source of fix 1: {d['plan']['fix_source']}\n" in text
    # at 80 columns the command, wider than a line, stands whole on a line of its own, to be pasted
    text = run_cli("explain", "--no-detect", "--gpu", "Tesla K80", NO_KERNEL, env={"COLUMNS": "80"}).stdout
    assert all(f"\n         {c}\n" in text for c in _commands(option))


def test_the_gpu_and_the_python_a_message_prints_describe_the_machine(run_cli: RunCli) -> None:
    # DeepStack#129: "NVIDIA GeForce GT 710 with CUDA capability sm_35", from /usr/local/lib/python3.7/...
    d = _explain(run_cli, text=GT_710)
    option = _first_option(run_cli, "torch", "--gpu", "3.5", "--python", "3.7")
    first = d["fixes"][0]
    assert first.startswith("for this machine (a GPU of sm_35 (line 2), Python 3.7 (line 1)): ")
    assert all(f"`{c}`" in first for c in _commands(option)) and "carry code for sm_35" in first
    # a flag says more than the log: --python 3.8 plans for 3.8
    d = _explain(run_cli, "--python", "3.8", text=GT_710)
    assert "Python 3.8 (--python)" in d["fixes"][0]


def test_a_release_the_log_names_is_planned_on_the_machine_given(run_cli: RunCli) -> None:
    log = f"Successfully installed torch-2.1.0 numpy-1.26.4\n{NO_KERNEL}\n"
    machine = ("--gpu", "Tesla T4", "--driver", "470.82.01", "--python", "3.10")
    d = _explain(run_cli, *machine, text=log)
    assert d["plan"]["package"] == "torch" and d["plan"]["version"] == "2.1.0"
    assert d["plan"]["build"] == "CUDA 12.1" and d["plan"]["verdict"] == "cannot run"
    option = _first_option(run_cli, "torch==2.1.0", *machine)
    assert option["title"] == "use the CUDA 11.8 build of torch 2.1.0"
    assert d["fixes"][0] == (
        "for torch 2.1.0 (named on line 1): use the CUDA 11.8 build of torch 2.1.0; its wheels carry code for sm_75; "
        f"it needs driver >= 520.61.05 (driver 470.82.01 runs it with a caveat): `{_commands(option)[0]}`"
    )


def test_versions_collect_env_prints_describe_the_machine(run_cli: RunCli) -> None:
    # the lines of `python -m torch.utils.collect_env` a bug report pastes above its traceback
    log = (
        "PyTorch version: 2.5.1+cu124\n"
        "CUDA used to build PyTorch: 12.4\n"
        "Python version: 3.11.9 (main, Apr  6 2024, 17:59:24) [GCC 11.4.0] (64-bit runtime)\n"
        "GPU models and configuration: GPU 0: Tesla K80\n"
        "Nvidia driver version: 470.82.01\n"
        f"{NO_KERNEL}\n"
    )
    d = _explain(run_cli, text=log)
    assert (d["plan"]["package"], d["plan"]["version"], d["plan"]["verdict"]) == ("torch", "2.5.1+cu124", "cannot run")
    assert d["plan"]["machine"] == "Tesla K80, sm_37 (line 4), driver 470.82.01 (line 5), Python 3.11 (line 3)"
    option = _first_option(
        run_cli, "torch==2.5.1+cu124", "--gpu", "Tesla K80", "--driver", "470.82.01", "--python", "3.11"
    )
    assert d["plan"]["option"] == option["title"]
    assert d["fixes"][0].startswith(f"for torch 2.5.1+cu124 (named on line 1): {option['title'].split(': ', 1)[-1]}")
