"""`explain` reads a message as users quote it (#22, "fragments and titles"): a title or a truncated log line that
lost its first words or its last, its punctuation, or that names a library and says it is not found in words of
its own. Measured on synthetic variants (tests/explain_variants.py) of every tune-part corpus message and every
message of explain_messages.toml, never on the held-back third; and guarded against false positives: no line of
those texts, nor its variants, reads a kind that neither the line nor its text says."""

from __future__ import annotations

from pathlib import Path

import pytest

from dnnresolve.explain import diagnose

from .explain_variants import end_cuts, start_cuts, tally, texts, unpunctuated

# Variants that keep their message's kind (of 1,462 start and end cuts and 633 without punctuation, on 2026-12-02;
# before the loose reading, of 1,415 and 610: 285, 1,109 and 346). These numbers may only grow.
KEPT = {"start": 1059, "end": 1366, "punctuation": 623}

# Lines whose variants read another kind than the line or its text (all before the loose reading too): a cuDNN
# sub-library's path cut before its undefined symbol, a TensorRT API error cut to its library name, a cuDNN
# handle's status read alone once its sentence is cut or unpunctuated. This list may only shrink.
KNOWN_OTHER_KIND = {
    ("m77cff49892", 0),
    ("m4e7cb69ea8", 0),
    ("m689638f882", 0),
    ("https://github.com/tensorflow/tensorflow/issues/39264", 0),
    ("https://github.com/tensorflow/tensorflow/issues/14111", 0),
    ("https://github.com/jax-ml/jax/issues/14480", 0),
    ("https://github.com/KosinskiLab/AlphaPulldown/issues/571", 0),
    # Corpus growth of #22, second pass: TensorFlow's "TF-TRT Warning: Could not find TensorRT" (unread whole; its
    # cuts read as a missing library), a cuDNN sub-library's undefined symbol cut before the symbol, JAX's cuDNN
    # handle errors (CUDNN_STATUS_INTERNAL_ERROR) read as another kind once cut.
    ("m171891a6eb", 0),
    ("m4b10f2b079", 1),
    ("m67e328e59e", 0),
    ("m7411fb7b28", 0),
    ("m7bdbd37bce", 0),
    ("ma5b6b29cfb", 0),
    ("mc2006fde53", 0),
    ("mf4b25cca2b", 0),
    # LoadLibrary's code read (#22): "Failed to load onnxruntime_providers_cuda.dll, error code: 1114" is a DLL whose
    # initialisation failed (kind other); cut before its code it is a loader's "failed to load" (a missing library)
    ("mc627f7fc54", 0),
    # a title 'Warning Tensorflow: "Invalid GPU Compute Capability"' (labelled arch_unsupported) its text does not
    # read: its quoted part alone is read, in any order, as TensorFlow's capability check (#22, explain.bag)
    ("m9013e9b2be", 0),
}


# Messages whose lower-cased, prefixed or suffixed variants lose their kind (corpus growth of #22, left to the
# reading): a TensorFlow title "The minimum required Cuda capability is 6.0 for the binary C-API releases ..." is
# read, but not once "Error: " or "[Bug] " precedes it. This list may only shrink.
KNOWN_UNKEPT = frozenset({"m39a529c99e"})


def test_variants_of_real_messages_keep_their_kind() -> None:
    counts = tally(KNOWN_UNKEPT)
    for sort in ("lower", "prefix", "suffix"):
        n, kind, both = counts[sort]
        assert kind == both == n, sort
    kept = {sort: counts[sort][1] for sort in KEPT}
    assert all(kept[sort] >= KEPT[sort] for sort in KEPT), kept


def _kind(text: str) -> str | None:
    found = diagnose(text.splitlines())
    return found[0].kind if found else None


def test_no_line_nor_its_variants_reads_a_kind_its_text_does_not_say() -> None:
    other: list[tuple[str, int, str, str | None, str | None]] = []
    for where, text in texts():
        said = _kind(text)
        for n, line in enumerate(text.splitlines()):
            if len(line.strip()) < 8 or (where, n) in KNOWN_OTHER_KIND:
                continue
            own = _kind(line)
            for variant in (unpunctuated(line), *start_cuts(line), *end_cuts(line)):
                got = _kind(variant)
                if got not in (None, said, own):
                    other.append((where, n, variant, said, got))
    assert other == []


READ = [
    # a title that lost its first words: TensorFlow's cuda_dnn.cc
    ("runtime CuDNN library: 8.0.5 but source was compiled with: 8.6.0", "cudnn_version_mismatch", {"cudnn": "8.0.5"}),
    # ... Paddle's version check
    (
        "installed Paddle is compiled with CUDA 11.7, but CUDA runtime version in your machine is 11.4",
        "driver_too_old",
        {"cuda": "11.4"},
    ),
    # a title without its punctuation: torch/utils/cpp_extension.py
    ("Unknown CUDA arch 8.6 or GPU not supported", "arch_unsupported", {"compute_capability": "8.6"}),
    (
        "The detected CUDA version 12.1 mismatches the version that was used to compile PyTorch 11.7",
        "cuda_version_mismatch",
        {"cuda": "12.1"},
    ),
    # a title cut at its end before its anchor is whole
    ("Torch not compiled with CUDA", "no_cuda_build", {}),
    # a runtime text behind CUDA's prefix, cut short
    ("CUDA error no kernel image", "arch_unsupported", {}),
    # a value quoted by the title's author
    ('[BUG]: undefined symbol: "ncclCommWindowRegister"', "missing_library", {}),
    # torchvision or torchaudio, CUDA and a word of conflict
    ("torchvision CUDA mismatch", "cuda_version_mismatch", {}),
    ("torch and torchaudio have different CUDA versions", "cuda_version_mismatch", {}),
]


@pytest.mark.parametrize(("text", "kind", "found"), READ)
def test_a_title_is_read_as_the_message_it_quotes(text: str, kind: str, found: dict[str, str]) -> None:
    diagnoses = diagnose([text])
    assert diagnoses, text
    assert (diagnoses[0].kind, diagnoses[0].found) == (kind, found)


NOT_LOADED = [
    # a library file name and words that say it is not there, in any order
    ("libcudnn_cnn_infer.so.8 not found", {"library": "libcudnn_cnn_infer.so.8", "cudnn": "8"}),
    ("Can't find libcudart.so.12 when importing", {"library": "libcudart.so.12", "cuda": "12"}),
    # cuDNN's loader ("Please make sure it is in your library path!") in a title's words
    (
        "Error: Please make sure cudnn_cnn_infer64_8.dll is in your library path!",
        {"library": "cudnn_cnn_infer64_8.dll"},
    ),
    # libnvidia-container's "load library failed", cut before the loader's own words
    ("nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1", {}),
    # Windows' code for a module not found, and "not found" in another language, next to an NVIDIA DLL
    ("[WinError 126] cudnn_cnn_infer64_8.dll", {"library": "cudnn_cnn_infer64_8.dll", "cudnn": "8"}),
    ("cublas64_12.dll 找不到指定的模块", {"library": "cublas64_12.dll", "cuda": "12"}),
    # zlib, which cuDNN 8.3+ loads on Windows (the catalog's [[library]] row)
    ("Could not locate zlibwapi.dll. Please make sure it is in your library path!", {"library": "zlibwapi.dll"}),
]


@pytest.mark.parametrize(("text", "expected"), NOT_LOADED)
def test_a_library_that_is_not_loaded_is_read_in_any_words(text: str, expected: dict[str, str]) -> None:
    diagnoses = diagnose([text])
    assert diagnoses, text
    assert diagnoses[0].kind == "missing_library"
    assert expected.items() <= diagnoses[0].expected.items()


def test_a_wrapped_title_is_read_as_one_line() -> None:
    # libnvidia-container's message wrapped inside the library's name, read by no sentence on either line alone
    lines = ["nvidia-container-cli: initialization error: load library failed: libnvidia-m", "l.so.1"]
    diagnoses = diagnose(lines)
    assert diagnoses and diagnoses[0].expected == {"library": "libnvidia-ml.so.1"}


@pytest.mark.parametrize(
    "text",
    [
        "NVIDIA driver on your system",  # "Found no NVIDIA driver on your system" without the words that say it
        "CUDA-capable device is detected",  # ... "no CUDA-capable device is detected"
        "message was printed above.",  # a sentence's boilerplate tail
        "getInferLibVersion symbol not found.",  # three words of a runtime text
        "libGL.so.1 not found",  # no NVIDIA library
        "libcudnn.so.8 is not compatible",  # an NVIDIA library, but nothing says it is not loaded
        "torchvision 0.15 is not compatible with torch 2.1",  # no CUDA in it: a release pairing
        "Epoch 3/10: loss 0.231, accuracy 0.914, using CUDA device 0",
    ],
)
def test_a_piece_that_does_not_say_which_error_is_no_diagnosis(text: str) -> None:
    assert diagnose([text]) == []


def test_a_small_file_is_read_loosely_as_its_text_is(tmp_path: Path) -> None:
    # `explain --file` of a saved title or fragment: the byte search finds no anchor, the loose reading still runs
    from dnnresolve.explain.scanner import scan_file

    lines = ["Issue #1234", "libcudnn_cnn_infer.so.8 not found", "Unknown CUDA arch 8.6 or GPU not supported"]
    path = tmp_path / "title.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    by_file = [(d.kind, d.line, d.expected) for d in scan_file(str(path)).diagnoses]
    assert by_file == [(d.kind, d.line, d.expected) for d in diagnose(lines)]
    assert [kind for kind, _, _ in by_file] == ["arch_unsupported", "missing_library"]
