"""`explain` decodes the versions a message's NVIDIA vocabulary carries wherever users' text carries them (#22): a
library file name in any spelling (any number of version parts, Windows DLLs' packed numbers, a hyphen in the
stem) inside a title or a fragment in the user's own words, and an architecture (``sm_120``) in a title about
PyTorch's support. Measured on synthetic carriers of the values labelled in the tune-part corpus and in
explain_messages.toml, never on the held-back third."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from dnnresolve.explain import diagnose

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DATA = Path(__file__).parent / "data"

# A library file name in the words of a title or a pasted fragment: the loader's own sentence, another program's,
# the user's (English, Chinese), behind a prefix, under a Windows path, JSON-escaped
LIBRARY_CARRIERS = (
    "{name} not found",
    "Missing {name}",
    "Could not load dynamic library '{name}'",
    "{name}: cannot open shared object file: No such file or directory",
    "Could not load library {name}",
    "[Bug] cannot find {name} when running in docker",
    "failed to load {name}",
    "{name} 找不到",
    "{name} 报错",
    "{name} lost after upgrading",
    "import failed: {name}",
    r"C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\bin\{name} not found",
    r"Error loading \"C:\\Users\\me\\lib\\{name}\" or one of its dependencies.",
)
# An architecture in a title about PyTorch's or a GPU's support
ARCH_CARRIERS = (
    "CUDA capability sm_{sm}",
    "sm_{sm} not compatible with current PyTorch",
    "PyTorch 2.7.1 --- sm_{sm}",
    "[Bug] sm_{sm} is not supported",
    "RTX GPU (sm_{sm}) unsupported by torch",
)

# Carriers read with every labelled value (of 871 library and 85 architecture carriers on 2026-12-02; before
# these rules: 660 and 0). These numbers may only grow.
DECODED = {"library": 871, "arch": 85}


def _labels() -> list[dict[str, object]]:
    corpus = [json.loads(line) for line in (DATA / "explain_corpus" / "corpus.jsonl").read_text("utf-8").splitlines()]
    messages = tomllib.loads((DATA / "explain_messages.toml").read_text(encoding="utf-8"))["message"]
    return [m for m in corpus if m["part"] == "tune"] + list(messages)


def _libraries() -> list[dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for m in _labels():
        expected = dict(m.get("expected") or {})  # type: ignore[call-overload]
        name = str(expected.get("library", ""))
        if name and "," not in name and " " not in name:
            out[name] = {k: str(v) for k, v in expected.items() if k in ("library", "cuda", "cudnn")}
    return sorted(out.values(), key=lambda labels: labels["library"])


def _archs() -> list[str]:
    found = {
        str(dict(m.get("found") or {}).get("compute_capability", ""))  # type: ignore[call-overload]
        for m in _labels()
        if m.get("kind") == "arch_unsupported"
    }
    return sorted(cc for cc in found if cc.replace(".", "").isdigit() and "." in cc)


def _reads(text: str, kind: str, values: dict[str, str], side: str) -> bool:
    diagnoses = diagnose(text.splitlines())
    if not diagnoses or diagnoses[0].kind != kind:
        return False
    got = diagnoses[0].expected if side == "expected" else diagnoses[0].found
    return values.items() <= got.items()


def tally() -> dict[str, tuple[int, int]]:
    """(carriers read with every labelled value, carriers) per sort."""
    libraries = [
        _reads(carrier.format(name=labels["library"]), "missing_library", labels, "expected")
        for labels in _libraries()
        for carrier in LIBRARY_CARRIERS
    ]
    archs = [
        _reads(carrier.format(sm=cc.replace(".", "")), "arch_unsupported", {"compute_capability": cc}, "found")
        for cc in _archs()
        for carrier in ARCH_CARRIERS
    ]
    return {"library": (sum(libraries), len(libraries)), "arch": (sum(archs), len(archs))}


def _decodes(text: str, labelled: dict[str, object]) -> bool:
    diagnoses = diagnose(text.splitlines())
    if not diagnoses:
        return False
    d = next((d for d in diagnoses if d.kind == labelled["kind"]), diagnoses[0])
    found, expected = dict(labelled.get("found") or {}), dict(labelled.get("expected") or {})  # type: ignore[call-overload]
    return found.items() <= d.found.items() and expected.items() <= d.expected.items()


def variant_tally() -> tuple[int, int]:
    """(variants that decode every labelled value, variants) of the message explain reads in each labelled text:
    cut at its start or end, lower case, unpunctuated, behind a prefix, followed by the reporter's words."""
    from .explain_variants import variants

    kept = total = 0
    for labelled in _labels():
        if not (labelled.get("found") or labelled.get("expected")):
            continue
        diagnoses = diagnose(str(labelled["text"]).splitlines())
        message = diagnoses[0].text.strip() if diagnoses else ""
        if not message or not _decodes(message, labelled):
            continue
        for made in variants(message).values():
            for text in made:
                total += 1
                kept += _decodes(text, labelled)
    return kept, total


# Variants of labelled messages (tune part, explain_messages.toml) that keep every labelled value (of 6,320 on
# 2026-12-02; before these rules 5,514 of 6,202). This number may only grow.
VARIANTS_KEPT = 5679


def test_variants_of_labelled_messages_keep_their_versions() -> None:
    kept, total = variant_tally()
    assert kept >= VARIANTS_KEPT, (kept, total)


def test_versions_are_decoded_wherever_a_title_or_fragment_carries_them() -> None:
    counts = tally()
    decoded = {sort: counts[sort][0] for sort in DECODED}
    assert all(decoded[sort] >= DECODED[sort] for sort in DECODED), counts


SPELLINGS = [
    # a hyphen in a DLL's stem, its CUDA packed into one number
    ("nvrtc-builtins64_122.dll not found", {"library": "nvrtc-builtins64_122.dll", "cuda": "12.2"}),
    # a soname with a patch part: the CUDA release is its first two
    ("libcudart.so.11.8.89: cannot open shared object file", {"library": "libcudart.so.11.8.89", "cuda": "11.8"}),
    ("libnvrtc-builtins.so.12.1 not found", {"library": "libnvrtc-builtins.so.12.1", "cuda": "12.1"}),
    # macOS spells the version before the extension
    ("Library not loaded: @rpath/libcudart.10.1.dylib", {"library": "libcudart.10.1.dylib", "cuda": "10.1"}),
    # a title in the user's own words
    ("cudart64_110.dll lose", {"library": "cudart64_110.dll", "cuda": "11.0"}),
    ("libcudnn_ops_infer.so.8 报错", {"library": "libcudnn_ops_infer.so.8", "cudnn": "8"}),
    # a title's words written against the name, without a space
    ("cudart64_110.dll缺失", {"library": "cudart64_110.dll", "cuda": "11.0"}),
    # a comma typed for the soname's dot: the name as printed, its version read
    (
        "error while loading shared libraries: libcudart,so.11.0: cannot open",
        {"library": "libcudart,so.11.0", "cuda": "11.0"},
    ),
]


@pytest.mark.parametrize(("text", "expected"), SPELLINGS)
def test_a_library_name_is_decoded_in_any_spelling(text: str, expected: dict[str, str]) -> None:
    diagnoses = diagnose([text])
    assert diagnoses and diagnoses[0].kind == "missing_library", text
    assert expected.items() <= diagnoses[0].expected.items()


@pytest.mark.parametrize(
    "text",
    [
        "CUDA capability sm_120",
        "sm_120 not compatible with current PyTorch",
        "项目不支持2024年的显卡(Pytorch2.7.1---sm_120)",
    ],
)
def test_an_architecture_in_a_title_is_decoded(text: str) -> None:
    diagnoses = diagnose([text])
    assert diagnoses and diagnoses[0].kind == "arch_unsupported", text
    assert diagnoses[0].found == {"compute_capability": "12.0"}


@pytest.mark.parametrize(
    "text",
    [
        "libcudnn.so.8 is not compatible",  # nothing says it is not loaded
        "torch.cuda.get_arch_list() ['sm_50', 'sm_60', 'sm_70']",  # a list, nothing says which is unsupported
        "built with TORCH_CUDA_ARCH_LIST=sm_86",
    ],
)
def test_a_name_alone_is_no_diagnosis(text: str) -> None:
    assert diagnose([text]) == []


@pytest.mark.parametrize(
    ("text", "found", "expected"),
    [
        # PyTorch's cuDNN check in a title's own spelling: no colon, its tuples typed without punctuation
        ("cuDNN version incompatibility PyTorch was compiled against 7401 but linked against 7301", "7.3.1", "7.4.1"),
        (
            "cuDNN version incompatibility PyTorch was compiled against 8 5 0 but found runtime version 8 4 1",
            "8.4.1",
            "8.5.0",
        ),
        ("cudnn version incompatibility pytorch compiled against 8.9.2 but found 8.7.0", "8.7.0", "8.9.2"),
        # ... and without its first words: only cuDNN's check says it so
        ("PyTorch was compiled against (8, 5, 0) but found runtime version (8, 4, 1)", "8.4.1", "8.5.0"),
    ],
)
def test_pytorchs_cudnn_check_is_decoded_in_a_titles_words(text: str, found: str, expected: str) -> None:
    diagnoses = diagnose([text])
    assert diagnoses and diagnoses[0].kind == "cudnn_version_mismatch", text
    assert (diagnoses[0].found, diagnoses[0].expected) == ({"cudnn": found}, {"cudnn": expected})


def test_pytorchs_arch_warning_cut_before_the_gpu_keeps_its_architecture() -> None:
    # the GPU's name cut away: the sentence's leading group must not swallow the line
    text = (
        "with CUDA capability sm_86 is not compatible with the current PyTorch installation. "
        "The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70"
    )
    diagnoses = diagnose([text])
    assert diagnoses and diagnoses[0].kind == "arch_unsupported"
    assert diagnoses[0].found == {"compute_capability": "8.6"}


def test_a_soname_cut_to_the_loaders_last_words_keeps_its_version() -> None:
    diagnoses = diagnose(["loading shared libraries: libnvinfer.so.6"])
    assert diagnoses and diagnoses[0].kind == "missing_library"
    assert diagnoses[0].expected["library"] == "libnvinfer.so.6"


@pytest.mark.parametrize(
    ("text", "companion", "torch"),
    [
        ("torch cu118 and torchvision cu121 mismatch", "12.1", "11.8"),
        ("torchvision CUDA 11.6 vs torch CUDA 11.7", "11.6", "11.7"),
        ("PyTorch and torchvision compiled with different CUDA versions (11.7 vs 11.6)", "11.6", "11.7"),
        ("torch==2.0.1+cu118 torchvision==0.15.2+cu117 CUDA mismatch", "11.7", "11.8"),
        ("torchaudio cuda-12.1 incompatible with torch cuda-11.8", "12.1", "11.8"),
    ],
)
def test_a_titles_torch_and_companion_cudas_are_decoded(text: str, companion: str, torch: str) -> None:
    # the companion's CUDA is what the machine has, torch's what it needs (the corpus's labelling rule)
    diagnoses = diagnose([text])
    assert diagnoses and diagnoses[0].kind == "cuda_version_mismatch", text
    assert (diagnoses[0].found, diagnoses[0].expected) == ({"cuda": companion}, {"cuda": torch})


def test_a_companion_title_without_two_cudas_reads_no_versions() -> None:
    # releases of torch and torchvision are no CUDA releases
    diagnoses = diagnose(["torch 2.0 and torchvision 0.15 have different CUDA versions"])
    assert diagnoses and (diagnoses[0].found, diagnoses[0].expected) == ({}, {})


def test_tensorflows_minimum_capability_in_a_titles_words_is_decoded() -> None:
    diagnoses = diagnose(["TensorFlow ignoring GPU with compute capability 3.0, minimum required 3.5"])
    assert diagnoses and diagnoses[0].kind == "arch_unsupported"
    assert (diagnoses[0].found, diagnoses[0].expected) == ({"compute_capability": "3.0"}, {"compute_capability": "3.5"})
