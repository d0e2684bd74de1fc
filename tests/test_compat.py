"""The compatibility rules, each as its framework or NVIDIA states it."""

from __future__ import annotations

import pytest

from dnnresolve.compat import CudnnRule, DriverTable, binary_runs_on, cudnn_compatible, cudnn_rule_text
from dnnresolve.matrix import load_matrix
from dnnresolve.versions import ComputeCapability, CudaVersion, CudnnVersion, DriverVersion

V = CudnnVersion.parse


@pytest.mark.parametrize(
    ("rule", "build", "runtime", "ok"),
    [
        # Early TensorFlow: major.minor must match exactly, even for cuDNN 7 (a TF 1.6 build for 7.0.5
        # refused a 7.1.1 runtime); patch levels do not matter.
        (CudnnRule.EXACT_SERIES, "5.1.3", "5.0.5", False),
        (CudnnRule.EXACT_SERIES, "5.1.3", "5.1.10", True),
        (CudnnRule.EXACT_SERIES, "7.0.5", "7.1.1", False),
        # Later TensorFlow: same major, equal or higher minor.
        (CudnnRule.SAME_MAJOR_NEWER_MINOR, "7.0.5", "7.1.1", True),
        (CudnnRule.SAME_MAJOR_NEWER_MINOR, "8.1.0", "8.0.5", False),  # "8.0.5 but source was compiled with: 8.1.0"
        (CudnnRule.SAME_MAJOR_NEWER_MINOR, "7.6.5", "8.0.5", False),
        # PyTorch: majors equal; exact minor below cuDNN 7; newer minor accepted from 7 on.
        (CudnnRule.TORCH, "8.9.2", "8.5.0", False),  # "compiled against (8, 9, 2) but found runtime version (8, 5, 0)"
        (CudnnRule.TORCH, "8.5.0", "8.9.2", True),
        (CudnnRule.TORCH, "6.0.21", "6.1.0", False),
        (CudnnRule.TORCH, "9.1.0", "8.9.7", False),
        # JAX: runtime at least as new as the build: "Found cuDNN version 8600, but JAX was built against 8800".
        (CudnnRule.AT_LEAST, "8.8.0", "8.6.0", False),
        (CudnnRule.AT_LEAST, "8.8.0", "9.1.0", True),
        (CudnnRule.AT_LEAST, "8.8.1", "8.8.0", True),  # patch levels never matter
        # A build stated by its major alone (ONNX Runtime: "cuDNN 9.x"; "built with cuDNN 8.x is not compatible
        # with cuDNN 9.x, and vice versa"): any release of that major, whatever the rule.
        (CudnnRule.EXACT_SERIES, "9.x", "9.1.0", True),
        (CudnnRule.EXACT_SERIES, "9.x", "8.9.7", False),
        (CudnnRule.SAME_MAJOR_NEWER_MINOR, "8.x", "8.2.4", True),
        (CudnnRule.TORCH, "8.x", "9.0.0", False),
    ],
)
def test_cudnn_rules(rule: CudnnRule, build: str, runtime: str, ok: bool) -> None:
    assert cudnn_compatible(V(build), V(runtime), rule) is ok


def test_rule_text_says_what_to_load() -> None:
    assert "5.1.x" in cudnn_rule_text(V("5.1.3"), CudnnRule.EXACT_SERIES)
    assert "at least 8.1" in cudnn_rule_text(V("8.1.0"), CudnnRule.SAME_MAJOR_NEWER_MINOR)
    assert cudnn_rule_text(V("9.x"), CudnnRule.EXACT_SERIES) == "cuDNN 9.x (any 9.x release)"


# NVIDIA's "CUDA Toolkit and Corresponding Driver Versions" and minor-version compatibility tables
# (https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/, https://docs.nvidia.com/deploy/cuda-compatibility/).
TABLE = DriverTable(
    toolkits=(
        (CudaVersion.parse("8.0.44"), DriverVersion.parse("367.48")),
        (CudaVersion.parse("8.0.61"), DriverVersion.parse("375.26")),
        (CudaVersion.parse("10.1.105"), DriverVersion.parse("418.39")),
        (CudaVersion.parse("11.0.3"), DriverVersion.parse("450.51.06")),
        (CudaVersion.parse("11.8.0"), DriverVersion.parse("520.61.05")),
        (CudaVersion.parse("12.1.0"), DriverVersion.parse("530.30.02")),
    ),
    families=((11, DriverVersion.parse("450.80.02")), (12, DriverVersion.parse("525.60.13"))),
)


def test_min_driver_for_a_series_is_its_first_release() -> None:
    assert str(TABLE.min_driver_for(CudaVersion.parse("8.0"))) == "367.48"
    assert str(TABLE.min_driver_for(CudaVersion.parse("8.0.61"))) == "375.26"
    assert TABLE.min_driver_for(CudaVersion.parse("7.0")) is None


def test_driver_check_full_minor_compat_and_too_old() -> None:
    d = DriverVersion.parse
    assert TABLE.check(d("375.26"), CudaVersion.parse("8.0")).how == "full"
    # 11.8 needs 520.61.05, but CUDA 11 minor-version compatibility runs it from 450.80.02 on.
    v = TABLE.check(d("470.82.01"), CudaVersion.parse("11.8"))
    assert v.ok and v.how == "minor_version_compat"
    # Before CUDA 11 there is no minor-version compatibility.
    assert not TABLE.check(d("410.48"), CudaVersion.parse("10.1")).ok
    # A 12.x build never runs on an 11-era driver.
    assert TABLE.check(d("470.82.01"), CudaVersion.parse("12.1")).how == "too_old"


def test_a_branch_whose_patch_level_decides_says_so() -> None:
    d, cuda = DriverVersion.parse, CudaVersion.parse
    # 530.x: a 530.30.02 or newer runs 12.1 fully, an older 530.x through 12.x minor-version compatibility
    v = TABLE.check(d("530"), cuda("12.1"))
    assert v.how == "depends" and v.ok  # every 530.x runs it, one way or the other
    assert v.note.startswith("driver 530.x: runs CUDA 12.1 if it is 530.30.02 or newer; if older, only through")
    assert v.note.endswith("give the full version (nvidia-smi) to know")
    # 450.x: from 450.51.06 on it runs 11.0; below it, not at all -- a guess either way, never "too old"
    v = TABLE.check(d("450"), cuda("11.0"))
    assert v.how == "depends" and not v.ok and v.hows == {"too_old", "full"}
    assert v.note.startswith("driver 450.x: runs CUDA 11.0 if it is 450.51.06 or newer; if older, not at all")


def test_a_verdict_that_holds_for_the_whole_branch_is_given_plainly() -> None:
    d, cuda = DriverVersion.parse, CudaVersion.parse
    assert TABLE.check(d("470"), cuda("12.1")).how == "too_old"  # no 470.x runs CUDA 12
    assert TABLE.check(d("535"), cuda("12.1")).how == "full"  # every 535.x does
    assert TABLE.check(d("470"), cuda("11.8")).how == "minor_version_compat"
    assert TABLE.check(d("375"), cuda("8.0")).how == "full"


def test_every_branch_against_the_matrix_table_is_too_old_only_when_no_driver_of_it_runs() -> None:
    # for each CUDA toolkit and each branch the table names: a branch verdict is the verdict of all its drivers
    # (the branch's first, 535.0, and each minimum the table names inside it), "depends" where they differ
    m = load_matrix()
    for os_name in ("linux", "windows"):
        table = m.driver_table(os_name)
        branches = sorted({driver.major for driver in table.drivers})
        for toolkit, _ in table.toolkits:
            for major in branches:
                named = [x for x in table.drivers if x.major == major and not x.is_branch]
                inside = [DriverVersion((major, 0, 0)), *named]
                seen = {table.check(x, toolkit).how for x in inside}
                verdict = table.check(DriverVersion((major,)), toolkit)
                assert verdict.hows == seen, (os_name, toolkit, major)
                assert (verdict.how == "depends") is (len(seen) > 1), (os_name, toolkit, major)
                assert (verdict.how == "too_old") is (seen == {"too_old"}), (os_name, toolkit, major)


def test_newest_cuda_for_driver() -> None:
    assert str(TABLE.newest_cuda_for(DriverVersion.parse("375.26"))) == "8.0"
    assert str(TABLE.newest_cuda_for(DriverVersion.parse("535.104.05"))) == "12.1"


def test_binary_compatibility() -> None:
    cc = ComputeCapability.parse
    assert binary_runs_on(cc("8.6"), [cc("8.0")])  # same major, higher minor
    assert not binary_runs_on(cc("3.5"), [cc("5.0"), cc("6.0"), cc("7.0")])  # a K20m and sm_50+ wheels
    assert binary_runs_on(cc("9.0"), [cc("8.0")], ptx=[cc("8.0")])  # PTX JIT
    assert not binary_runs_on(cc("7.5"), [cc("8.0")])


def test_arch_specific_code_runs_on_that_capability_only() -> None:
    cc = ComputeCapability.parse
    assert binary_runs_on(cc("10.0"), [], exact=[cc("10.0")])
    assert not binary_runs_on(cc("10.3"), [], exact=[cc("10.0")])  # sm_100a is not sm_100
    assert binary_runs_on(cc("10.3"), [cc("10.0")])  # plain sm_100 runs on a later minor
