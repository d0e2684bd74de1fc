"""Messages read by rules taken from the printing software's own source (#22), each as that source prints it (the
cited file's format filled in) or as a title quotes it: the kind and versions `explain` tells the user, and texts
of the same shape that are no such problem."""

from __future__ import annotations

import pytest

from dnnresolve.explain import diagnose

CASES = [
    (  # tensorflow/compiler/tf2tensorrt/utils/py_utils.cc, its prefix from tf2tensorrt/common/utils.h
        "2024-05-10 11:33:15.185131: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: "
        "Could not find TensorRT",
        "missing_library",
        {},
        {},
    ),
    (  # the same, before TensorFlow 2.12
        "W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:30] Cannot dlopen some TensorRT libraries. If you would "
        "like to use Nvidia GPU with TensorRT, please make sure the missing libraries mentioned above are installed "
        "properly.",
        "missing_library",
        {},
        {},
    ),
    (  # tensorflow/python/compiler/tensorrt/trt_convert.py
        "RuntimeError: Tensorflow has not been built with TensorRT support.",
        "missing_library",
        {},
        {},
    ),
    ("Could not find TensorRT: how do I fix this warning?", "missing_library", {}, {}),  # a title
    (  # aten/src/ATen/core/dispatch/OperatorEntry.cpp, an extension's operator
        "NotImplementedError: Could not run 'torchaudio::rnnt_loss' with arguments from the 'CUDA' backend. This "
        "could be because the operator doesn't exist for this backend, or was omitted during the selective/custom "
        "build process (if using custom build).",
        "no_cuda_build",
        {},
        {},
    ),
    (  # the same, a title cut after the backend
        "NotImplementedError: Could not run 'torchvision::roi_align' with arguments from the 'CUDA' backend. This co",
        "no_cuda_build",
        {},
        {},
    ),
    (  # tensorflow/stream_executor/stream_executor_pimpl.cc, as jaxlib raises it
        "jaxlib.xla_extension.XlaRuntimeError: UNIMPLEMENTED: DNN library is not found.",
        "missing_library",
        {},
        {},
    ),
    (  # tensorflow/stream_executor/cuda/cuda_dnn.cc (TensorFlow 0.x/1.x's dynload shim)
        "F tensorflow/stream_executor/cuda/cuda_dnn.cc:221] Check failed: s.ok() could not find cudnnCreate in cudnn "
        "DSO; dlerror: /usr/lib/python3.5/site-packages/tensorflow/python/_pywrap_tensorflow.so: undefined symbol: "
        "cudnnCreate",
        "missing_library",
        {},
        {},
    ),
    ("Invalid handle. Cannot load symbol cudnnCreateTensorDescriptor", "missing_library", {}, {}),  # cuDNN 9's loader
    (  # dso_loader.cc quoting dlerror: the file missing is the one dlerror names, not the one asked for
        "W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load dynamic library "
        "'libnvinfer_plugin.so.7'; dlerror: libcudnn.so.8: cannot open shared object file: No such file or directory",
        "missing_library",
        {},
        {"library": "libcudnn.so.8", "cudnn": "8"},
    ),
    (  # LoadLibrary's system error code 1114 (winerror.h): the DLL is there, its initialisation failed
        "[2212] Failed to load onnxruntime_providers_cuda.dll, error code: 1114",
        "other",
        {},
        {"library": "onnxruntime_providers_cuda.dll"},
    ),
    (  # ... and 126: a DLL it needs is not on PATH
        "Failed to load C:\\app\\onnxruntime_providers_cuda.dll, error code: 126",
        "missing_library",
        {},
        {"library": "onnxruntime_providers_cuda.dll"},
    ),
    (  # paddle/phi/backends/dynload/dynamic_loader.cc: the note Paddle adds when cuDNN's DLL did not load
        "You should do this according to your CUDA installation directory and CUDNN version.",
        "missing_library",
        {},
        {},
    ),
    # cudaError_t by its number alone: one every header numbers so, one only the headers before CUDA 10.1 define
    # (cudaErrorNoDevice was 38 there, 100 since), one only the newer define
    ("RuntimeError: cuda runtime error (35)", "driver_too_old", {}, {}),
    ("RuntimeError: cuda runtime error (38)", "init_failure", {}, {}),
    ("cuda runtime error (209)", "arch_unsupported", {}, {}),
]


@pytest.mark.parametrize(("text", "kind", "found", "expected"), CASES, ids=[c[0][:60] for c in CASES])
def test_a_message_reads_as_its_source_means_it(
    text: str, kind: str, found: dict[str, str], expected: dict[str, str]
) -> None:
    ds = diagnose(text.splitlines())
    assert ds, text
    assert (ds[0].kind, ds[0].found, ds[0].expected) == (kind, found, expected)


NOT_THESE = [
    # the dispatcher's other backends: an operator unsupported there, not a build without CUDA
    "RuntimeError: Could not run 'aten::add.out' with arguments from the 'SparseCUDA' backend.",
    "NotImplementedError: Could not run 'quantized::linear' with arguments from the 'QuantizedCUDA' backend.",
    "NotImplementedError: Could not run 'aten::empty.memory_format' with arguments from the 'Meta' backend.",
    # CMake's FindTensorRT at build time, not TensorFlow's check
    "-- Could NOT find TensorRT (missing: TensorRT_LIBRARY TensorRT_INCLUDE_DIR)",
    # a program's own symbol or DLL, not cuDNN's or NVIDIA's
    "Cannot load symbol 'GameUpdateAndRender': undefined symbol",
    "Failed to load settings.dll, error code: 1114",
    # a number two eras of cudaError_t give two meanings (8: invalid device function before CUDA 10.1, profiler
    # already stopped since), and one no header defines
    "RuntimeError: cuda runtime error (8)",
    "RuntimeError: cuda runtime error (77)",
]


@pytest.mark.parametrize("text", NOT_THESE, ids=[t[:60] for t in NOT_THESE])
def test_a_text_of_the_same_shape_is_no_such_problem(text: str) -> None:
    assert [d.id for d in diagnose(text.splitlines())] == []


TITLES = [
    # a library name spelt with a space for its underscore
    ("cudnn cnn_infer64_8.dll is not found", "missing_library", {"cudnn": "8"}),
    # a name with words of another script written against it, whatever they say
    ("cublas64_11.dll识别不到", "missing_library", {"library": "cublas64_11.dll", "cuda": "11"}),
    ("[Bug] libcudnn_ops.so.9がない", "missing_library", {"library": "libcudnn_ops.so.9", "cudnn": "9"}),
    # a title that is the name and nothing else
    ('"libcudart.so.11.0"?', "missing_library", {"library": "libcudart.so.11.0", "cuda": "11.0"}),
    # an import error naming the library
    ("ImportError on Windows with cudnn64_8.dll", "missing_library", {"library": "cudnn64_8.dll", "cudnn": "8"}),
    # TensorRT's engine check in a title's words (kind other: no kind names TensorRT)
    ("TensorRT engine version mismatch after upgrading", "other", {}),
    ("Deserializing engine fails: version incompatible", "other", {}),
]


@pytest.mark.parametrize(("text", "kind", "expected"), TITLES, ids=[t[0][:60] for t in TITLES])
def test_a_title_names_the_library_or_check_in_its_own_way(text: str, kind: str, expected: dict[str, str]) -> None:
    ds = diagnose([text])
    assert ds, text
    assert ds[0].kind == kind
    assert expected.items() <= ds[0].expected.items()


TITLES_OF_NOTHING = [
    "How to use cudnn64_8.dll with torch",
    "libcudart.so.11.0 installed fine",
    "[10540] cudart64_12.dll loaded successfully",
    "cudnn64_8.dll на Windows",
    "TensorRT 8.6 supports CUDA 12",
    "engine version mismatch",
]


@pytest.mark.parametrize("text", TITLES_OF_NOTHING)
def test_a_title_of_the_same_words_that_says_no_problem_reads_nothing(text: str) -> None:
    assert [d.id for d in diagnose([text])] == []
