"""Every form a framework's own check can print (#22): a later sentence without the one before it, a title cut
short after its distinctive words, the source line a traceback quotes, another release's wording. Each case is
the cited file's format string filled in, or cut, not a message copied from a thread."""

from __future__ import annotations

import pytest

from dnnresolve.explain import diagnose

CASES = [
    (  # torchvision/extension.py (pytorch/vision): its second sentence alone
        "PyTorch has CUDA Version=11.7 and torchvision has CUDA Version=11.8",
        "cuda_version_mismatch",
        {"cuda": "11.8"},
        {"cuda": "11.7"},
    ),
    (  # the same, cut short before torchvision's own version: torch's is still read
        "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA versions. "
        "PyTorch has CUDA Version=11.3 and torchvision has CUDA Ver",
        "cuda_version_mismatch",
        {},
        {"cuda": "11.3"},
    ),
    (  # torch/backends/cudnn/__init__.py (pytorch/pytorch), cut before the runtime's version
        "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 7, 0) but found runti",
        "cudnn_version_mismatch",
        {},
        {"cudnn": "8.7.0"},
    ),
    (  # the same check's first words alone (a title)
        "cuDNN version incompatibility",
        "cudnn_version_mismatch",
        {},
        {},
    ),
    (  # torch/utils/cpp_extension.py: the traceback quotes the raise line, placeholder and all, before the error
        '    raise ValueError(f"Unknown CUDA arch ({arch}) or GPU not supported")\n'
        "ValueError: Unknown CUDA arch (8.9) or GPU not supported",
        "arch_unsupported",
        {"compute_capability": "8.9"},
        {},
    ),
    (  # tensorflow/core/common_runtime/gpu/gpu_device.cc: its second sentence, the device description cut away
        "with Cuda compute capability 3.0. The minimum required Cuda capability is 3.5.",
        "arch_unsupported",
        {"compute_capability": "3.0"},
        {"compute_capability": "3.5"},
    ),
    (  # gpu_device.cc: a GPU skipped for its multiprocessor count, not its architecture
        "I tensorflow/core/common_runtime/gpu/gpu_device.cc:1688] Ignoring visible gpu device (device: 1, name: "
        "GeForce GT 1030, pci bus id: 0000:04:00.0, compute capability: 6.1) with core count: 3. The minimum "
        "required count is 8. You can adjust this requirement with the env var TF_MIN_GPU_MULTIPROCESSOR_COUNT.",
        "other",
        {},
        {},
    ),
    (  # gpu_device.cc under ROCm: a GPU whose gfx version the build lacks
        "Ignoring visible gpu device (device: 0, name: Radeon RX 580, pci bus id: 0000:03:00.0) with AMDGPU "
        "version : gfx803. The supported AMDGPU versions are gfx900, gfx906, gfx908.",
        "arch_unsupported",
        {},
        {},
    ),
    (  # onnxruntime/core/platform/windows/env.cc: the path quoted another way, the system's text left out
        "LoadLibrary failed with error 126 when trying to load 'C:\\app\\onnxruntime_providers_cuda.dll'",
        "missing_library",
        {},
        {"library": "onnxruntime_providers_cuda.dll"},
    ),
    (  # glibc's dlerror ("%s: %s"), a title cut inside "cannot open shared object file"
        "ImportError: libcudart.so.11.0: cannot open shared obj",
        "missing_library",
        {},
        {"library": "libcudart.so.11.0", "cuda": "11.0"},
    ),
    (  # python/paddle/fluid/install_check.py (PaddlePaddle/Paddle 1.x)
        "WARNING:root:You are using GPU version Paddle Fluid, But Your CUDA Device is not set properly",
        "init_failure",
        {},
        {},
    ),
    (  # jaxlib/plugin_support.py (jax-ml/jax)
        "RuntimeWarning: JAX plugin jax_cuda12_plugin version 0.7.2 is installed, but it is not compatible with "
        "the installed jaxlib version 0.7.1, so it will not be used.",
        "other",
        {},
        {},
    ),
    (  # tensorflow/python/compiler/tensorrt/trt_convert.py (TF 1.13-1.15): loaded is found, compiled expected
        "WARNING:tensorflow:TensorRT mismatch. Compiled against version 5.0.2, but loaded 5.1.2. Things may not work",
        "other",
        {"tensorrt": "5.1.2"},
        {"tensorrt": "5.0.2"},
    ),
    (  # trt_convert.py (TF 1.14): an older major loaded
        "TensorRT version mismatch. Tensorflow was compiled against TensorRT 5.1.5 but library loaded from "
        "environment is TensorRT 4.0.1. Please make sure that correct version of TensorRT is available",
        "other",
        {"tensorrt": "4.0.1"},
        {"tensorrt": "5.1.5"},
    ),
    (  # trt_convert.py (TF 2.x)
        "Loaded TensorRT 7.2.2 but linked TensorFlow against TensorRT 8.2.1. A few requirements must be met:",
        "other",
        {"tensorrt": "7.2.2"},
        {"tensorrt": "8.2.1"},
    ),
    (  # glibc elf/dl-version.c: a version node of an NVIDIA library missing (cuBLAS against another cuBLASLt)
        "ImportError: /usr/lib/x86_64-linux-gnu/libcublas.so.11: version `libcublasLt.so.11' not found "
        "(required by /opt/venv/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so)",
        "cuda_version_mismatch",
        {},
        {},
    ),
]


@pytest.mark.parametrize(("text", "kind", "found", "expected"), CASES)
def test_every_form_the_source_prints_is_read(
    text: str, kind: str, found: dict[str, str], expected: dict[str, str]
) -> None:
    diagnoses = diagnose(text.splitlines())
    assert diagnoses, text
    d = diagnoses[0]
    assert (d.kind, d.found, d.expected) == (kind, found, expected)


def test_a_glibc_version_node_of_no_nvidia_library_stays_glibc_s() -> None:
    # GLIBC_2.27 missing is the system's C library being old, not two NVIDIA releases
    diagnoses = diagnose(["/lib/x86_64-linux-gnu/libm.so.6: version `GLIBC_2.27' not found (required by /x/a.so)"])
    assert [d.id for d in diagnoses] == ["glibc-too-old"]


CUT_AND_WRAPPED = [
    (  # tensorflow/stream_executor/cuda/cuda_dnn.cc, a title cut after the loaded version
        "Loaded runtime CuDNN library: 8.0.5 but source was compiled with:",
        "cudnn_version_mismatch",
        {"cudnn": "8.0.5"},
        {},
    ),
    (  # torch/utils/cpp_extension.py, cut before torch's own version
        "The detected CUDA version (12.1) mismatches the version that was used to compile PyTorch",
        "cuda_version_mismatch",
        {"cuda": "12.1"},
        {},
    ),
    (  # torch/cuda/__init__.py, cut before the version
        "RuntimeError: The NVIDIA driver on your system is too old (found version",
        "driver_too_old",
        {},
        {},
    ),
    (  # onnxruntime's env.cc, a title cut inside the provider's path
        'LoadLibrary failed with error 126 "" when trying to load "C:\\Users\\me\\AppData\\Local\\Programs\\Pyth',
        "missing_library",
        {},
        {},
    ),
    (  # a search link (form encoding: "+" for a space, no %-escape at all)
        "https://www.google.com/search?q=CUDA+driver+version+is+insufficient+for+CUDA+runtime+version",
        "driver_too_old",
        {},
        {},
    ),
    (  # glibc's dlerror wrapped right after the library's name
        "libcublas.so.9.0:\ncannot open shared object file: No such file or directory",
        "missing_library",
        {},
        {"library": "libcublas.so.9.0", "cuda": "9.0"},
    ),
    (  # a continuation line that starts with ">=" is no quoted reply
        "nvidia-container-cli: requirement error: unsatisfied condition: cuda\n>= 9.1",
        "driver_too_old",
        {},
        {"cuda": "9.1"},
    ),
    (  # gpu_device.cc's device description wrapped inside its parentheses
        "Ignoring visible gpu device (device: 0, name: GeForce GTX 660M, pci bus id:\n0000:01:00.0, compute "
        "capability: 3.0) with Cuda compute capability 3.0. The minimum required Cuda capability is 3.5.",
        "arch_unsupported",
        {"compute_capability": "3.0"},
        {"compute_capability": "3.5"},
    ),
]


@pytest.mark.parametrize(("text", "kind", "found", "expected"), CUT_AND_WRAPPED)
def test_a_message_cut_short_or_wrapped_reads_up_to_where_it_ends(
    text: str, kind: str, found: dict[str, str], expected: dict[str, str]
) -> None:
    diagnoses = diagnose(text.splitlines())
    assert diagnoses, text
    d = diagnoses[0]
    assert (d.kind, d.found, d.expected) == (kind, found, expected)


@pytest.mark.parametrize(
    "text",
    [
        "ERROR: failed to load",  # a loader's generic words, cut before any library: nothing to say
        '    raise RuntimeError("Detected that PyTorch and torchvision were compiled with different CUDA versions. "',
    ],
)
def test_a_generic_phrase_or_a_quoted_source_line_is_no_cut_message(text: str) -> None:
    assert diagnose([text]) == []


TUNE_FORMS = [
    (  # libnvidia-container src/cli/configure.c: "initialization error: %s"
        "nvidia-container-cli: initialization error: nvml error: driver not loaded",
        "init_failure",
        {},
    ),
    (  # ... but a library it cannot load is a missing library, read by the loader's sentence
        "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared "
        "object file: no such file or directory",
        "missing_library",
        {"library": "libnvidia-ml.so.1"},
    ),
    (  # glibc elf/dl-load.c: the library is there, its executable stack is refused
        "Unable to load library: libnvinfer_builder_resource.so.10.7.0: libnvinfer_builder_resource.so.10.7.0: "
        "cannot enable executable stack as shared object requires: Invalid argument",
        "other",
        {},
    ),
    ("cupy.cuda.compiler.CompileException: nvrtc: error: failed to load builtins", "missing_library", {}),
    ("Broken install - missing libnvrtc.so.12", "missing_library", {"library": "libnvrtc.so.12", "cuda": "12"}),
    # paddle/fluid/platform/init.cc (PaddlePaddle/Paddle): InitDevices found no CUDA device, behind glog's prefix
    (
        "W0101 00:00:00.000000  1234 init.cc:182] Compiled with WITH_GPU, but no GPU found in runtime.",
        "init_failure",
        {},
    ),
]


@pytest.mark.parametrize(("text", "kind", "expected"), TUNE_FORMS)
def test_other_forms_of_loading_and_starting(text: str, kind: str, expected: dict[str, str]) -> None:
    diagnoses = diagnose([text])
    assert diagnoses, text
    assert (diagnoses[0].kind, diagnoses[0].expected) == (kind, expected)


ENCODED = [
    (  # a log shipped as JSON lines: the only escapes are line breaks (no escaped quote or backslash)
        '{"log": "RuntimeWarning: JAX plugin jax_cuda12_plugin version 0.7.2 is installed, but it is not compatible '
        'with the installed jaxlib version 0.7.1\\nnext line"}',
        "other",
        {},
    ),
    (  # a JSON \\u escape of nvcc's typographic quote
        '{"msg": "nvcc fatal : Unsupported gpu architecture \\u00b4compute_30\\u00b4"}',
        "arch_unsupported",
        {"compute_capability": "3.0"},
    ),
    (  # a search link: the typographic quote as UTF-8 %-escapes
        "https://www.google.com/search?q=Unsupported%20gpu%20architecture%20%C2%B4compute_30%C2%B4",
        "arch_unsupported",
        {"compute_capability": "3.0"},
    ),
]


@pytest.mark.parametrize(("text", "kind", "found"), ENCODED)
def test_json_lines_and_utf8_escapes_are_read(text: str, kind: str, found: dict[str, str]) -> None:
    diagnoses = diagnose([text])
    assert diagnoses, text
    assert (diagnoses[0].kind, diagnoses[0].found) == (kind, found)


def test_a_raw_windows_path_in_a_json_free_line_is_left_alone() -> None:
    # "C:\new\lib" is a path, not an escaped line break: no JSON string around it
    d = diagnose(["Could not locate cudnn_ops_infer64_8.dll in C:\\new\\lib"])
    assert d and d[0].expected["library"] == "cudnn_ops_infer64_8.dll"


def test_torch_s_capability_range_warning_is_read() -> None:
    # torch/cuda/__init__.py (PyTorch 2.5 and later), wrapped as warnings.warn prints it
    lines = [
        "UserWarning:",
        "    Found GPU0 NVIDIA GeForce MX350 which is of cuda capability 6.1.",
        "    Minimum and Maximum cuda capability supported by this version of PyTorch is",
        "    (7.0) - (12.0)",
    ]
    d = diagnose(lines)
    assert d and (d[0].kind, d[0].found) == ("arch_unsupported", {"compute_capability": "6.1"})


@pytest.mark.parametrize(
    ("text", "kind", "found", "expected", "code"),
    [
        (  # TensorFlow's gpu_device.cc warning cut after its capability, the driver API's status after it
            "TensorFlow was not built with CUDA kernel binaries compatible with compute capability 10.0 "
            "CUDA_ERROR_INVALID_IMAGE",
            "other",
            {"compute_capability": "10.0"},
            {},
            "CUDA_ERROR_INVALID_IMAGE",
        ),
        (  # TensorFlow's cuDNN check (cuda_dnn.cc) cut inside the version it was compiled with, cuDNN's status after
            "Loaded runtime CuDNN library: 8.1.0 but source was compiled with: 8. CUDNN_STATUS_VERSION_MISMATCH",
            "cudnn_version_mismatch",
            {"cudnn": "8.1.0"},
            {},
            "CUDNN_STATUS_VERSION_MISMATCH",
        ),
    ],
)
def test_a_sentence_cut_before_a_status_code_reads_both(
    text: str, kind: str, found: dict[str, str], expected: dict[str, str], code: str
) -> None:
    # a status code alone is no sentence: the sentence cut short before it is read up to the code, and the code
    # beside it
    diagnoses = diagnose([text])
    assert [d.kind for d in diagnoses][:1] == [kind], [(d.kind, d.found, d.text) for d in diagnoses]
    assert (diagnoses[0].found, diagnoses[0].expected) == (found, expected)
    assert any(code in d.text for d in diagnoses[1:]), [d.text for d in diagnoses]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (  # tensorflow/python/platform/self_check.py, its CUDA advice without the "Could not find %r." before it
            "TensorFlow requires that this DLL be installed in a directory that is named in your %PATH% environment "
            "variable. Download and install CUDA 9.2 from this URL: https://developer.nvidia.com/cuda-toolkit",
            {"cuda": "9.2"},
        ),
    ],
)
def test_tensorflow_s_self_check_advice_alone_names_the_release(text: str, expected: dict[str, str]) -> None:
    [d] = diagnose([text])
    assert (d.kind, d.expected) == ("missing_library", expected)


def test_tensorflow_s_self_check_with_its_dll_is_one_diagnosis() -> None:
    [d] = diagnose(
        [
            "ImportError: Could not find 'cudart64_92.dll'. TensorFlow requires that this DLL be installed in a "
            "directory that is named in your %PATH% environment variable. Download and install CUDA 9.2 from this "
            "URL: https://developer.nvidia.com/cuda-toolkit"
        ]
    )
    assert d.expected == {"library": "cudart64_92.dll", "cuda": "9.2"}
