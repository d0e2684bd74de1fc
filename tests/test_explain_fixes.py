"""fixes_for: generic steps from the catalog, concrete ones when the machine is known."""

from __future__ import annotations

from dnnresolve.advice.fixes import fixes_for
from dnnresolve.explain import diagnose
from dnnresolve.machine import CudaInstall, CudnnInstall, Module, Runtime
from dnnresolve.matrix import load_matrix
from dnnresolve.versions import CudaVersion, CudnnVersion

CLASSIC = (
    "E tensorflow/stream_executor/cuda/cuda_dnn.cc:347] Loaded runtime CuDNN library: 5005 (compatibility version "
    "5000) but source was compiled with 5103 (compatibility version 5100)."
)


def _one(text: str):  # type: ignore[no-untyped-def]
    (d,) = diagnose([text])
    return d


def test_the_cluster_story_gives_the_exact_module_swap() -> None:
    d = _one(CLASSIC)
    rt = Runtime(modules=[Module("cudnn", "5.0", loaded=True), Module("cudnn", "5.1-cuda8.0"), Module("cudnn", "6.0")])
    steps = fixes_for(d, rt, None)
    assert steps[0] == "load cuDNN 5.1.x: module swap cudnn/5.0 cudnn/5.1-cuda8.0"
    assert "module avail" not in " ".join(steps)  # the generic module step gave way to the concrete one


def test_no_fitting_module_keeps_the_generic_step() -> None:
    d = _one(CLASSIC)
    rt = Runtime(modules=[Module("cudnn", "5.0", loaded=True), Module("cudnn", "6.0"), Module("cuda", "8.0")])
    assert fixes_for(d, rt, None) == fixes_for(d, None, None)
    assert fixes_for(d, None, None)[0].startswith("load a cuDNN 5.1.x build: `module load cudnn/5.1`")


def test_newer_minor_rule_picks_the_oldest_module_that_fits() -> None:
    d = _one("Loaded runtime CuDNN library: 8.0.5 but source was compiled with: 8.1.0.")
    rt = Runtime(
        modules=[Module("cuDNN", "8.0.5"), Module("cudnn", "8.6.0"), Module("cudnn", "8.2.1"), Module("cudnn", "9.1")]
    )
    assert fixes_for(d, rt, None)[0] == "load cuDNN 8.1 or a newer 8.x: module load cudnn/8.2.1"


def test_a_fitting_install_gives_the_ld_library_path_line() -> None:
    d = _one(CLASSIC)
    rt = Runtime(cudnn=[CudnnInstall(CudnnVersion.parse("5.1.10"), "/opt/cudnn v5.1/lib64/libcudnn.so.5.1.10")])
    assert "put cuDNN 5.1.10 first: export LD_LIBRARY_PATH='/opt/cudnn v5.1/lib64':$LD_LIBRARY_PATH" in fixes_for(
        d, rt, None
    )


def test_missing_cuda_runtime_points_at_the_toolkit_that_provides_it() -> None:
    d = _one(
        "Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared"
        " object file: No such file or directory"
    )
    rt = Runtime(
        cuda=[
            CudaInstall(CudaVersion.parse("10.2"), "/usr/local/cuda-10.2"),
            CudaInstall(CudaVersion.parse("11.2"), "/usr/local/cuda-11.2"),
        ],
        modules=[Module("cuda", "11.2.2"), Module("cuda", "12.1")],
    )
    steps = fixes_for(d, rt, None)
    assert steps[0] == "load CUDA 11.0: module load cuda/11.2.2"  # libcudart.so.11.0 is in every 11.x
    assert steps[1] == (
        "use the CUDA 11.2 at /usr/local/cuda-11.2: export LD_LIBRARY_PATH=/usr/local/cuda-11.2/lib64:$LD_LIBRARY_PATH"
    )


def test_windows_paths_use_path() -> None:
    d = _one("Could not load dynamic library 'cudart64_110.dll'; dlerror: cudart64_110.dll not found")
    rt = Runtime(os="windows", cuda=[CudaInstall(CudaVersion.parse("11.2"), "C:/CUDA/v11.2")])
    steps = fixes_for(d, rt, None)
    assert 'use the CUDA 11.2 at C:/CUDA/v11.2: set "PATH=C:/CUDA/v11.2/bin;%PATH%"' in steps
    assert not any("module" in s for s in steps)  # no environment modules for a Windows DLL
    assert any("PATH" in s for s in fixes_for(d, None, None))
    assert not any("module load" in s for s in fixes_for(d, None, None))


def test_the_matrix_names_releases_built_for_the_cudnn_you_have() -> None:
    d = _one(
        "Loaded runtime CuDNN library: 5103 (compatibility version 5100) but source was compiled with 5005"
        " (compatibility version 5000)."
    )
    steps = fixes_for(d, None, load_matrix())
    assert (
        steps[-1] == "or install a TensorFlow release built for cuDNN 5.1: "
        "tensorflow-gpu==1.2.0, tensorflow-gpu==1.1.0, tensorflow-gpu==1.0.0"
    )


def test_placeholders_that_cannot_be_filled_leave_the_step_out() -> None:
    # a math library with no CUDA release in its name: no module to suggest
    d = _one("Could not load dynamic library 'libcusolver.so.11'; dlerror: libnvJitLink.so.12: cannot open")
    assert all("{" not in s and "module load" not in s for s in d.fixes)
    assert d.fixes[0] == "add the directory holding libcusolver.so.11 to LD_LIBRARY_PATH"


def test_a_named_cuda_that_provides_the_library_is_said_first() -> None:
    d = _one(
        "FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.11: cannot"
        " open shared object file: No such file or directory"
    )
    rt = Runtime(cuda=[CudaInstall(CudaVersion.parse("11.2"), "", "--cuda")])
    assert fixes_for(d, rt, None)[0] == (
        "the CUDA 11.2 you named provides it: put its lib64 directory on LD_LIBRARY_PATH"
    )
    rt = Runtime(cuda=[CudaInstall(CudaVersion.parse("12.1"), "", "--cuda")])
    assert fixes_for(d, rt, None) == fixes_for(d, None, None)


def test_a_driver_older_than_the_ptx_compiler_gets_the_first_driver_for_that_cuda() -> None:
    d = _one(
        "W external/xla/xla/service/gpu/nvptx_compiler.cc:744] The NVIDIA driver's CUDA version is 12.2 which is "
        "older than the ptxas CUDA version (12.3.107). Because the driver is older than the ptxas version, XLA is "
        "disabling parallel compilation"
    )
    m = load_matrix()
    required = m.driver_table("linux").min_driver_for(CudaVersion.parse("12.3"))
    steps = fixes_for(d, None, m)
    assert steps[0] == f"upgrade the NVIDIA driver to {required} or newer, the first that runs CUDA 12.3 (needs root)"
    assert not any("one that supports CUDA 12.3" in s for s in steps)  # the concrete step took the generic's place
    assert any("one that supports CUDA 12.3" in s for s in fixes_for(d, None, None))


def test_an_unsupported_gpu_is_pointed_at_the_plan_that_names_a_build_for_it() -> None:
    d = _one(
        "NVIDIA GeForce RTX 5070 with CUDA capability sm_120 is not compatible with the current PyTorch installation. "
        "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_61 sm_70 sm_75 sm_80 sm_86 sm_90."
    )
    steps = fixes_for(d, Runtime(), None)
    assert any(s.startswith("`dnnresolve plan torch --gpu 12.0` names a release and build") for s in steps)
    tf = _one(
        "Ignoring visible gpu device (device: 0, name: GeForce GTX 980, pci bus id: 0000:01:00.0, compute capability: "
        "5.2) with Cuda compute capability 5.2. The minimum required Cuda capability is 6.0."
    )
    assert any(s.startswith("`dnnresolve plan tensorflow --gpu 5.2`") for s in fixes_for(tf, Runtime(), None))
