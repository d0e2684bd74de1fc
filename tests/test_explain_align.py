"""`explain` reads a title that paraphrases a catalog sentence (#22): its words in order with some left out, both
ends cut, a failure said in other words (``explain.align``). Measured on paraphrases (tests/explain_variants.py)
of tune-part corpus messages and explain_messages.toml, never on the held-back third; guarded against sentences
that share a catalog sentence's words but are no error, or another error."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable

import pytest

from dnnresolve.explain import diagnose

from .explain_variants import paraphrase_tally

# Paraphrases that keep their message's kind (of 9,703 with words left out inside, 1,700 cut at both ends and 393
# with the failure in other words, on 2026-12-02; before the alignment, of 9,677, 1,692 and 393: 8,249, 653 and
# 325), and that keep their kind and versions (before: 5,962, 465 and 318). These numbers may only grow.
PARAPHRASES_KEPT = {"middle": 9097, "both": 1328, "swap": 386}
PARAPHRASES_ALL_KEPT = {"middle": 7612, "both": 891, "swap": 377}


def test_paraphrases_of_real_messages_keep_their_kind() -> None:
    counts = paraphrase_tally()
    kept = {sort: kind for sort, (_, kind, _) in counts.items()}
    assert all(kept[sort] >= PARAPHRASES_KEPT[sort] for sort in PARAPHRASES_KEPT), kept
    all_kept = {sort: both for sort, (_, _, both) in counts.items()}
    assert all(all_kept[sort] >= PARAPHRASES_ALL_KEPT[sort] for sort in PARAPHRASES_ALL_KEPT), all_kept


READ = [
    # ONNX Runtime's provider check, its first and middle words left out
    ("CUDAExecutionProvider not available", "no_cuda_build", {}, {}),
    # NVML's sentence without "Driver/library"
    ("Failed to initialize NVML: version mismatch", "init_failure", {}, {}),
    # Caffe2's cuDNN check without "versions"
    (
        "cuDNN compiled (7102) and runtime (7005) mismatch",
        "cudnn_version_mismatch",
        {"cudnn": "7.0.5"},
        {"cudnn": "7.1.2"},
    ),
    # TensorFlow's cuDNN check without "library:"
    (
        "Loaded runtime CuDNN 8.0.4 but source was compiled with: 8.1.0",
        "cudnn_version_mismatch",
        {"cudnn": "8.0.4"},
        {"cudnn": "8.1.0"},
    ),
    # JAX's pairing check without "with", the failure of Paddle's device check said as "isn't"
    ("jaxlib version 0.4.7 is newer than and incompatible jax version 0.3.25", "other", {}, {}),
    ("You are using GPU version Paddle, but your CUDA device isn't set properly", "init_failure", {}, {}),
    # JAX's PJRT struct check without "expected 48"
    ("Unexpected PJRT_FFI_UserData_Add_Args size: got 40", "no_cuda_build", {}, {}),
]


@pytest.mark.parametrize(("text", "kind", "found", "expected"), READ)
def test_a_paraphrased_title_is_read_as_the_message_it_quotes(
    text: str, kind: str, found: dict[str, str], expected: dict[str, str]
) -> None:
    diagnoses = diagnose([text])
    assert diagnoses, text
    assert (diagnoses[0].kind, diagnoses[0].found, diagnoses[0].expected) == (kind, found, expected)


VALUES = [
    # a piece of TensorFlow's sentence stops where the GPU's name in brackets is left out: the capability after it
    ("Ignoring visible gpu device with Cuda compute capability 3.0", {"compute_capability": "3.0"}, {}),
    # MXNet's cuDNN check without "compiled-against version"
    ("cuDNN lib mismatch: linked-against version 8200 != 8100", {"cudnn": "8.2.0"}, {"cudnn": "8.1.0"}),
    # a library's group reads a library file name, quoted or in brackets, where the sentence lost a word
    ("Could not dynamic library 'libnvinfer.so.6'", {}, {"library": "libnvinfer.so.6"}),
    ("Could not dynamic library 'cudart64_110.dll'", {}, {"library": "cudart64_110.dll", "cuda": "11.0"}),
    (
        "The third-party dynamic library (cudnn64_7.dll) that Paddle depends is not configured correctly.",
        {},
        {"library": "cudnn64_7.dll", "cudnn": "7"},
    ),
    # PyTorch's driver check, its version in brackets
    ("The NVIDIA driver on your system is too old (found 11060)", {"cuda": "11.6"}, {}),
    # PyTorch's cuDNN check, "version" and "found" left out (the check says "found" or "linked against")
    (
        "cuDNN incompatibility: PyTorch compiled against 8.9.2 but runtime version 8.7.0",
        {"cudnn": "8.7.0"},
        {"cudnn": "8.9.2"},
    ),
    # the extension builder's CUDA check without "PyTorch"
    (
        "The detected CUDA version (12.1) mismatches the version that was used to compile (11.3)",
        {"cuda": "12.1"},
        {"cuda": "11.3"},
    ),
]


@pytest.mark.parametrize(("text", "found", "expected"), VALUES)
def test_a_paraphrased_title_keeps_the_versions_it_names(
    text: str, found: dict[str, str], expected: dict[str, str]
) -> None:
    diagnoses = diagnose([text])
    assert diagnoses, text
    assert (diagnoses[0].found, diagnoses[0].expected) == (found, expected)


def test_explain_json_reads_a_paraphrased_title(run_cli: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    out = run_cli("explain", "--json", "--offline", "--no-detect", "CUDAExecutionProvider not available")
    assert out.returncode == 1, out.stderr  # (1: a problem found)
    first = json.loads(out.stdout)["diagnoses"][0]
    assert (first["kind"], first["text"]) == ("no_cuda_build", "CUDAExecutionProvider not available")


NOT_READ = [
    # a catalog sentence's words, but no error
    "cuDNN is available",
    "installed CUDA 11.8 successfully",
    "torch.cuda.is_available() returns True",
    "CUDA 12.1 and cuDNN 8.9 installed, GPU detected",
    "nvidia-smi shows driver 535 and CUDA version 12.2",
    "TensorRT engine built successfully",
    "onnxruntime-gpu CUDAExecutionProvider works",
    "CUDAExecutionProvider is available",
    "Loaded cuDNN version 8902",
    "jaxlib version 0.4.12 works with jax 0.4.12",
    "How to check the cuDNN version PyTorch was compiled against",
    "Driver version 535 is sufficient for CUDA runtime 12.2",
    "cuDNN version 8.9 is compatible with CUDA 12",
    # a negation of a word of the author's own, not of the sentence's
    "no problem with the kernel image",
    # a fragment two messages of different kinds share (JAX's checks of cuDNN and of the other CUDA libraries)
    "Version JAX was built against:",
]


@pytest.mark.parametrize("text", NOT_READ)
def test_words_of_a_sentence_that_say_no_error_are_no_diagnosis(text: str) -> None:
    assert diagnose([text]) == []


OTHER = [
    # the sentence's own guard: libnvidia-container's "initialization error: load library failed" is a loader's
    ("nvidia-container-cli: initialization error: load library failed:", "init_failure"),
    # a distinctive word in place of the sentence's next one: TF-TRT's libraries, not "some GPU libraries"
    ("Cannot dlopen some TensorRT libraries", "init_failure"),
    ("W py_utils.cc:38] TF-TRT Warning: Cannot dlopen some T", "init_failure"),
]


@pytest.mark.parametrize(("text", "kind"), OTHER)
def test_a_line_that_goes_on_as_another_message_is_not_read_as_this_one(text: str, kind: str) -> None:
    assert kind not in [d.kind for d in diagnose([text])]


WORDS = [
    # an NVIDIA library and words that say a symbol in it is missing: a cuBLAS of another CUDA release
    ("libcublasLt.so.11 not defined", "cuda_version_mismatch"),
    ("undefined symbol in libcudnn_ops_infer.so.8", "cudnn_version_mismatch"),
    # ONNX Runtime's GPU provider and words of its absence, or the CPU provider alone: the CPU package
    ("OnnxRuntime does not see CUDAExecutionProvider with CUDA 12.4", "no_cuda_build"),
    ("Cuda provider not showing up on Google Colab", "no_cuda_build"),
    ("TensorrtExecutionProvider missing", "no_cuda_build"),
    ("onnxruntime-gpu not using GPU, only CPUExecutionProvider available", "no_cuda_build"),
]


@pytest.mark.parametrize(("text", "kind"), WORDS)
def test_nvidia_and_onnx_runtime_words_are_read_in_any_order(text: str, kind: str) -> None:
    diagnoses = diagnose([text])
    assert diagnoses, text
    assert diagnoses[0].kind == kind


@pytest.mark.parametrize(
    "text",
    [
        "libfoo.so.1 undefined symbol",  # no NVIDIA library
        "CPUExecutionProvider not available",  # the CPU provider, not the GPU's
        "Using CPUExecutionProvider",
        # the provider's library failed to load: the loader's words, not the CPU package
        "CUDAExecutionProvider not available: failed to load libcublasLt.so.11",
    ],
)
def test_words_near_a_provider_or_a_symbol_that_say_no_such_error(text: str) -> None:
    assert "no_cuda_build" not in [d.kind for d in diagnose([text])]
    assert "cuda_version_mismatch" not in [d.kind for d in diagnose([text])]
