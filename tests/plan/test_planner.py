"""Solver and planner on plain objects, against the packaged matrix: what a user on each machine is told."""

from __future__ import annotations

import json
import shlex
from typing import Any

from dnnresolve.machine import CudaInstall, CudnnInstall, Gpu, Module, Runtime
from dnnresolve.matrix import load_matrix
from dnnresolve.matrix.parse import parse_matrix
from dnnresolve.plan import Plan, make_plan
from dnnresolve.render.plan import to_json, to_sh
from dnnresolve.solve import solve
from dnnresolve.solve.conflicts import specifiers_intersect
from dnnresolve.solve.results import Status
from dnnresolve.specs import parse_requirement
from dnnresolve.versions import ComputeCapability, CudaVersion, CudnnVersion, DriverVersion, PythonVersion


def k20m_node(python: str = "3.6", modules: bool = True) -> Runtime:
    """The classic cluster node: Tesla K20m, driver 375.26, CUDA 8.0, cuDNN 5.0.5 loaded."""
    rt = Runtime(
        os="linux",
        driver=DriverVersion.parse("375.26"),
        gpus=[Gpu("Tesla K20m", ComputeCapability.parse("3.5"))],
        cuda=[CudaInstall(CudaVersion.parse("8.0.61"), "/usr/local/cuda-8.0")],
        cudnn=[CudnnInstall(CudnnVersion.from_encoded(5005), "/opt/apps/cudnn/5.0/lib64", loads_first=True)],
        python=PythonVersion.parse(python),
    )
    if modules:
        rt.modules = [Module("cuda", "8.0", loaded=True), Module("cudnn", "5.0", loaded=True), Module("cudnn", "5.1")]
    return rt


def plan_for(spec: str, rt: Runtime) -> Plan:
    m = load_matrix()
    return make_plan(solve([parse_requirement(spec)], rt, m), rt, m)


def test_classic_case_names_cudnn_and_loads_the_module_first() -> None:
    plan = plan_for("tensorflow-gpu==1.0", k20m_node())
    rp = plan.requirements[0]
    best = rp.result.best
    assert best is not None
    assert [c.component for c in best.failures] == ["cudnn"]
    cudnn = best.check("cudnn")
    assert cudnn is not None and cudnn.found == "5.0.5" and "5.1" in cudnn.needed
    first = rp.options[0]
    assert first.steps[0].shell == "module load cudnn/5.1"
    assert not first.needs_root
    assert first.steps[-1].shell == "python -m pip install tensorflow-gpu==1.0.0"
    assert not plan.satisfied


def test_without_modules_the_manual_archive_is_named() -> None:
    plan = plan_for("tensorflow-gpu==1.0", k20m_node(modules=False))
    shells = [s.description for o in plan.requirements[0].options for s in o.steps]
    assert any("cudnn-8.0-linux-x64-v5.1.tgz" in d for d in shells)


def test_python_too_new_gets_an_env_with_a_python_that_has_wheels() -> None:
    plan = plan_for("tensorflow-gpu==1.0", k20m_node(python="3.11"))
    rp = plan.requirements[0]
    best = rp.result.best
    assert best is not None
    assert {c.component for c in best.failures} == {"python", "cudnn"}
    first = [s.shell for s in rp.options[0].steps]
    assert first[0] == "module load cudnn/5.1"
    assert "conda create -y -n tensorflow-gpu-1.0.0 python=3.6" in first
    pip = "python -m pip install tensorflow-gpu==1.0.0"
    assert first.index("conda activate tensorflow-gpu-1.0.0") < first.index(pip)


def test_machine_that_runs_it_as_is() -> None:
    rt = k20m_node()
    rt.cudnn = [CudnnInstall(CudnnVersion.parse("5.1.10"), "/opt/apps/cudnn/5.1/lib64", loads_first=True)]
    plan = plan_for("tensorflow-gpu==1.0", rt)
    rp = plan.requirements[0]
    assert rp.result.best is not None and rp.result.best.ok
    assert rp.options[0].steps[-1].shell == "python -m pip install tensorflow-gpu==1.0.0"
    assert not plan.satisfied  # not installed yet
    from dnnresolve.machine import InstalledPackage

    rt.packages = [InstalledPackage("tensorflow-gpu", "1.0.0")]
    assert plan_for("tensorflow-gpu==1.0", rt).satisfied


def test_unknown_package_is_not_checked() -> None:
    plan = plan_for("numpy==1.26", k20m_node())
    assert "not in the compatibility matrix" in plan.requirements[0].message
    assert not plan.requirements[0].options


def test_json_and_sh_outputs() -> None:
    rt = k20m_node(python="3.11")
    plan = plan_for("tensorflow-gpu==1.0", rt)
    data = json.loads(json.dumps(to_json(plan, rt)))
    req = data["requirements"][0]
    assert req["release"] == "1.0.0" and req["gap"] == ["python", "cudnn"]
    assert req["options"][0]["steps"][0]["command"] == "module load cudnn/5.1"
    assert all(c["source"] for c in req["checks"])
    script = to_sh(plan)
    assert script.startswith("#!/usr/bin/env bash") and "module load cudnn/5.1" in script
    for line in script.splitlines():
        if line and not line.startswith("#") and "$(" not in line:
            shlex.split(line)  # every command line is valid shell


def test_driver_checks_use_minor_version_compatibility() -> None:
    rt = k20m_node()
    rt.driver = DriverVersion.parse("367.48")
    best = plan_for("tensorflow-gpu==1.0", rt).requirements[0].result.best
    assert best is not None and best.check("driver").status is Status.OK  # type: ignore[union-attr]
    rt.driver = DriverVersion.parse("352.31")
    plan = plan_for("tensorflow-gpu==1.0", rt)
    best = plan.requirements[0].result.best
    assert best is not None and best.check("driver").status is Status.FAIL  # type: ignore[union-attr]
    assert any(o.needs_root for o in plan.requirements[0].options)


def test_specifier_intersection_as_pip_would_see_it() -> None:
    from packaging.specifiers import SpecifierSet as S

    assert not specifiers_intersect(S("==12.1.3.1"), S("==12.2.5.6"))
    assert specifiers_intersect(S(">=9.1,<10"), S("==9.1.0.70"))
    assert not specifiers_intersect(S(">=9.1,<10"), S(">=8.9,<9"))
    assert specifiers_intersect(S(">=8,<9"), S(">=8.5"))
    assert not specifiers_intersect(S("<9"), S(">9"))


def modern_node(gpu: str, cc: str, driver: str, python: str = "3.11") -> Runtime:
    return Runtime(
        os="linux",
        driver=DriverVersion.parse(driver),
        gpus=[Gpu(gpu, ComputeCapability.parse(cc))],
        python=PythonVersion.parse(python),
    )


def windows_node(driver: str, python: str, **more: Any) -> Runtime:
    """A Windows desktop with a GeForce GTX 1080."""
    return Runtime(
        os="windows",
        driver=DriverVersion.parse(driver),
        gpus=[Gpu("GeForce GTX 1080", ComputeCapability.parse("6.1"))],
        python=PythonVersion.parse(python),
        **more,
    )


def test_gpu_too_old_for_modern_torch_gets_the_newest_torch_that_carries_sm_35() -> None:
    rt = modern_node("Tesla K20m", "3.5", "470.82.01", python="3.10")
    rp = plan_for("torch==2.1.0", rt).requirements[0]
    best = rp.result.best
    assert best is not None and "compute_capability" in {c.component for c in best.failures}
    first = rp.options[0]
    assert first.title.startswith("use torch 1.3.0 instead")  # the last release whose wheels carry sm_35
    assert [s.shell for s in first.steps][:2] == [
        "conda create -y -n torch-1.3.0 python=3.7",
        "conda activate torch-1.3.0",
    ]


def test_driver_too_old_for_cu121_gets_the_cu118_build() -> None:
    rt = modern_node("Tesla T4", "7.5", "470.82.01", python="3.10")
    result = plan_for("torch==2.1.0", rt).requirements[0]
    cu121 = next(c for c in result.result.candidates if c.cuda is not None and str(c.cuda) == "12.1")
    assert cu121.check("driver").status is Status.FAIL  # type: ignore[union-attr]
    # `pip install torch==2.1.0` gets PyPI's cu121 build: that is what the requirement is judged by
    best = result.result.best
    assert best is not None and str(best.cuda) == "12.1" and not best.ok
    # and the cu118 build, which runs through minor-version compatibility, is the first way out
    assert result.options[0].title == "use the CUDA 11.8 build of torch 2.1.0"
    assert "download.pytorch.org/whl/cu118" in result.options[0].steps[-1].shell


def test_brand_new_gpu_on_an_old_framework_moves_to_a_release_that_knows_it() -> None:
    rt = modern_node("H100 80GB HBM3", "9.0", "550.54.15", python="3.8")
    rp = plan_for("torch==1.7.1", rt).requirements[0]
    best = rp.result.best
    assert best is not None
    gpu = best.check("compute_capability")
    assert gpu is not None and gpu.status is Status.FAIL and "sm_90" in gpu.reason
    first = rp.options[0]
    assert first.title.startswith("use torch 2.")
    assert first.steps[-1].argv[:4] == ("python", "-m", "pip", "install")


def test_pip_era_tensorflow_brings_its_own_cuda() -> None:
    rt = modern_node("A100-SXM4-40GB", "8.0", "535.104.05")
    rp = plan_for("tensorflow==2.15.1", rt).requirements[0]
    best = rp.result.best
    assert best is not None and best.ok and best.check("cuda") is None  # no system CUDA needed
    assert rp.options[0].steps[-1].shell == "python -m pip install 'tensorflow[and-cuda]==2.15.1'"
    # 2.15.0 is planned as itself, never as 2.15.1: its and-cuda extra asks for tensorrt==8.6.1.post1, which no
    # index serves (recorded from pip's resolver), and the plan says so
    rp = plan_for("tensorflow==2.15", rt).requirements[0]
    best = rp.result.best
    assert best is not None and str(best.release.version) == "2.15.0"
    install = best.check("install")
    assert install is not None and "tensorrt==8.6.1.post1" in install.reason
    # 2.15.1 only as an option of its own that says so (one of the same series, issue #21 Deliver 5)
    assert all(o.title.startswith("use tensorflow 2.15.1 instead") for o in rp.options if "2.15.1" in str(o.steps))


def test_a_release_covered_by_another_rows_name_is_planned_as_itself() -> None:
    """A row stands for a stretch of releases (covers); cupy-cuda80 6.1.0 is answered by the 6.5.0 row."""
    rt = modern_node("Tesla K80", "3.7", "470.57.02", python="3.6")
    rp = plan_for("cupy-cuda80==6.1.0", rt).requirements[0]
    best = rp.result.best
    assert best is not None and str(best.release.version) == "6.1.0"
    assert "python -m pip install cupy-cuda80==6.1.0" in [s.shell for o in rp.options for s in o.steps]
    # a recipe naming a build (Paddle's .post90 wheels) is not carried over to a release it does not name: 2.0.1 is
    # planned as itself, in the one build known to exist, PyPI's
    rp = plan_for("paddlepaddle-gpu==2.0.1", rt).requirements[0]
    best = rp.result.best
    assert best is not None and str(best.release.version) == "2.0.1" and str(best.cuda) == "10.2"
    assert {str(c.cuda) for c in rp.result.candidates} == {"10.2"}


def test_two_frameworks_whose_pinned_cuda_wheels_clash(run_cli) -> None:  # type: ignore[no-untyped-def]
    target = ("--no-detect", "--python", "3.11", "--driver", "550.54.15", "--gpu", "A100-SXM4-40GB")
    r = run_cli("plan", "torch==2.1.2", "tensorflow[and-cuda]==2.15.1", *target, "--json")
    assert r.returncode == 1
    conflicts = json.loads(r.stdout)["conflicts"]
    assert (
        "torch==2.1.2 needs nvidia-cublas-cu12==12.1.3.1 but tensorflow[and-cuda]==2.15.1 needs "
        "nvidia-cublas-cu12==12.2.5.6: pip cannot install both"
    ) in conflicts
    text = run_cli("plan", "torch==2.1.2", "tensorflow[and-cuda]==2.15.1", *target).stdout
    assert "tensorflow[and-cuda]==2.15.1 needs nvidia-cublas-cu12==12.2.5.6" in text  # extras print as written
    # A range that admits the other's pin is no clash: jax[cuda12] asks nvidia-cublas-cu12>=...
    r = run_cli("plan", "torch==2.1.2", "torch==2.1.2", *target, "--json")
    assert json.loads(r.stdout)["conflicts"] == []


def test_conda_option_only_where_the_recipe_states_its_pythons(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from dnnresolve.matrix import packaged_matrix_path
    from dnnresolve.matrix.parse import parse_matrix

    text = packaged_matrix_path().read_text()
    plain = parse_matrix(text, "m.toml")
    rt = modern_node("A100-SXM4-40GB", "8.0", "535.104.05", python="3.12")
    plan = make_plan(solve([parse_requirement("torch==1.13.1")], rt, plain), rt, plain)
    assert not any("conda packages" in o.title for o in plan.requirements[0].options)
    # The same row, with the Pythons its conda channel has builds for stated in the recipe.
    recipe = 'packages = ["pytorch==1.13.1", "pytorch-cuda=11.7"], channels = ["pytorch", "nvidia"]'
    stated = text.replace(recipe, recipe + ', python = ["3.8", "3.10"]')
    assert stated != text
    m = parse_matrix(stated, "m.toml")
    plan = make_plan(solve([parse_requirement("torch==1.13.1")], rt, m), rt, m)
    [conda] = [o for o in plan.requirements[0].options if "conda packages" in o.title]
    assert conda.steps[0].shell == (
        "conda create -y -n torch-1.13.1 -c pytorch -c nvidia python=3.10 pytorch==1.13.1 pytorch-cuda=11.7 "
        "torchvision==0.14.1 torchaudio==0.13.1"
    )


def test_module_naming_with_a_cuda_suffix_is_understood() -> None:
    rt = k20m_node()
    rt.modules = [
        Module("cuda", "8.0", loaded=True),
        Module("cudnn", "5.0-cuda8.0", loaded=True),
        Module("cudnn", "5.1-cuda7.5"),  # built for another CUDA: not this one
        Module("cudnn", "5.1-cuda8.0"),
    ]
    first = plan_for("tensorflow-gpu==1.0", rt).requirements[0].options[0]
    assert first.steps[0].shell == "module load cudnn/5.1-cuda8.0"
    assert any("module swap cudnn/5.0-cuda8.0 cudnn/5.1-cuda8.0" in n for n in first.notes)


def test_release_pypi_no_longer_serves_is_not_planned_as_a_pip_install() -> None:
    # onnxruntime-gpu 1.8.0: CUDA 11.0 / cuDNN 8.0 per ORT's table, but PyPI's files start at 1.11.0
    rt = Runtime(
        os="linux",
        driver=DriverVersion.parse("450.80.02"),
        gpus=[Gpu("Tesla T4", ComputeCapability.parse("7.5"))],
        cuda=[CudaInstall(CudaVersion.parse("11.0.3"), "/usr/local/cuda-11.0")],
        cudnn=[CudnnInstall(CudnnVersion.parse("8.0.5"), "/usr/local/cuda-11.0/lib64", loads_first=True)],
        python=PythonVersion.parse("3.8"),
    )
    plan = plan_for("onnxruntime-gpu==1.8.0", rt)
    steps = [s for o in plan.requirements[0].options for s in o.steps]
    assert not [s for s in steps if "onnxruntime-gpu==1.8.0" in s.argv]
    first = plan.requirements[0].options[0]
    assert first.title.endswith("but not with pip")
    assert first.steps[0].kind == "manual" and "no longer on PyPI" in first.steps[0].description
    # a release pip can still fetch keeps its plain install
    assert plan_for("onnxruntime-gpu==1.11.0", rt).requirements[0].options


def _machine(
    cuda: str = "",
    cudnn: str = "",
    driver: str = "470.57.02",
    cc: str = "7.0",
    python: str = "3.10",
    os: str = "linux",
    gpu: str = "GPU",
) -> Runtime:
    """A target machine with a GPU and driver, and a CUDA toolkit and cuDNN when given."""
    return Runtime(
        os=os,
        driver=DriverVersion.parse(driver),
        gpus=[Gpu(gpu, ComputeCapability.parse(cc))],
        cuda=[CudaInstall(CudaVersion.parse(cuda), f"/usr/local/cuda-{cuda}")] if cuda else [],
        cudnn=[CudnnInstall(CudnnVersion.parse(cudnn), "/usr/lib/x86_64-linux-gnu", loads_first=True)] if cudnn else [],
        python=PythonVersion.parse(python),
    )


def test_another_release_is_offered_in_the_build_its_own_plan_picks() -> None:
    rt = _machine(driver="470.82.01", cc="3.7", gpu="Tesla K80")
    rp = plan_for("torch>=2.1", rt).requirements[0]
    other = next(o for o in rp.options if o.title.startswith("use torch 1.12.1 instead"))
    # 1.12.1's cu102, cu113 and cu116 builds all carry sm_37 and driver 470 runs them: the default build (the
    # plain PyPI wheel's, CUDA 10.2 by its torch/version.py) first, as the plan for torch==1.12.1 itself picks.
    assert "torch==1.12.1+cu102" in other.steps[-1].shell
    assert "+cu102" in plan_for("torch==1.12.1", rt).requirements[0].options[0].steps[-1].shell


def test_each_cuda_build_is_held_to_its_own_cudnn() -> None:
    # Paddle 2.5's install page: CUDA 11.2 with cuDNN 8.2.1, CUDA 12.0 with cuDNN 8.9.1 (one release, two builds).
    ok = plan_for("paddlepaddle-gpu==2.5.2.post112", _machine("11.2", "8.2.1"))
    best = ok.requirements[0].result.best
    assert best is not None and str(best.cuda) == "11.2" and best.ok
    wrong = plan_for("paddlepaddle-gpu==2.5.2.post112", _machine("11.2", "8.1.1"))
    best = wrong.requirements[0].result.best
    assert best is not None and str(best.cuda) == "11.2"
    [cudnn] = [c for c in best.checks if c.component == "cudnn"]
    assert cudnn.status is Status.FAIL and "built against cuDNN 8.2" in cudnn.reason  # not the 12.0 build's 8.9


def test_a_cudnn_stated_by_major_accepts_its_minors_and_refuses_another_major() -> None:
    # ONNX Runtime 1.20: the CUDA 12.x build needs cuDNN 9.x; builds with cuDNN 8.x and 9.x do not mix.
    def verdict(cudnn: str) -> Status:
        rt = _machine("12.4", cudnn, driver="550.54.14", cc="8.6", python="3.11")
        best = plan_for("onnxruntime-gpu==1.20.0", rt).requirements[0].result.best
        assert best is not None and best.cuda is not None and best.cuda.major == 12
        return next(c.status for c in best.checks if c.component == "cudnn")

    assert verdict("9.1.0") is Status.OK and verdict("9.8.0") is Status.OK
    assert verdict("8.9.7") is Status.FAIL


def test_a_release_asked_for_under_a_name_the_framework_left_is_planned_under_its_own() -> None:
    rt = _machine("11.8", "8.6.0", driver="535.104.05", cc="8.0", python="3.11")
    rp = plan_for("tensorflow-gpu==2.12.0", rt).requirements[0]
    assert rp.result.best is None  # no tensorflow-gpu 2.12.0 row: the package stops at 2.11.0
    assert "newest under that name is 2.11.0" in rp.message and "tensorflow 2.12.0 satisfies it" in rp.message
    assert rp.options[0].title.startswith("install tensorflow 2.12.0 instead")
    assert rp.options[0].steps[-1].shell == "python -m pip install tensorflow==2.12.0"
    assert plan_for("tensorflow-gpu==9.9", rt).requirements[0].options == []  # nothing satisfies it anywhere


def test_a_jetson_board_is_not_offered_the_desktop_builds() -> None:
    rt = _machine("10.2", "8.2.1", cc="5.3", python="3.6")
    rt.system, rt.machine = "jetson", "aarch64"
    rp = plan_for("torch==1.10.0", rt).requirements[0]
    assert rp.result.best is not None
    [platform] = [c for c in rp.result.best.checks if c.component == "platform"]
    assert platform.status is Status.FAIL and "forums.developer.nvidia.com/t/pytorch-for-jetson" in platform.reason
    assert rp.options == []  # no pip line for an x86_64 wheel on a Jetson


def test_an_aarch64_server_is_warned_that_the_matrix_does_not_list_its_builds() -> None:
    rt = _machine("12.4", "9.1.0", driver="550.54.14", cc="9.0", python="3.11")
    rt.machine = "aarch64"
    best = plan_for("torch==2.4.0", rt).requirements[0].result.best
    assert best is not None
    [platform] = [c for c in best.checks if c.component == "platform"]
    assert platform.status is Status.WARN and "aarch64" in platform.reason
    rt.machine = "x86_64"
    best = plan_for("torch==2.4.0", rt).requirements[0].result.best
    assert best is not None and not [c for c in best.checks if c.component == "platform"]


def test_a_plan_with_unknown_checks_does_not_promise_the_machine_has_what_it_needs() -> None:
    rt = Runtime(os="linux", python=PythonVersion.parse("3.11"))  # no driver, no GPU known
    rp = plan_for("torch==2.1.0", rt).requirements[0]
    assert rp.options[0].title.startswith("install it: nothing known stands against it (driver")


def test_a_release_without_a_build_for_this_os_names_the_newest_that_has_one() -> None:
    rt = _machine(driver="560.94", cc="8.9", python="3.11", os="windows", gpu="NVIDIA GeForce RTX 4090")
    rp = plan_for("tensorflow==2.15.0", rt).requirements[0]
    assert rp.options == []
    assert rp.message.startswith("the matrix has no windows build of this release; its newest windows GPU build is ")
    assert "2.10.0" in rp.message and "CUDA 11.2" in rp.message and "cuDNN 8.1" in rp.message


def test_a_release_the_matrix_does_not_list_names_the_ones_around_it() -> None:
    """torch 2.1.7 never existed: the plan says so and names the releases on either side to plan instead."""
    rt = modern_node("Tesla T4", "7.5", "535.104.05")
    rp = plan_for("torch==2.1.7", rt).requirements[0]
    assert not rp.options
    assert "the matrix knows 2.1.2 below it and 2.2.0 above it" in rp.message
    assert "`dnnresolve plan torch==2.1.2`" in rp.message
    rp = plan_for("torch>=99", rt).requirements[0]  # not one release: nothing to be near
    assert rp.message == "no release of torch in the matrix satisfies torch>=99"


def test_a_python_the_release_does_not_state_but_its_wheels_install_on_is_a_warning() -> None:
    """MXNet 1.5.0 states Python 2.7 and 3.4-3.6 (classifiers); its wheels are py2.py3, so pip installs it on 3.7."""
    rt = modern_node("Tesla K80", "3.7", "418.87.00", python="3.7")
    rt.cuda = [CudaInstall(CudaVersion.parse("10.1"), "/usr/local/cuda-10.1")]
    rp = plan_for("mxnet-cu101==1.5.0", rt).requirements[0]
    best = rp.result.best
    assert best is not None and not best.failures
    py = best.check("python")
    assert py is not None and py.status is Status.WARN and "tagged for any CPython" in py.reason
    first = rp.options[0]
    assert first.title.startswith("install it: nothing stands against it; read the warnings first (python")
    assert first.steps[-1].shell == "python -m pip install mxnet-cu101==1.5.0"
    # a release whose wheels name their Pythons still fails on another one
    rt.python = PythonVersion.parse("3.11")
    tf = plan_for("tensorflow-gpu==1.0.0", rt).requirements[0].result.best
    assert tf is not None and tf.check("python") is not None and tf.check("python").status is Status.FAIL


def test_a_build_whose_pip_recipe_names_its_pythons_sends_another_python_to_a_new_environment() -> None:
    """TF 2.14 has wheels for 3.11, but its and-cuda extra pins a tensorrt with no 3.11 wheel (the recipe says
    3.9, 3.10): on 3.11 the plan is a 3.10 environment, not a pip command that cannot resolve."""
    rt = modern_node("A100-SXM4-40GB", "8.0", "535.104.05", python="3.11")
    rp = plan_for("tensorflow==2.14.1", rt).requirements[0]
    best = rp.result.best
    assert best is not None
    assert best.check("python") is not None and best.check("python").status is Status.OK  # type: ignore[union-attr]
    install = best.check("install")
    assert install is not None and install.status is Status.FAIL and "tensorrt" in install.reason
    assert rp.options[0].steps[0].shell == "conda create -y -n tensorflow-2.14.1 python=3.10"
    rt.python = PythonVersion.parse("3.10")
    assert plan_for("tensorflow==2.14.1", rt).requirements[0].result.best.check("install") is None  # type: ignore[union-attr]


def test_a_laptop_mx450_is_known_and_runs_the_default_torch_2_7_wheel() -> None:
    gpu = load_matrix().gpu("NVIDIA GeForce MX450")  # as nvidia-smi names it
    assert gpu is not None and str(gpu.compute_capability) == "7.5"
    rt = modern_node("NVIDIA GeForce MX450", "7.5", "576.02")
    rp = plan_for("torch==2.7.0", rt).requirements[0]
    best = rp.result.best
    assert best is not None and str(best.cuda) == "12.6" and best.ok
    cc = best.check("compute_capability")
    assert cc is not None and cc.status is Status.OK and cc.reason == "wheels carry code for sm_75"
    # read from the PyPI wheel itself (scripts/verify_archs.py)
    assert cc.needed == "sm_50, sm_60, sm_70, sm_75, sm_80, sm_86, sm_90"


def test_a_kepler_k80_is_told_the_default_torch_2_7_wheel_has_no_code_for_it() -> None:
    rt = modern_node("Tesla K80", "3.7", "470.82.01", python="3.10")
    rp = plan_for("torch==2.7.0", rt).requirements[0]
    cu126 = next(c for c in rp.result.candidates if c.cuda is not None and str(c.cuda) == "12.6")
    cc = cu126.check("compute_capability")
    assert cc is not None and cc.status is Status.FAIL
    assert cc.reason == "wheels carry sm_50, sm_60, sm_70, sm_75, sm_80, sm_86, sm_90; none runs on sm_37"
    # the default wheel is what `pip install torch==2.7.0` gets, and it is judged as such; the first option is
    # a build that carries code for sm_37
    best = rp.result.best
    assert best is not None and str(best.cuda) == "12.6" and not best.ok
    first = rp.options[0]
    assert first.title == "use the CUDA 11.8 build of torch 2.7.0"


def test_torch_1_13_0_wheels_carry_sm_86() -> None:
    rt = modern_node("NVIDIA GeForce RTX 3090", "8.6", "525.60.13", python="3.10")
    best = plan_for("torch==1.13.0", rt).requirements[0].result.best
    assert best is not None and str(best.cuda) == "11.7"
    cc = best.check("compute_capability")
    assert cc is not None and cc.status is Status.OK and cc.reason == "wheels carry code for sm_86"


PTX_ROW = """
[[framework]]
package = "tensorflow"
version = "2.15.0"
os = ["linux"]
python = ["3.11"]
cuda = ["12.2"]
sm = ["5.0", "6.0", "7.0", "7.5"]
ptx = ["8.0"]
source = "https://pypi.org/project/tensorflow/2.15.0/"

[[cuda]]
version = "12.2"
driver_min_linux = "535.54.03"
source = "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html"

[[cuda_family]]
major = 12
driver_min_linux = "525.60.13"
source = "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html"
"""


def test_ptx_runs_newer_gpus_with_a_warning_and_never_older_ones() -> None:
    m = parse_matrix(PTX_ROW, "m.toml")

    def check(cc: str, driver: str = "550.54.15"):  # type: ignore[no-untyped-def]
        rt = modern_node("GPU", cc, driver)
        best = solve([parse_requirement("tensorflow==2.15.0")], rt, m).results[0].candidates[0]
        return best.check("compute_capability")

    sass = check("7.5")
    assert sass.status is Status.OK and sass.reason == "wheels carry code for sm_75"
    jit = check("9.0")
    assert jit.status is Status.WARN
    assert jit.reason.startswith("wheels carry no sm_90 code: the driver compiles their PTX (compute_80)")
    assert jit.needed == "sm_50, sm_60, sm_70, sm_75 + PTX compute_80"
    old = check("3.7")
    assert (
        old.status is Status.FAIL
        and old.reason == "wheels carry sm_50, sm_60, sm_70, sm_75 + PTX compute_80; none runs on sm_37"
    )
    # A driver that runs CUDA 12.2 only through minor-version compatibility cannot compile 12.2's PTX.
    old_driver = check("9.0", driver="525.60.13")
    assert old_driver.status is Status.FAIL
    assert "only PTX (compute_80) built by CUDA 12.2; driver 525.60.13 cannot compile it" in old_driver.reason
    assert old_driver.reason.endswith("driver 535.54.03 or newer can")
    assert check("7.5", driver="525.60.13").status is Status.OK  # SASS needs no compiling


def test_tensorflow_gpu_code_is_the_wheels_own() -> None:
    """The GPU code TensorFlow's PyPI wheels carry (scripts/verify_archs.py): Maxwell is gone from 2.17 on, and a
    GPU newer than the build runs its PTX."""

    def cc_check(spec: str, gpu: str, cc: str):  # type: ignore[no-untyped-def]
        best = plan_for(spec, modern_node(gpu, cc, "580.65.06")).requirements[0].result.candidates[0]
        return best.check("compute_capability")

    maxwell = cc_check("tensorflow==2.20.0", "GeForce GTX 980", "5.2")
    assert maxwell.status is Status.FAIL
    assert maxwell.reason == "wheels carry sm_60, sm_70, sm_80, sm_89 + PTX compute_90; none runs on sm_52"
    assert cc_check("tensorflow==2.16.1", "GeForce GTX 980", "5.2").status is Status.OK  # sm_50 code runs on 5.2
    hopper = cc_check("tensorflow==2.15.0", "NVIDIA H100 80GB HBM3", "9.0")
    assert hopper.status is Status.WARN and "compiles their PTX (compute_80)" in hopper.reason
    assert cc_check("tensorflow==2.15.0", "Tesla T4", "7.5").status is Status.OK


def test_onnxruntime_gpu_code_differs_between_linux_and_windows_wheels() -> None:
    """onnxruntime-gpu 1.24-1.26 (read from PyPI's wheels): the Linux build carries sm_70, the Windows one does not."""
    for system, status in (("linux", Status.OK), ("windows", Status.FAIL)):
        rt = modern_node("Tesla V100-SXM2-16GB", "7.0", "580.65.06")
        rt.os = system
        best = plan_for("onnxruntime-gpu==1.25.0", rt).requirements[0].result.candidates[0]
        cc = best.check("compute_capability")
        assert cc is not None and cc.status is status, (system, cc)


def test_mxnet_gpu_code_comes_from_its_wheels() -> None:
    """mxnet-cu112 1.9.1 carries sm_50 to sm_86 and no PTX: a Kepler K80 gets nothing, an RTX 3090 its own code."""
    k80 = plan_for("mxnet-cu112==1.9.1", modern_node("Tesla K80", "3.7", "470.82.01", python="3.8"))
    cc = k80.requirements[0].result.candidates[0].check("compute_capability")
    assert cc is not None and cc.status is Status.FAIL and cc.needed == "sm_50, sm_60, sm_70, sm_80, sm_86"
    rtx = plan_for("mxnet-cu112==1.9.1", modern_node("NVIDIA GeForce RTX 3090", "8.6", "470.82.01", python="3.8"))
    cc = rtx.requirements[0].result.candidates[0].check("compute_capability")
    assert cc is not None and cc.status is Status.OK


def test_arch_specific_code_runs_on_its_own_capability_only() -> None:
    """onnxruntime-gpu 1.27-1.28 (Linux wheels) carry sm_100a: a B200 (10.0) runs it, a B300 (10.3) does not;
    1.29 on carry no 10.x code at all."""

    def cc_check(spec: str, gpu: str, cc: str):  # type: ignore[no-untyped-def]
        best = plan_for(spec, modern_node(gpu, cc, "580.65.06")).requirements[0].result.candidates[0]
        return best.check("compute_capability")

    b200 = cc_check("onnxruntime-gpu==1.28.0", "NVIDIA B200", "10.0")
    assert b200.status is Status.OK and "sm_100a" in b200.needed
    assert cc_check("onnxruntime-gpu==1.28.0", "NVIDIA B300 SXM6 AC", "10.3").status is Status.FAIL
    assert cc_check("onnxruntime-gpu==1.30.0", "NVIDIA B200", "10.0").status is Status.FAIL
    assert cc_check("onnxruntime-gpu==1.25.0", "NVIDIA H100 80GB HBM3", "9.0").status is Status.OK


def test_a_long_need_wraps_in_its_column_and_has_keeps_its_own(run_cli) -> None:  # type: ignore[no-untyped-def]
    # TensorFlow 1.12's wheels carry six SASS and six PTX architectures: the need runs over three more lines
    target = ("--no-detect", "--os", "linux", "--gpu", "Tesla K20m", "--driver", "384.81", "--cuda", "9.0")
    lines = run_cli("plan", "tensorflow-gpu==1.12.0", *target, "--cudnn", "7.1").stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if "compute_capability" in line)
    column = lines[at].index("needs ")
    has = lines[at].index("has 3.5")
    first = lines[at].split()  # at 80 columns (piped, no COLUMNS)
    assert first[:4] == ["ok", "compute_capability", "needs", "sm_35,"] and first[-2:] == ["has", "3.5"]
    assert max(map(len, lines)) <= 80
    more = []
    for line in lines[at + 1 :]:
        if line[:column].strip():
            break
        more.append(line)
    assert " ".join(m.strip() for m in more).endswith("compute_61, compute_70")
    assert all(len(m) <= has for m in more)  # under "needs", never into "has"
    cudnn = next(line for line in lines if "cudnn " in line and "needs" in line)
    assert cudnn.rstrip().endswith("has 7.1") and cudnn.index("has 7.1") == has


def test_a_page_wide_gpu_floor_stops_at_the_builds_cuda() -> None:
    # CuPy's page says "compute capability 3.0 or later" for every package; CUDA 12 itself starts at 5.0
    k80 = modern_node("Tesla K80", "3.7", "550.54.15")
    rp = plan_for("cupy-cuda12x==13.0.0", k80).requirements[0]
    best = rp.result.best
    assert best is not None
    gpu = next(c for c in best.checks if c.component == "compute_capability")
    assert gpu.status is Status.FAIL and gpu.needed == ">= 5.0 (CUDA 12.0)"
    assert gpu.reason == "built with CUDA 12.0, which supports >= 5.0; GPU is 3.7"
    # the same page's CUDA 11 package still runs there, and a Maxwell card runs the CUDA 12 one
    for spec, rt in (
        ("cupy-cuda11x==13.0.0", k80),
        ("cupy-cuda12x==13.0.0", modern_node("GTX 980", "5.2", "550.54.15")),
    ):
        found = plan_for(spec, rt).requirements[0].result.best
        assert found is not None
        assert next(c for c in found.checks if c.component == "compute_capability").status is Status.OK, spec


def test_a_build_only_the_install_page_links_is_a_download_step() -> None:
    # torch 0.4.1 was never on PyPI; its Windows wheels are files on download.pytorch.org
    windows = windows_node("398.36", "3.6")
    steps = plan_for("torch==0.4.1", windows).requirements[0].options[0].steps
    # where to get it (an instruction), then the command that installs the file (a step of its own)
    assert [s.kind for s in steps] == ["manual", "shell"]
    assert "https://download.pytorch.org/whl/cu90/torch-0.4.1-cp36-cp36m-win_amd64.whl" in steps[0].description
    assert steps[1].shell == "python -m pip install torch-0.4.1-cp36-cp36m-win_amd64.whl"
    # torch 1.0.0's plain PyPI wheel is its CUDA 9.0 build on Linux: that one stays a pip install
    linux = modern_node("GeForce GTX 1080", "6.1", "410.48", python="3.6")
    rp = plan_for("torch==1.0.0", linux).requirements[0]
    assert rp.result.best is not None and str(rp.result.best.cuda) == "9.0"
    assert ("python", "-m", "pip", "install", "torch==1.0.0") in [s.argv for o in rp.options for s in o.steps]


def test_a_wheel_that_brings_cudnn_only_still_needs_the_systems_cuda() -> None:
    # MXNet before 1.8 links cuDNN into libmxnet.so but loads libcudart.so.9.2 from the system
    rt = modern_node("Tesla V100-SXM2-16GB", "7.0", "450.80.02", python="3.6")
    rt = Runtime(
        os=rt.os, driver=rt.driver, gpus=rt.gpus, python=rt.python,
        cuda=[CudaInstall(CudaVersion.parse("10.1"), "/usr/local/cuda-10.1")],
    )  # fmt: skip
    best = plan_for("mxnet-cu92==1.5.0", rt).requirements[0].result.best
    assert best is not None
    checks = {c.component: c for c in best.checks}
    assert checks["cuda"].status is Status.FAIL and checks["cuda"].reason == "built for CUDA 9.2; CUDA 10.1 is in use"
    assert "cudnn" not in checks  # its own cuDNN: none to find on the system
    # torch's wheels bring both: no system CUDA check at all
    best = plan_for("torch==1.5.0", rt).requirements[0].result.best
    assert best is not None and {c.component for c in best.checks}.isdisjoint({"cuda", "cudnn"})


def test_a_post_release_pin_names_its_build() -> None:
    # Paddle 1.x names its builds by post release: .post97 is CUDA 9.0, .post107 CUDA 10.0
    rt = modern_node("Tesla V100-SXM2-16GB", "7.0", "418.39", python="3.7")
    for spec, cuda, pin in (
        ("paddlepaddle-gpu==1.8.5.post97", "9.0", "paddlepaddle-gpu==1.8.5.post97"),
        ("paddlepaddle-gpu==1.8.5.post107", "10.0", "paddlepaddle-gpu==1.8.5.post107"),
        # 1.8.3 shares the row of 1.8.4: its builds are 1.8.4's, under its own number
        ("paddlepaddle-gpu==1.8.3.post97", "9.0", "paddlepaddle-gpu==1.8.3.post97"),
    ):
        rp = plan_for(spec, rt).requirements[0]
        best = rp.result.best
        assert best is not None and str(best.cuda) == cuda and str(best.release.version) == spec.split("==")[1], spec
        assert {c.cuda and str(c.cuda) for c in rp.result.candidates} == {cuda}, spec
        assert pin in [a for o in rp.options for s in o.steps for a in s.argv], spec


def test_a_release_pin_keeps_its_build_where_each_release_had_the_same_builds() -> None:
    # Paddle's pages named .post112/.post116/.post117/.post120 builds for each of 2.6.0, 2.6.1 and 2.6.2
    rt = _with_cudnn(modern_node("Tesla V100-SXM2-16GB", "7.0", "525.85.12", python="3.10"), "11.2", "8.2.1")
    rp = plan_for("paddlepaddle-gpu==2.6.1", rt).requirements[0]
    best = rp.result.best  # PyPI's build, CUDA 11.8, is what the plain pin installs; its CUDA 11.2 build is option 1
    assert best is not None and str(best.release.version) == "2.6.1" and str(best.cuda) == "11.8"
    assert rp.options[0].title == "use the CUDA 11.2 build of paddlepaddle-gpu 2.6.1"
    assert rp.options[0].steps[-1].argv[-3:] == (
        "paddlepaddle-gpu==2.6.1.post112",
        "--index-url",
        "https://www.paddlepaddle.org.cn/packages/stable/cu112/",
    )
    pins = {r.requirement for c in rp.result.candidates for r in c.release.install if r.kind == "pip"}
    assert pins and all(p.startswith("paddlepaddle-gpu==2.6.1") for p in pins), pins
    # 1.8.2 shares the row of 1.8.4 (PyPI has .post97 and .post107 wheels of each)
    rt = modern_node("Tesla V100-SXM2-16GB", "7.0", "418.39", python="3.7")
    steps = [
        a for o in plan_for("paddlepaddle-gpu==1.8.2", rt).requirements[0].options for s in o.steps for a in s.argv
    ]
    assert "paddlepaddle-gpu==1.8.2.post107" in steps and not [a for a in steps if "1.8.4" in a]
    # a row without that word answers for the release asked, in PyPI's build: its other builds' numbers are not
    # known for another release
    rp = plan_for("paddlepaddle-gpu==2.0.1", rt).requirements[0]
    assert rp.result.best is not None and str(rp.result.best.release.version) == "2.0.1"
    assert not [a for o in rp.options for s in o.steps for a in s.argv if "2.0.2" in a]


def test_libraries_by_hand_on_windows_are_windows_steps() -> None:
    # TensorFlow 1.14 on Windows with CUDA 9.0 and cuDNN 7.1: it needs CUDA 10.0 and cuDNN 7.4+
    rt = windows_node(
        "456.71",
        "3.7",
        cuda=[CudaInstall(CudaVersion.parse("9.0"), "C:/CUDA/v9.0")],
        cudnn=[CudnnInstall(CudnnVersion.parse("7.1.4"), "C:/CUDA/v9.0/bin/cudnn64_7.dll")],
    )
    rp = plan_for("tensorflow-gpu==1.14.0", rt).requirements[0]
    by_hand = next(o for o in rp.options if o.title.endswith("install the libraries by hand"))
    text = [s.description for s in by_hand.steps if s.kind == "manual"]
    assert text[0].startswith("install the CUDA 10.0 toolkit with its Windows installer, from https://")
    assert text[1].startswith("download ") and text[1].endswith(" from https://developer.nvidia.com/rdp/cudnn-archive")
    assert "first on PATH" in text[2] and "linux" not in text[2] and "$HOME" not in text[2]
    assert not any(name == "LD_LIBRARY_PATH" for s in by_hand.steps for name, _ in s.env)


def test_of_a_variants_wheels_per_cudnn_the_one_the_cudnn_in_use_serves() -> None:
    # jaxlib 0.3.0's CUDA 11 wheels come for cuDNN 8.2 (jax[cuda], jax[cuda11_cudnn82]) and 8.0.5
    def node(cudnn: str) -> Runtime:
        rt = modern_node("Tesla V100-SXM2-16GB", "7.0", "470.82.01", python="3.9")
        return Runtime(
            os=rt.os, driver=rt.driver, gpus=rt.gpus, python=rt.python,
            cuda=[CudaInstall(CudaVersion.parse("11.1"), "/usr/local/cuda-11.1")],
            cudnn=[CudnnInstall(CudnnVersion.parse(cudnn), "/usr/local/cuda-11.1/lib64/libcudnn.so.8")],
        )  # fmt: skip

    for cudnn, extra, needs in (("8.0.5", "cuda11_cudnn805", "at least 8.0"), ("8.2.1", "cuda", "at least 8.2")):
        rp = plan_for("jaxlib==0.3.0", node(cudnn)).requirements[0]
        best = rp.result.best
        assert best is not None
        check = next(c for c in best.checks if c.component == "cudnn")
        assert check.status is Status.OK and check.needed.endswith(needs), cudnn
        first = rp.options[0].steps[-1].argv
        assert f"jax[{extra}]==0.3.0" in first, (cudnn, first)


def test_a_cudnn_already_on_a_windows_disk_goes_first_on_path() -> None:
    # TensorFlow 2.4 wants cuDNN 8.0+; 7.6 loads first, an 8.0.5 install sits in another folder
    rt = windows_node(
        "456.71",
        "3.8",
        cuda=[CudaInstall(CudaVersion.parse("11.0"), "C:/CUDA/v11.0")],
        cudnn=[
            CudnnInstall(CudnnVersion.parse("7.6.5"), "C:/CUDA/v11.0", loads_first=True, lib_dir="C:/CUDA/v11.0/bin"),
            CudnnInstall(CudnnVersion.parse("8.0.5"), "C:/tools/cudnn-8.0", lib_dir="C:/tools/cudnn-8.0/bin"),
        ],
    )
    rp = plan_for("tensorflow-gpu==2.4.0", rt).requirements[0]
    steps = [s for o in rp.options for s in o.steps if "already installed" in s.description]
    assert steps and steps[0].kind == "manual" and not steps[0].env
    assert steps[0].description.endswith("put C:/tools/cudnn-8.0/bin first on PATH")


def _with_cudnn(rt: Runtime, cuda: str, cudnn: str | None) -> Runtime:
    rt.cuda = [CudaInstall(CudaVersion.parse(cuda), f"/usr/local/cuda-{cuda}")]
    if cudnn is not None:
        rt.cudnn = [CudnnInstall(CudnnVersion.parse(cudnn), f"/usr/local/cuda-{cuda}/lib64", loads_first=True)]
    return rt


def cudnn_check(spec: str, rt: Runtime) -> tuple[Any, Plan]:
    plan = plan_for(spec, rt)
    best = plan.requirements[0].result.best
    assert best is not None, spec
    return best.check("cudnn"), plan


def test_cupy_runs_without_its_optional_cudnn_and_warns_on_another() -> None:
    # CuPy's page lists cuDNN among the libraries that enable only some features (v13.6.0: cuDNN 8.8)
    v100 = modern_node("Tesla V100-SXM2-16GB", "7.0", "525.85.12", python="3.10")
    check, plan = cudnn_check("cupy-cuda11x==13.6.0", _with_cudnn(v100, "11.8", None))
    assert check.status is Status.OK and check.found == "none" and check.needed.startswith("(optional) ")
    assert plan.requirements[0].options[0].title.startswith("install it: this machine has what it needs")
    check, plan = cudnn_check("cupy-cuda11x==13.6.0", _with_cudnn(v100, "11.8", "8.6.0"))
    assert check.status is Status.WARN and check.found == "8.6.0"
    runs = "the release runs, but its cuDNN features need the same major.minor series at run time: 8.8.x"
    assert runs in check.reason
    first = plan.requirements[0].options[0]
    assert first.title == "install it: nothing stands against it; read the warnings first (cudnn)"
    assert [s.shell for s in first.steps] == ["python -m pip install cupy-cuda11x==13.6.0"]
    # a cuDNN it lists is accepted as before
    check, _ = cudnn_check("cupy-cuda11x==13.6.0", _with_cudnn(v100, "11.8", "8.8.1"))
    assert check.status is Status.OK


def test_onnxruntime_takes_a_newer_cudnn_minor_of_its_major() -> None:
    # ORT 1.16 was built with cuDNN 8.2.4 on Linux and 8.5.0.96 on Windows; it checks no minor itself
    v100 = modern_node("Tesla V100-SXM2-16GB", "7.0", "525.85.12", python="3.10")
    check, plan = cudnn_check("onnxruntime-gpu==1.16.3", _with_cudnn(v100, "11.8", "8.6.0"))
    assert check.status is Status.OK
    assert check.needed == "the same major version with an equal or newer minor: 8.x, at least 8.2"
    assert plan.requirements[0].options[0].steps[-1].shell == "python -m pip install onnxruntime-gpu==1.16.3"
    for cudnn in ("8.1.1", "9.1.0"):
        check, _ = cudnn_check("onnxruntime-gpu==1.16.3", _with_cudnn(v100, "11.8", cudnn))
        assert check.status is Status.FAIL, cudnn
    windows = windows_node("531.14", "3.10")
    check, _ = cudnn_check("onnxruntime-gpu==1.16.3", _with_cudnn(windows, "11.8", "8.3.2"))
    assert check.status is Status.FAIL and "at least 8.5" in check.needed
    check, _ = cudnn_check("onnxruntime-gpu==1.16.3", _with_cudnn(windows_node("531.14", "3.10"), "11.8", "8.9.7"))
    assert check.status is Status.OK


def test_mxnet_after_1_8_and_tensorflow_1_8_take_a_newer_cudnn_minor() -> None:
    v100 = modern_node("Tesla V100-SXM2-16GB", "7.0", "525.85.12", python="3.8")
    check, _ = cudnn_check("mxnet-cu112==1.9.1", _with_cudnn(v100, "11.8", "8.6.0"))
    assert check.status is Status.OK  # libmxnet only warns on a different cuDNN; built with 8.1
    check, _ = cudnn_check("mxnet-cu112==1.9.1", _with_cudnn(v100, "11.8", "8.0.5"))
    assert check.status is Status.FAIL
    # the 1.8.0 and 1.9.0 wheels carry the newer-minor check's message; 1.7.0 still compares the series
    for version, accepted in (("1.7.0", False), ("1.8.0", True), ("1.9.0", True)):
        rt = _with_cudnn(windows_node("391.35", "3.6"), "9.0", "7.1.4")
        check, _ = cudnn_check(f"tensorflow-gpu=={version}", rt)
        assert (check.status is Status.OK) is accepted, version


def test_cuda_13_on_windows_is_held_to_nvidias_branch_minimum() -> None:
    # NVIDIA's release notes give no Windows figure for 13.x; its compatibility table says 13.x needs >= 580
    rtx = windows_node("581.57", "3.12")
    rtx.gpus = [Gpu("NVIDIA GeForce RTX 4090", ComputeCapability.parse("8.9"))]
    best = plan_for("torch==2.14.1", rtx).requirements[0].result.best
    assert best is not None and str(best.cuda) == "13.0"
    driver = best.check("driver")
    assert driver is not None and driver.status is Status.OK and driver.needed == ">= 580"
    # an R570 driver takes the CUDA 12.6 build, which it runs
    rtx.driver = DriverVersion.parse("572.16")
    best = plan_for("torch==2.14.1", rtx).requirements[0].result.best
    assert best is not None and best.ok and str(best.cuda) == "12.6"


def test_tensorflow_1_x_is_held_to_the_cudnn_its_wheels_were_built_with() -> None:
    # read from the wheels: Linux 1.8-1.10 built with cuDNN 7.0.5, 1.11 with 7.2.1, 1.12 with 7.1.4;
    # Windows 1.8-1.11 with 7.0.3, 1.12 with 7.2.1
    def verdict(spec: str, rt: Runtime, cudnn: str) -> Status:
        check, _ = cudnn_check(spec, _with_cudnn(rt, "9.0", cudnn))
        return check.status

    def linux() -> Runtime:
        return modern_node("Tesla V100-SXM2-16GB", "7.0", "410.48", python="3.6")

    assert verdict("tensorflow-gpu==1.12.0", linux(), "7.1.4") is Status.OK
    assert verdict("tensorflow-gpu==1.11.0", linux(), "7.1.4") is Status.FAIL
    assert verdict("tensorflow-gpu==1.10.1", linux(), "7.0.5") is Status.OK
    assert verdict("tensorflow-gpu==1.10.1", linux(), "6.0.21") is Status.FAIL  # a check now: libcudnn.so.7
    assert verdict("tensorflow-gpu==1.11.0", windows_node("411.31", "3.6"), "7.0.5") is Status.OK
    assert verdict("tensorflow-gpu==1.12.0", windows_node("411.31", "3.6"), "7.1.4") is Status.FAIL


def test_tensorflow_1_15_and_2_0_need_the_cudnn_7_6_their_wheels_were_built_with() -> None:
    # the table says 7.4; every 1.15.x and 2.0.x wheel checks against 7.6.0 and refuses 7.4.1 (TF issue 35376)
    rt = _with_cudnn(modern_node("Tesla V100-SXM2-16GB", "7.0", "418.39", python="3.7"), "10.0", "7.4.1")
    for spec in ("tensorflow-gpu==1.15.0", "tensorflow-gpu==2.0.4"):
        check, plan = cudnn_check(spec, rt)
        assert check.status is Status.FAIL and "at least 7.6" in check.needed, spec
        by_hand = [s.description for o in plan.requirements[0].options for s in o.steps if s.kind == "manual"]
        assert any("cudnn-10.0-linux-x64-v7.6.5.32.tgz" in d for d in by_hand), spec
    check, _ = cudnn_check("tensorflow-gpu==1.14.0", rt)
    assert check.status is Status.OK  # 1.14's wheels were built with 7.4.2


def test_the_extras_asked_for_choose_the_form_a_jax_release_is_installed_in() -> None:
    # jax 0.4.30: jax[cuda12] brings CUDA and cuDNN as nvidia-* wheels, jax[cuda12_local] loads the system's
    # (cuDNN 9.1 or newer); a machine with cuDNN 9.0 runs the first and not the second
    a100 = _with_cudnn(modern_node("NVIDIA A100-SXM4-80GB", "8.0", "550.54.15"), "12.4", "9.0.0")
    check, plan = cudnn_check("jax[cuda12]==0.4.30", a100)
    assert check is None
    assert plan.requirements[0].options[0].steps[-1].shell == "python -m pip install 'jax[cuda12]==0.4.30'"
    check, plan = cudnn_check("jax[cuda12_local]==0.4.30", a100)
    assert check is not None and check.status is Status.FAIL and check.found == "9.0.0"
    assert check.needed == "the same major version with an equal or newer minor: 9.x, at least 9.1"
    steps = plan.requirements[0].options[0].steps
    assert steps[-1].shell == "python -m pip install 'jax[cuda12_local]==0.4.30'"
    assert "cudnn-linux-x86_64-9." in steps[0].description
    # PEP 685 spelling, and the system's CUDA is checked too
    check, plan = cudnn_check("jax[cuda12-local]==0.4.30", _with_cudnn(a100, "12.4", "9.1.1"))
    assert check is not None and check.status is Status.OK
    best = plan.requirements[0].result.best
    assert best is not None and (cuda := best.check("cuda")) is not None and cuda.found == "12.4"
    # the monolithic jaxlib jax[cuda12_local] installs: 0.4.28's built for cuDNN 8.9, 0.4.29's for 9.1 (its metadata:
    # jaxlib==0.4.29+cuda12.cudnn91, though the docs table said 8.9)
    check, _ = cudnn_check("jax[cuda12_local]==0.4.28", _with_cudnn(a100, "12.4", "8.9.7"))
    assert check is not None and check.status is Status.OK and check.needed.endswith("at least 8.9")
    check, _ = cudnn_check("jax[cuda12_local]==0.4.29", _with_cudnn(a100, "12.4", "8.9.7"))
    assert check is not None and check.status is Status.FAIL and check.needed.endswith("at least 9.1")
    # the pip form of that era (jax[cuda12_pip]) brings cuDNN as nvidia-* wheels: the system's is not asked for
    check, _ = cudnn_check("jax[cuda12_pip]==0.4.25", _with_cudnn(a100, "12.4", "8.6.0"))
    assert check is None


def test_an_extra_naming_one_cuda_keeps_that_build_only() -> None:
    # jax 0.7.2 has CUDA 12.9 and 13.0 builds; jax[cuda13] asks for the second even where the first would run
    h100 = modern_node("NVIDIA H100 80GB HBM3", "9.0", "580.65.06")
    rp = plan_for("jax[cuda13]==0.7.2", h100).requirements[0]
    assert {str(c.cuda) for c in rp.result.candidates} == {"13.0"}
    assert rp.options[0].steps[-1].shell == "python -m pip install 'jax[cuda13]==0.7.2'"
    rp = plan_for("jax[cuda12-local]==0.7.2", h100).requirements[0]
    assert {str(c.cuda) for c in rp.result.candidates} == {"12.9"}
    # an extra no recipe names (an optional feature) leaves the release's builds as they are
    rp = plan_for("torch[opt-einsum]==2.1.0", h100).requirements[0]
    assert {str(c.cuda) for c in rp.result.candidates} == {"11.8", "12.1"}


def test_an_unpacked_cudnn_archive_goes_on_the_library_path_by_its_own_layout() -> None:
    # the tar.xz archives (8.3 on) unpack to a folder named after the file, with lib/; the old .tgz to cuda/lib64
    a100 = _with_cudnn(modern_node("NVIDIA A100-SXM4-80GB", "8.0", "550.54.15"), "12.4", "9.0.0")
    steps = plan_for("jax[cuda12_local]==0.4.30", a100).requirements[0].options[0].steps
    archive = next(w for w in steps[0].description.split() if w.endswith(".tar.xz"))
    assert archive.startswith("cudnn-linux-x86_64-9.") and archive.endswith("_cuda12-archive.tar.xz")
    assert [s.shell for s in steps[1:3]] == ['mkdir -p "$HOME/cudnn"', f'tar -xf {archive} -C "$HOME/cudnn"']
    folder = archive.removesuffix(".tar.xz")
    assert steps[3].shell == f'export LD_LIBRARY_PATH="$HOME/cudnn/{folder}/lib:$LD_LIBRARY_PATH"'
    k20m = plan_for("tensorflow-gpu==1.0", k20m_node(modules=False)).requirements[0]
    by_hand = next(o for o in k20m.options if o.title.endswith("install the libraries by hand"))
    assert by_hand.steps[3].shell == 'export LD_LIBRARY_PATH="$HOME/cudnn/cuda/lib64:$LD_LIBRARY_PATH"'


def test_a_jax_cuda_plugin_asks_the_cudnn_it_was_built_with() -> None:
    # read from the plugins (xla_cuda_plugin.so): CUDA 13 plugins from 0.7.2 on were built with cuDNN 9.12.0, the
    # CUDA 12 ones with 9.8.0 up to 0.11.1 and 9.10.2 from 0.11.2
    h100 = modern_node("NVIDIA H100 80GB HBM3", "9.0", "580.65.06", python="3.12")
    for spec, cuda, cudnn, ok in (
        ("jax[cuda13-local]==0.9.0", "13.0", "9.8.0", False),
        ("jax[cuda13-local]==0.9.0", "13.0", "9.12.0", True),
        ("jax[cuda12-local]==0.9.0", "12.9", "9.8.0", True),
        ("jax[cuda12-local]==0.11.1", "12.9", "9.8.0", True),
        ("jax[cuda12-local]==0.11.2", "12.9", "9.8.0", False),
        ("jax[cuda12-local]==0.11.2", "12.9", "9.10.2", True),
    ):
        check, plan = cudnn_check(spec, _with_cudnn(h100, cuda, cudnn))
        assert check is not None and (check.status is Status.OK) is ok, (spec, cudnn, check)
        assert plan.requirements[0].result.best is not None
    # the pip form brings its cuDNN: the system's 9.8 does not matter to jax[cuda13]
    check, _ = cudnn_check("jax[cuda13]==0.9.0", _with_cudnn(h100, "13.0", "9.8.0"))
    assert check is None


def test_jax_0_4_7_is_the_first_release_with_cuda_12_and_pip_installed_cuda() -> None:
    # jax 0.4.7's metadata: cuda12_pip / cuda12_local (jaxlib 0.4.7+cuda12.cudnn88); 0.4.4-0.4.6 have CUDA 11 only
    a100 = _with_cudnn(modern_node("NVIDIA A100-SXM4-80GB", "8.0", "525.85.12", python="3.10"), "12.0", "8.8.0")
    rp = plan_for("jax[cuda12_local]==0.4.7", a100).requirements[0]
    assert {str(c.cuda) for c in rp.result.candidates} == {"12.0"}
    assert rp.options[0].title.startswith("install it: this machine has what it needs")
    rp = plan_for(
        "jax[cuda12_pip]==0.4.7", modern_node("NVIDIA A100-SXM4-80GB", "8.0", "525.85.12", python="3.10")
    ).requirements[0]
    best = rp.result.best
    assert best is not None and best.ok and best.check("cudnn") is None  # the pip form brings its cuDNN
    rp = plan_for("jax==0.4.6", a100).requirements[0]
    assert {str(c.cuda) for c in rp.result.candidates} == {"11.4", "11.8"}


def test_jax_s_older_extra_spellings_are_the_local_builds_they_name() -> None:
    # jax 0.4.25's metadata: [cuda] and [cuda11_cudnn86] ask for jaxlib 0.4.25+cuda11.cudnn86 and the system's libraries
    a100 = _with_cudnn(modern_node("NVIDIA A100-SXM4-80GB", "8.0", "535.54.03"), "11.8", "8.5.0")
    for extra in ("cuda", "cuda11_cudnn86"):
        check, plan = cudnn_check(f"jax[{extra}]==0.4.25", a100)
        assert check is not None and check.status is Status.FAIL and check.needed.endswith("at least 8.6"), extra
        shells = [o.steps[-1].shell for o in plan.requirements[0].options]
        assert any(f"'jax[{extra}]==0.4.25'" in sh for sh in shells), shells
    check, _ = cudnn_check("jax==0.4.25", a100)
    assert check is None  # unnamed, the plan offers jax[cuda12_pip], which brings its own


def test_another_release_of_the_series_asked_for_comes_before_newer_ones() -> None:
    # paddlepaddle-gpu 2.1.0 has no CUDA 11.0 build; 2.1.3 (post110) and 2.3.1 (post110) both run on this machine:
    # the one of the 2.1 series asked for is offered, not the newest
    rt = _machine("11.0", "8.0.5", python="3.8")
    rp = plan_for("paddlepaddle-gpu==2.1.0", rt).requirements[0]
    other = next(o for o in rp.options if " instead" in o.title)
    assert other.title.startswith("use paddlepaddle-gpu 2.1.3 instead") and "2.1.3.post110" in other.steps[-1].shell
