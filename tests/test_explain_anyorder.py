"""`explain` reads a title that says a message's words in another order (#22): its clauses swapped, the library or
the architecture it names first, as users word titles (``explain.anyorder``). Measured on reorderings and titles of
tune-part corpus messages and explain_messages.toml (tests/explain_variants.py), never on the held-back third;
guarded by a set of sentences that name CUDA's words but no error (tests/data/explain_negatives.toml)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable

import pytest

from .explain_variants import false_positives, negatives, reorder_tally, title_tally

# Reorderings and titles that keep their message's kind and versions, on 2026-12-02 (before the reading in any order:
# clauses 157 of 248, name_first 118 of 170, rotated 699 of 1,038, library 777 of 777; titled_moved 516 of 726,
# titled 3,939 of 3,942), and that keep their kind (before: clauses 242, rotated 961). These numbers may only grow.
REORDERS_ALL_KEPT = {"clauses": 218, "name_first": 164, "library": 777, "rotated": 934}
REORDERS_KEPT = {"clauses": 244, "name_first": 168, "library": 777, "rotated": 1005}
TITLES_ALL_KEPT = {"titled": 3939, "lower_titled": 1314, "ticked": 175, "titled_moved": 652}
# Negative sentences explain reads as an error (before: 8 of 94; the rest are word rules' readings of "sm_90" and a
# piece of TensorFlow's cuDNN check): may only fall
FALSE_POSITIVES = 5


def test_reordered_messages_keep_their_kind_and_versions() -> None:
    counts = reorder_tally()
    assert all(counts[s][2] >= n for s, n in REORDERS_ALL_KEPT.items()), counts
    assert all(counts[s][1] >= n for s, n in REORDERS_KEPT.items()), counts


def test_titled_messages_keep_their_kind_and_versions() -> None:
    counts = title_tally()
    assert all(counts[s][2] >= n for s, n in TITLES_ALL_KEPT.items()), counts


def test_sentences_that_name_no_error_get_no_diagnosis() -> None:
    wrong = false_positives()
    assert len(negatives()) >= 90
    assert len(wrong) <= FALSE_POSITIVES, wrong


@pytest.mark.parametrize(
    "text",
    [
        # a release note: versions and CUDA's everyday words, no failure (read as Paddle's CUDA/cuDNN check before)
        "[CUDA 13][cuDNN] Bump CUDA 13 to cuDNN 9.13.0",
        # a feature request (read as TensorFlow's capability check before)
        "feat: support CUDA GPU Compute Capability 9.0 and 10.0",
    ],
)
def test_a_release_note_naming_versions_is_no_diagnosis(
    text: str, run_cli: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    out = run_cli("explain", "--json", "--offline", "--no-detect", text)
    assert json.loads(out.stdout)["diagnoses"] == [], out.stdout


READ = [
    # the library file first, the loader's sentence after it
    (
        "libcudart.so.11.0: Could not load dynamic library",
        "missing_library",
        {},
        {"library": "libcudart.so.11.0", "cuda": "11.0"},
    ),
    (
        "cudnn64_8.dll: Could not load dynamic library",
        "missing_library",
        {},
        {"library": "cudnn64_8.dll", "cudnn": "8"},
    ),
    # nvcc's architecture first
    ("compute_75: Unsupported gpu architecture", "arch_unsupported", {"compute_capability": "7.5"}, {}),
    (
        "[Bug] sm_89: nvcc fatal : Value is not defined for option 'gpu-architecture'",
        "arch_unsupported",
        {"compute_capability": "8.9"},
        {},
    ),
    # TensorFlow's cuDNN check with its clauses swapped: each version by the words before it, not by its place
    (
        "source was compiled with: 8.1.0 but Loaded runtime CuDNN library: 8.0.5",
        "cudnn_version_mismatch",
        {"cudnn": "8.0.5"},
        {"cudnn": "8.1.0"},
    ),
    # PyTorch's architecture check with the architecture first
    (
        "sm_86: NVIDIA GeForce RTX 3060 with CUDA capability is not compatible with the current PyTorch installation",
        "arch_unsupported",
        {"compute_capability": "8.6"},
        {},
    ),
]


@pytest.mark.parametrize(("text", "kind", "found", "expected"), READ)
def test_a_title_with_its_words_in_another_order_keeps_kind_and_versions(
    text: str,
    kind: str,
    found: dict[str, str],
    expected: dict[str, str],
    run_cli: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    out = run_cli("explain", "--json", "--offline", "--no-detect", text)
    assert out.returncode == 1, out.stderr  # (1: a problem found)
    first = json.loads(out.stdout)["diagnoses"][0]
    assert (first["kind"], first["found"], first["expected"]) == (kind, found, expected)


NOT_READ = [
    # a framework's version in a title is not a value of the sentence after it
    ("[Bug] PyTorch 2.1: Unknown CUDA arch or GPU not supported after upgrade", "arch_unsupported"),
]


@pytest.mark.parametrize(("text", "kind"), NOT_READ)
def test_a_version_of_the_titles_own_is_not_read_as_the_sentences(
    text: str, kind: str, run_cli: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    out = run_cli("explain", "--json", "--offline", "--no-detect", text)
    first = json.loads(out.stdout)["diagnoses"][0]
    assert (first["kind"], first["found"], first["expected"]) == (kind, {}, {})


ANY_ORDER = [
    # the runtime's text with "no" said as "not", its words moved ("no kernel image is available for execution on the
    # device")
    ("kernel image not available for sm_120 device", "arch_unsupported"),
    # nvidia-smi's sentence from its end ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA
    # driver")
    ("with the NVIDIA driver couldn't communicate", "init_failure"),
]


@pytest.mark.parametrize(("text", "kind"), ANY_ORDER)
def test_a_title_with_a_sentences_words_in_any_order_is_read(
    text: str, kind: str, run_cli: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    out = run_cli("explain", "--json", "--offline", "--no-detect", text)
    assert out.returncode == 1, out.stderr
    assert json.loads(out.stdout)["diagnoses"][0]["kind"] == kind


@pytest.mark.parametrize(
    "text",
    [
        # a negation of the author's own word, not of the sentence's failure (read as "driver too old" before)
        "No problems with the NVIDIA driver on my system",
        "Torch not slower when compiled with CUDA enabled",
        "The kernel image is not the problem here, the device memory is",
        # a sentence that says no failure in words, its one version and no second that differs
        "cuDNN runtime version and compiled version are both 8.9.2",
    ],
)
def test_words_in_any_order_that_deny_something_else_are_no_diagnosis(text: str) -> None:
    from dnnresolve.explain import diagnose

    assert diagnose([text]) == []
