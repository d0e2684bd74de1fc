"""Describing a machine you are not on: flags and DNNRESOLVE_* variables override detection."""

from __future__ import annotations

import pytest

from dnnresolve.detect import detect_runtime, runtime_from_flags
from dnnresolve.errors import UserError
from dnnresolve.machine import Runtime
from dnnresolve.matrix import load_matrix

from .machines import K20M_ENV, MACHINES


def test_flags_override_what_was_detected() -> None:
    base = detect_runtime(str(MACHINES / "k20m"), K20M_ENV, timeout=2)
    rt = runtime_from_flags(base, cudnn="5103", python="3.5", gpu="Tesla K20m", matrix=load_matrix())
    assert rt.active_cudnn is not None and str(rt.active_cudnn.version) == "5.1.3"
    assert [str(c.version) for c in rt.cudnn if c.loads_first] == ["5.1.3"]
    assert rt.sources["cudnn"] == "given (--cudnn)"
    assert str(rt.python) == "3.5"
    assert [str(g.compute_capability) for g in rt.gpus] == ["3.5"]
    assert str(base.python) == "3.6"  # the base is left as it was


def test_gpu_by_compute_capability_and_unknown_name() -> None:
    rt = runtime_from_flags(Runtime(), gpu="sm_35")
    assert [str(g.compute_capability) for g in rt.gpus] == ["3.5"]
    with pytest.raises(UserError, match=r"--gpu 'Banana X': not a GPU the matrix knows"):
        runtime_from_flags(Runtime(), gpu="Banana X", matrix=load_matrix())


def test_environment_overrides_apply_to_detection() -> None:
    env = {"DNNRESOLVE_DRIVER": "384.81", "DNNRESOLVE_CUDA": "9.0", "DNNRESOLVE_GPU": "6.1", "DNNRESOLVE_PYTHON": "3.6"}
    rt = detect_runtime(str(MACHINES / "nogpu"), env, timeout=2)
    assert str(rt.driver) == "384.81" and rt.sources["driver"] == "given (DNNRESOLVE_DRIVER)"
    assert [str(c.version) for c in rt.cuda] == ["9.0"]
    assert [str(g.compute_capability) for g in rt.gpus] == ["6.1"]
    assert str(rt.python) == "3.6"


def test_bad_override_names_the_variable() -> None:
    with pytest.raises(UserError, match=r"DNNRESOLVE_CUDNN 'five': "):
        detect_runtime(str(MACHINES / "nogpu"), {"DNNRESOLVE_CUDNN": "five"}, timeout=2)
    with pytest.raises(UserError, match=r"--os 'macos': expected one of linux, windows"):
        runtime_from_flags(Runtime(), os="macos")


def test_flags_that_name_a_component_skip_its_probes(run_cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """--cuda with --cudnn, and --driver with --gpu, replace detection: nvcc and nvidia-smi are not even run."""
    import os

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ran = tmp_path / "ran"
    for program in ("nvcc", "nvidia-smi"):
        script = bin_dir / program
        script.write_text(f"#!/bin/sh\necho {program} >> {ran}\nexit 1\n")
        script.chmod(0o755)
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "DNNRESOLVE_NVML": "0"}
    flags = ("--cuda", "8.0", "--cudnn", "5.0.5", "--driver", "375.26", "--gpu", "K20m", "--json")
    r = run_cli("plan", "tensorflow-gpu==1.0", *flags, env=env)
    assert r.returncode == 1, r.stderr
    assert not ran.exists(), ran.read_text()
    r = run_cli("plan", "tensorflow-gpu==1.0", "--json", env=env)  # without the flags both are asked
    assert ran.exists() and {"nvcc", "nvidia-smi"} <= set(ran.read_text().split())


def test_a_runtime_given_flags_is_a_copy_that_shares_nothing_mutable_with_its_base() -> None:
    # the copy is made field by field (deepcopy cost every start-up its import and a millisecond, #26): it must stay
    # equal to deepcopy's, whatever fields Runtime gains
    import copy

    from dnnresolve.detect.overrides import copy_runtime

    base = detect_runtime(str(MACHINES / "k20m"), K20M_ENV, timeout=2)
    base.notes.append("a note")
    base.modules = [*base.modules]
    assert base.gpus and base.cudnn and base.sources  # a machine with something in each container
    rt = copy_runtime(base)
    assert rt == copy.deepcopy(base)
    for name, value in vars(base).items():
        if isinstance(value, (list, dict, set)):
            assert getattr(rt, name) is not value, name
            # what the containers hold is immutable (frozen records, versions, strings): hashable
            for item in value.values() if isinstance(value, dict) else value:
                hash(item)
        else:
            hash(value)
    flagged = runtime_from_flags(base, cudnn="5103", gpu="sm_70")
    assert flagged.sources["cudnn"] == "given (--cudnn)" and "given" not in base.sources.get("cudnn", "")
    assert [str(g.compute_capability) for g in base.gpus] == ["3.5"]
