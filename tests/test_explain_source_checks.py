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
]


@pytest.mark.parametrize("text", NOT_THESE, ids=[t[:60] for t in NOT_THESE])
def test_a_text_of_the_same_shape_is_no_such_problem(text: str) -> None:
    assert [d.id for d in diagnose(text.splitlines())] == []
