"""The frameworks' own vocabulary read in any wording (#22): torch's Windows DLL loader and the DLLs of its own it
names, a library file name with words of trouble, an undefined versioned symbol, cuDNN or jax/jaxlib with words of
conflict, JAX's library checks, TensorFlow's capability filter, Paddle's CPU build, torch's arch phrases. Each rule
with the texts it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from dnnresolve.explain import diagnose


def _first(text: str) -> Any:
    diagnoses = diagnose(text.splitlines())
    assert diagnoses, text
    return diagnoses[0]


# ---------------------------------------------------------------- torch's Windows DLL loader (torch/__init__.py)

TORCH_DLLS = [
    # (message, kind, expected)
    (
        'OSError: [WinError 127] The specified procedure could not be found. Error loading "C:\\py\\lib\\site-packages'
        '\\torch\\lib\\nvfuser_codegen.dll" or one of its dependencies.',
        "missing_library",
        {"library": "nvfuser_codegen.dll"},
    ),
    (
        'OSError: [WinError 126] The specified module could not be found. Error loading "C:\\venv\\torch\\lib\\'
        'shm.dll" or one of its dependencies.',
        "missing_library",
        {"library": "shm.dll"},
    ),
    (
        'Error loading "C:\\venv\\Lib\\site-packages\\torch\\lib\\c10_cuda.dll" or one of its dependencies.',
        "missing_library",
        {"library": "c10_cuda.dll"},
    ),
    # an NVIDIA name still decodes its component and major
    (
        'OSError: [WinError 126] Error loading "D:\\sd\\torch\\lib\\cudnn_cnn_infer64_8.dll" or one of its '
        "dependencies.",
        "missing_library",
        {"library": "cudnn_cnn_infer64_8.dll", "cudnn": "8"},
    ),
    # a DLL that is there but cannot run or initialise: nothing is missing
    (
        'OSError: [WinError 182] The operating system cannot run %1. Error loading "T:\\py\\torch\\lib\\'
        'nvfuser_codegen.dll" or one of its dependencies.',
        "other",
        {"library": "nvfuser_codegen.dll"},
    ),
    (
        "OSError: [WinError 1114] A dynamic link library (DLL) initialization routine failed. Error loading "
        '"C:\\py\\torch\\lib\\c10.dll" or one of its dependencies.',
        "other",
        {"library": "c10.dll"},
    ),
    # its code cut away, its text left (Windows' English text for 182)
    (
        'The operating system cannot run %1. Error loading "T:\\py\\torch\\lib\\nvfuser_codegen.dll" or one of its '
        "dependencies.",
        "other",
        {"library": "nvfuser_codegen.dll"},
    ),
    # titles: torch's own DLL names with a loader's words
    ("Unable to load nvfuser_codegen.dll", "missing_library", {"library": "nvfuser_codegen.dll"}),
    ("OSError: Error loading caffe2_nvrtc.dll", "missing_library", {"library": "caffe2_nvrtc.dll"}),
    ("WinError 127 on nvfuser_codegen.dll", "missing_library", {"library": "nvfuser_codegen.dll"}),
    (
        "[Bug]: error loading torch_cuda.dll or one of its dependencies",
        "missing_library",
        {"library": "torch_cuda.dll"},
    ),
    # a WinError 126 line names any DLL as not loaded
    ("OSError: [WinError 126] on fbgemm.dll", "missing_library", {"library": "fbgemm.dll"}),
]


@pytest.mark.parametrize(("text", "kind", "expected"), TORCH_DLLS)
def test_torch_s_dll_loader_names_its_own_dlls_too(text: str, kind: str, expected: dict[str, str]) -> None:
    d = _first(text)
    assert d.kind == kind
    assert expected.items() <= d.expected.items()


@pytest.mark.parametrize(
    "text",
    [
        "Error loading config.dll",  # no loader's sentence, no WinError, no name of torch's or NVIDIA's
        "copied nvfuser_codegen.dll into the folder, works now",
        "OSError: [WinError 5] Access is denied: 'C:\\tmp\\x.txt'",
    ],
)
def test_a_dll_without_torch_s_loader_words_is_no_diagnosis(text: str) -> None:
    assert diagnose([text]) == []


# ---------------------------------------------------------------- a library file name and words of trouble


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cudnn_ops_infer64_8.dll issues", {"library": "cudnn_ops_infer64_8.dll", "cudnn": "8"}),
        ("hi. i have problem with cudart64_90.dll", {"library": "cudart64_90.dll", "cuda": "9.0"}),
        ("Trouble with libcudnn.so.7 on Ubuntu", {"library": "libcudnn.so.7", "cudnn": "7"}),
        ("Cudnn_cnn_infer64_8.dll not located. Please advice.", {"library": "Cudnn_cnn_infer64_8.dll", "cudnn": "8"}),
    ],
)
def test_a_library_name_with_words_of_trouble_is_a_library_not_loaded(text: str, expected: dict[str, str]) -> None:
    d = _first(text)
    assert d.kind == "missing_library"
    assert expected.items() <= d.expected.items()


@pytest.mark.parametrize(
    "text",
    [
        "installed cudart64_110.dll",
        "copied cudnn64_8.dll to bin, works now",
        "No issues with cudart64_110.dll after the update",
        "Where does libcudnn.so.8 come from?",
    ],
)
def test_a_library_name_without_trouble_is_no_diagnosis(text: str) -> None:
    assert diagnose([text]) == []


# ---------------------------------------------------------------- an undefined versioned symbol, cut short


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("libcublasLt.so.11 not defined", "cuda_version_mismatch"),
        ("version libcudnn_ops_infer.so.8 not defined", "cudnn_version_mismatch"),
        ("libcusparse.so.12 undefined symbol", "cuda_version_mismatch"),
    ],
)
def test_an_nvidia_library_and_not_defined_is_an_undefined_symbol(text: str, kind: str) -> None:
    assert _first(text).kind == kind


def test_not_defined_of_no_nvidia_library_is_no_diagnosis() -> None:
    assert diagnose(["libfoo.so.1 not defined"]) == []


# ---------------------------------------------------------------- TensorFlow's device filter (gpu_device.cc)


@pytest.mark.parametrize(
    ("text", "found", "expected"),
    [
        ("The minimum required Cuda capability is 6.0 for the binary releases", {}, {"compute_capability": "6.0"}),
        ("minimum req: Cuda compute capability 3.5", {}, {"compute_capability": "3.5"}),
        (
            "Ignoring GPU with compute capability 3.0, minimum required 3.5",
            {"compute_capability": "3.0"},
            {"compute_capability": "3.5"},
        ),
    ],
)
def test_tensorflow_s_minimum_capability_is_what_the_build_needs(
    text: str, found: dict[str, str], expected: dict[str, str]
) -> None:
    d = _first(text)
    assert d.kind == "arch_unsupported"
    assert d.found == found
    assert d.expected == expected


PTX = (
    "W0000 00:00:1753232013.685876   24341 gpu_device.cc:2431] TensorFlow was not built with CUDA kernel binaries "
    "compatible with compute capability 12.0. CUDA kernels will be jit-compiled from PTX, which could take 30 minutes "
    "or longer."
)


def test_tensorflow_s_ptx_jit_warning_alone_is_a_slow_start() -> None:
    d = _first(PTX)
    assert (d.kind, d.found) == ("other", {"compute_capability": "12.0"})


# ---------------------------------------------------------------- Paddle's CPU build (PaddleDetection / PaddleOCR)


def test_paddle_s_config_check_on_a_cpu_build_is_no_cuda_build() -> None:
    d = _first(
        "2020-07-23 09:22:17,124-ERROR: Config use_gpu cannot be set as true while you are using paddlepaddle cpu "
        "version !\nPlease try:\n        1. Install paddlepaddle-gpu to run model on GPU"
    )
    assert d.kind == "no_cuda_build"


# ---------------------------------------------------------------- torch's arch phrases


@pytest.mark.parametrize(
    ("text", "cc"),
    [
        ("CUDA 8.7+PTX isn't in the list of supported arches", "8.7"),
        ("Is PoseRBPF compatible with cuda arch 8.6 (RTX 3080)?", "8.6"),
        ("arch 9.0 not supported by this build", "9.0"),
    ],
)
def test_an_architecture_number_with_support_words_is_read(text: str, cc: str) -> None:
    d = _first(text)
    assert (d.kind, d.found.get("compute_capability")) == ("arch_unsupported", cc)


@pytest.mark.parametrize(
    "text",
    ["CUDA 11.8 is supported", "Upgraded to CUDA 12.1, compatible with torch 2.1", "python 3.8 is not supported"],
)
def test_a_cuda_release_is_no_architecture(text: str) -> None:
    assert all(d.kind != "arch_unsupported" for d in diagnose([text]))


# ---------------------------------------------------------------- cuDNN, jax / jaxlib, JAX's checks in a title's words


@pytest.mark.parametrize(
    "text",
    [
        "cuDNN version mismatch (again)",
        "CuDNN initialization fails due to version mismatch",
        "CUDNN incompatible with the framework's build",
    ],
)
def test_cudnn_with_a_word_of_conflict_is_a_cudnn_mismatch(text: str) -> None:
    assert _first(text).kind == "cudnn_version_mismatch"


@pytest.mark.parametrize(
    "text", ["cuDNN 8.9 installed", "Which cuDNN version for CUDA 12?", "cuDNN vs MIOpen performance"]
)
def test_cudnn_without_conflict_is_no_diagnosis(text: str) -> None:
    assert diagnose([text]) == []


def test_jax_and_jaxlib_of_different_versions_is_read_with_both() -> None:
    d = _first("Version different between jaxlib (0.4.12) and jax (0.4.11)")
    assert d.kind == "other"
    assert d.id == "jaxlib-newer-than-jax"


def test_jax_and_jaxlib_without_conflict_is_no_diagnosis() -> None:
    assert diagnose(["Installed jaxlib (0.4.12) and jax (0.4.12) on Ubuntu"]) == []


@pytest.mark.parametrize(
    "text",
    ["Upgrading to cuda-13.0.2-2 causes CuBLAS version checks to fail", "cuSPARSE version check failed on import"],
)
def test_a_cuda_library_s_failed_version_check_is_jax_s(text: str) -> None:
    assert _first(text).kind == "cuda_version_mismatch"


# ---------------------------------------------------------------- TensorFlow's cuDNN check cut before its subject

# TensorFlow's check prints "Loaded runtime CuDNN library: A but source was compiled with: B" (cuda_dnn.cc); a title
# or a pasted tail keeps only its second half, which no other check prints, so it still names the two cuDNNs
TF_CUDNN_TAILS = [
    ("7.4.1 but source was compiled with: 7.6.0", "tf-cudnn-mismatch-dotted", "7.4.1", "7.6.0"),
    ("runtime library 8.0.4 but source was compiled with 8.1.0", "tf-cudnn-mismatch-dotted", "8.0.4", "8.1.0"),
    ("7104 but source was compiled with 7005", "tf-cudnn-mismatch-encoded", "7.1.4", "7.0.5"),
]


@pytest.mark.parametrize(("text", "entry", "found", "expected"), TF_CUDNN_TAILS)
def test_tensorflow_cudnn_check_read_from_its_second_half(text: str, entry: str, found: str, expected: str) -> None:
    d = _first(text)
    assert (d.id, d.kind) == (entry, "cudnn_version_mismatch")
    assert (dict(d.found), dict(d.expected)) == ({"cudnn": found}, {"cudnn": expected})
