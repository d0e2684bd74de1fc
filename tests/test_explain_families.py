"""Families that had no diagnosis (#22), each as its source prints it (the f-strings of the cited files filled in,
or a linker's own wording): the kind and versions explain reads."""

from __future__ import annotations

import pytest

from dnnresolve.explain import diagnose

CASES = [
    (  # torchvision/extension.py (pytorch/vision)
        "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major versions. "
        "PyTorch has CUDA Version=13.0 and torchvision has CUDA Version=12.8. Please reinstall the torchvision "
        "that matches your PyTorch install.",
        "cuda_version_mismatch",
        {"cuda": "12.8"},
        {"cuda": "13.0"},
    ),
    (  # src/torchaudio/_extension/utils.py (pytorch/audio)
        "RuntimeError: Detected that PyTorch and TorchAudio were compiled with different CUDA versions. "
        "PyTorch has CUDA version 12.8 whereas TorchAudio has CUDA version 12.9.",
        "cuda_version_mismatch",
        {"cuda": "12.9"},
        {"cuda": "12.8"},
    ),
    (  # the loader: cuDNN sub-libraries of two releases
        "OSError: /opt/conda/lib/libcudnn_adv_infer.so.8: undefined symbol: _ZN5cudnn3ops14GetOpsVersionEv, "
        "version libcudnn_ops_infer.so.8",
        "cudnn_version_mismatch",
        {},
        {},
    ),
    (  # the loader: cuBLAS and cuBLASLt of two CUDA releases
        "ImportError: /v/libcublas.so.12: undefined symbol: cublasLtHSHMatmulAlgoInit, version libcublasLt.so.12",
        "cuda_version_mismatch",
        {},
        {},
    ),
    (  # the loader: torch built against a newer NCCL than the one loaded
        "ImportError: /venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
        "ncclCommWindowRegister",
        "missing_library",
        {},
        {},
    ),
    (  # torch/utils/cpp_extension.py (pytorch/pytorch)
        "ValueError: Unknown CUDA arch (12.0+PTX) or GPU not supported",
        "arch_unsupported",
        {"compute_capability": "12.0"},
        {},
    ),
    (  # jax_plugins/cuda/__init__.py (jax-ml/jax)
        "CUDA backend failed to initialize: Found cuFFT version 11200, but JAX was built against version 11300, "
        "which is newer.",
        "cuda_version_mismatch",
        {},
        {},
    ),
    (  # xla/pjrt/pjrt_api.cc (openxla/xla)
        "INVALID_ARGUMENT: Mismatched PJRT plugin PJRT API version (0.58) and framework PJRT API version 0.54).",
        "no_cuda_build",
        {},
        {},
    ),
    (  # python/paddle/device/__init__.py (PaddlePaddle/Paddle)
        "ValueError: The device should not be 'gpu', since PaddlePaddle is not compiled with CUDA",
        "no_cuda_build",
        {},
        {},
    ),
    (  # python/paddle/base/framework.py (PaddlePaddle/Paddle)
        "UserWarning: You are using GPU version Paddle, but your CUDA device is not set properly. CPU device will be "
        "used by default.",
        "init_failure",
        {},
        {},
    ),
    (  # onnxruntime/python/onnxruntime_inference_collection.py (microsoft/onnxruntime)
        "UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider names.Available "
        "providers: 'AzureExecutionProvider, CPUExecutionProvider'",
        "no_cuda_build",
        {},
        {},
    ),
    (
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
        "init_failure",
        {},
        {},
    ),
    (  # the corpus README's reading: the library loaded first, the engine's second
        "[TRT] [E] 6: The engine plan file is not compatible with this version of TensorRT, expecting library "
        "version 10.0.1 got 10.3.0, please rebuild.",
        "other",
        {"tensorrt": "10.0.1"},
        {"tensorrt": "10.3.0"},
    ),
]


@pytest.mark.parametrize(("text", "kind", "found", "expected"), CASES)
def test_family_is_read(text: str, kind: str, found: dict[str, str], expected: dict[str, str]) -> None:
    diagnoses = diagnose([text])
    assert diagnoses, text
    d = diagnoses[0]
    assert (d.kind, d.found, d.expected) == (kind, found, expected)


def test_a_symbol_of_no_nvidia_library_is_no_diagnosis() -> None:
    # torch's own symbol (a torch extension built for another torch): not a mix of NVIDIA releases
    assert diagnose(["ImportError: /x/_C.so: undefined symbol: _ZN3c104cuda9SetDeviceEi"]) == []


WORDINGS = [
    (
        "ptxas fatal   : Value 'sm_90a' is not defined for option 'gpu-name'",
        "arch_unsupported",
        {"compute_capability": "9.0"},
    ),
    ("nvcc fatal   : Unsupported gpu architecture 'compute_35", "arch_unsupported", {"compute_capability": "3.5"}),
    ("No kernel image available for execution", "arch_unsupported", {}),
    ("the provided PTX was complied with an unsupported toolchain", "driver_too_old", {}),
    (
        "FAIL:LoadLibrary failed with error 126 when trying to load onnxruntime_providers_cuda.dll",
        "missing_library",
        {"library": "onnxruntime_providers_cuda.dll"},
    ),
    ("error while loading shared libraries: libnvinfer.so.10", "missing_library", {"library": "libnvinfer.so.10"}),
    ("RuntimeError: cuBLAS has not been initialized", "init_failure", {}),
    (
        "nvidia-container-cli: requirement error: unsatisfied condition: driver >= 470",
        "driver_too_old",
        {"driver": "470"},
    ),
]


@pytest.mark.parametrize(("text", "kind", "versions"), WORDINGS)
def test_other_wordings_of_known_messages(text: str, kind: str, versions: dict[str, str]) -> None:
    diagnoses = diagnose([text])
    assert diagnoses, text
    assert diagnoses[0].kind == kind
    assert versions.items() <= {**diagnoses[0].found, **diagnoses[0].expected}.items()
