"""Messages read by rule rather than by sentence (#22): the CUDA runtime's own texts (cudaGetErrorString, read from
libcudart when the vocabulary is built), a failure to load any file the vocabulary reads as an NVIDIA library, and
the frameworks' checks in every wording their sources print."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import pytest

from dnnresolve.explain import diagnose
from dnnresolve.explain.catalog import load_catalog
from dnnresolve.explain.vocabulary import load_vocabulary

REPO = Path(__file__).resolve().parent.parent
CUDART = sorted(Path("/usr/local/cuda/lib64").glob("libcudart.so*"))


def _first(text: str) -> Any:
    diagnoses = diagnose(text.splitlines())
    assert diagnoses, text
    return diagnoses[0]


# ---------------------------------------------------------------- the runtime's texts

TEXTS = [
    # (message, kind, the catalog entry that advises on it, the code it reads as)
    (
        "RuntimeError: CUDA error: invalid device ordinal",
        "init_failure",
        "nvidia-status-text",
        "cudaErrorInvalidDevice",
    ),
    (
        "CUDA error: no kernel image is available for execution on the device",
        "arch_unsupported",
        "cuda-no-kernel-image",
        "cudaErrorNoKernelImageForDevice",
    ),
    ("no kernel image is available", "arch_unsupported", "cuda-no-kernel-image", "cudaErrorNoKernelImageForDevice"),
    (
        "CUDA driver version is insufficient for CUDA runtime version",
        "driver_too_old",
        "cuda-insufficient-driver",
        "cudaErrorInsufficientDriver",
    ),
    (
        "cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THCCachingAllocator.cpp:510",
        "other",
        "nvidia-status-text",
        "cudaErrorMemoryAllocation",
    ),
    (
        "CUDA error: PTX JIT compiler library not found",
        "missing_library",
        "nvidia-status-text",
        "cudaErrorJitCompilerNotFound",
    ),
    (
        "Error 804: forward compatibility was attempted on non supported HW",
        "driver_too_old",
        "cuda-compat-not-supported",
        "cudaErrorCompatNotSupportedOnDevice",
    ),
]


@pytest.mark.parametrize(("text", "kind", "entry", "code"), TEXTS)
def test_a_message_quoting_only_the_runtimes_text_reads_as_its_code(
    text: str, kind: str, entry: str, code: str
) -> None:
    d = _first(text)
    assert (d.kind, d.id) == (kind, entry)
    assert any(label == "code" and value.startswith(code + " =") for label, value in d.rows), d.rows


def test_a_text_that_is_not_cudas_own_needs_a_cuda_errors_prefix() -> None:
    # "out of memory" or "invalid argument" alone are anybody's words
    assert diagnose(["MemoryError: out of memory"]) == []
    assert diagnose(["open(): invalid argument"]) == []
    assert _first("RuntimeError: CUDA error: out of memory").kind == "other"


def test_the_catalog_keeps_no_sentence_the_runtimes_texts_read() -> None:
    texts = {c.text.rstrip(".").lower() for codes in load_vocabulary().texts.values() for c in codes}
    assert "no kernel image is available for execution on the device" in texts
    for e in load_catalog().entries:
        if e.decoder in ("plain", "status_code") and e.codes:
            for t in texts:
                assert not e.pattern.fullmatch(t), f"{e.id} holds the runtime's text {t!r}"


@pytest.mark.skipif(not CUDART, reason="no CUDA runtime on this machine")
def test_the_script_asks_the_runtime_for_its_texts(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("build_vocabulary", REPO / "scripts" / "build_vocabulary.py")
    assert spec is not None and spec.loader is not None
    script: ModuleType = importlib.util.module_from_spec(spec)
    sys.modules["build_vocabulary"] = script
    spec.loader.exec_module(script)
    out = tmp_path / "v.toml"
    out.write_text(
        '[[code]]\ntype = "cudaError_t"\nlibrary = "CUDA runtime"\nname = "cudaErrorNoKernelImageForDevice"\n'
        'value = 209\nkind = "arch_unsupported"\nmeaning = ""\nfrom = ["x: driver_types.h"]\n',
        encoding="utf-8",
    )
    assert script.main(["--texts-only", "--out", str(out), "--cudart", str(CUDART[0])]) == 0
    text = out.read_text()
    assert 'text = "no kernel image is available for execution on the device"' in text
    assert re.search(r'text_from = ".*libcudart\.so.* cudaGetErrorString"', text)


# ---------------------------------------------------------------- NVIDIA library names, any loader's words

LIBRARIES = [
    ("Exception in main training loop: nvrtc: error: failed to open libnvrtc-builtins.so.", "libnvrtc-builtins.so", {}),
    ("\tlibcudart.so.11.0 => not found", "libcudart.so.11.0", {"cuda": "11.0"}),
    (
        "/usr/bin/ld: warning: libcublasLt.so.12, needed by /opt/x/libtorch_cuda.so, not found (try using -rpath)",
        "libcublasLt.so.12",
        {"cuda": "12"},
    ),
    (
        "FileNotFoundError: Could not find module 'C:\\venv\\Lib\\site-packages\\torch\\lib\\cudnn_ops64_9.dll' "
        "(or one of its dependencies). Try using the full path with constructor syntax.",
        "cudnn_ops64_9.dll",
        {"cudnn": "9"},
    ),
    ("Could not load dynamic library libnvinfer.so.8.6.1", "libnvinfer.so.8.6.1", {}),
    ("could not load librart cudnn_ops_infer64_8.dll .error code 126", "cudnn_ops_infer64_8.dll", {"cudnn": "8"}),
]


@pytest.mark.parametrize(("text", "library", "versions"), LIBRARIES)
def test_a_failure_to_load_an_nvidia_library_is_read_in_any_loaders_words(
    text: str, library: str, versions: dict[str, str]
) -> None:
    d = _first(text)
    assert d.kind == "missing_library"
    assert d.expected["library"] == library
    assert versions.items() <= d.expected.items()


def test_a_library_that_is_not_nvidias_is_no_diagnosis() -> None:
    assert diagnose(["OSError: could not load libfoo.so.1: cannot find it"]) == []
    assert diagnose(["\tlibpng16.so.16 => not found"]) == []


# ---------------------------------------------------------------- the frameworks' checks, as their sources print them

CHECKS = [
    # nvidia-container-toolkit's constraints/binary.go adds what the host has
    ("unsatisfied condition: cuda>=12.8 (cuda=12.4)", "driver_too_old", {"cuda": "12.4"}, {"cuda": "12.8"}),
    # TensorFlow's gpu_device.cc, a GPU name holding parentheses
    (
        "Ignoring visible gpu device (device: 0, name: GeForce GTX 760 (192-bit), pci bus id: 0000:01:00.0, compute "
        "capability: 3.0) with Cuda compute capability 3.0. The minimum required Cuda capability is 3.5.",
        "arch_unsupported",
        {"compute_capability": "3.0"},
        {"compute_capability": "3.5"},
    ),
    # XLA's platform_util.cc
    (
        "StreamExecutor cuda device (0) is of insufficient compute capability: 3.5 required, device is 3.0",
        "arch_unsupported",
        {"compute_capability": "3.0"},
        {"compute_capability": "3.5"},
    ),
    # torch.utils.cpp_extension, any arch text TORCH_CUDA_ARCH_LIST may hold
    (
        "ValueError: Unknown CUDA arch (sm_86) or GPU not supported",
        "arch_unsupported",
        {"compute_capability": "8.6"},
        {},
    ),
    ("ValueError: Unknown CUDA arch (Ada) or GPU not supported", "arch_unsupported", {}, {}),
    # torch/backends/cudnn/__init__.py
    (
        "cuDNN version incompatibility: PyTorch was compiled  against 8.9.2 but found runtime version 8.5.0",
        "cudnn_version_mismatch",
        {"cudnn": "8.5.0"},
        {"cudnn": "8.9.2"},
    ),
    # onnxruntime_pybind_state.cc
    (
        "CreateExecutionProviderInstance CUDA_PATH is set but CUDA wasnt able to be loaded. Please install the correct "
        "version of CUDA and cuDNN",
        "missing_library",
        {},
        {},
    ),
    # onnxruntime/core/platform/windows/dll_load_error.cc names the dependency that is missing
    (
        'FAIL : Error loading "C:\\venv\\onnxruntime\\capi\\onnxruntime_providers_cuda.dll" which depends on '
        '"cudnn64_9.dll" which is missing. (Error 126: "The specified module could not be found.")',
        "missing_library",
        {},
        {"library": "cudnn64_9.dll", "cudnn": "9"},
    ),
    # CMake's FindCUDA/select_compute_arch.cmake
    (
        "CMake Error: Unknown CUDA Architecture Name 90 in CUDA_SELECT_NVCC_ARCH_FLAGS",
        "arch_unsupported",
        {"compute_capability": "9.0"},
        {},
    ),
    # Windows' loader, a symbol of cuDNN missing from the DLL found first
    (
        "The procedure entry point cudnnGetLibConfig could not be located in the dynamic link library "
        "C:\\x\\torch\\lib\\cudnn_cnn_infer64_8.dll.",
        "cudnn_version_mismatch",
        {},
        {},
    ),
    # the CUDA runtime's API, undefined in the libcudart loaded
    ("ImportError: /x/libtorch_cuda.so: undefined symbol: cudaGraphDebugDotPrint", "cuda_version_mismatch", {}, {}),
]


@pytest.mark.parametrize(("text", "kind", "found", "expected"), CHECKS)
def test_framework_checks_in_the_words_their_sources_print(
    text: str, kind: str, found: dict[str, str], expected: dict[str, str]
) -> None:
    d = _first(text)
    assert d.kind == kind
    assert found.items() <= d.found.items()
    assert expected.items() <= d.expected.items()


def test_runtime_texts_are_read_by_the_command(run_cli: Callable[..., Any], tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text("step 1\nRuntimeError: CUDA error: invalid device ordinal\n", encoding="utf-8")
    r = run_cli("explain", "--json", "--offline", "--no-detect", "--file", str(log))
    assert r.returncode == 1, r.stderr  # a problem found
    assert "cudaErrorInvalidDevice = 101" in r.stdout


# ---------------------------------------------------------------- version encodings, by the headers' rule

ENCODED = [
    (
        "Found cuSPARSE version 12103, but JAX was built against version 12200, which is newer.",
        {"installed": "cuSPARSE 12.1.3", "built": "cuSPARSE 12.2.0"},
    ),
    # a release newer than any the vocabulary was read from decodes by the same rule
    ("Found cuSOLVER version 13001, but JAX was built against version 13100", {"installed": "cuSOLVER 13.0.1"}),
    ("Found cuFFT version 10602, but JAX was built against version 11400", {"installed": "cuFFT 10.6.2"}),
    (
        "Outdated cuBLAS installation found. Version JAX was built against: 120205 Minimum supported: 120100 "
        "Installed version: 120002",
        {"installed": "cuBLAS 12.0.2", "minimum": "cuBLAS 12.1.0", "built": "cuBLAS 12.2.5"},
    ),
    # NCCL's code changed its scale after 2.8 (nccl.h)
    ("Found NCCL version 21805, but JAX was built against version 22103", {"installed": "NCCL 2.18.5"}),
]


@pytest.mark.parametrize(("text", "rows"), ENCODED)
def test_library_version_numbers_decode_by_their_headers_encoding(text: str, rows: dict[str, str]) -> None:
    d = _first(text)
    assert d.kind == "cuda_version_mismatch"
    got = dict(d.rows)
    for label, version in rows.items():
        assert got[label].startswith(version + "  ("), got


def test_the_vocabulary_decodes_each_era_of_an_encoding() -> None:
    v = load_vocabulary()
    assert v.decode("CUDNN_VERSION", 8902) is not None and v.decode("CUDNN_VERSION", 8902)[0] == (8, 9, 2)
    assert v.decode("CUDNN_VERSION", 90100) is not None and v.decode("CUDNN_VERSION", 90100)[0] == (9, 1, 0)
    assert v.decode("NCCL_VERSION_CODE", 2704) is not None and v.decode("NCCL_VERSION_CODE", 2704)[0] == (2, 7, 4)
    assert v.decode("NO_SUCH_VERSION", 1234) is None


def test_no_catalog_entry_cites_a_thread_of_the_recall_corpus() -> None:
    import json

    corpus = REPO / "tests" / "data" / "explain_corpus" / "corpus.jsonl"
    threads = {json.loads(line)["thread"] for line in corpus.read_text(encoding="utf-8").splitlines() if line}
    assert [e.id for e in load_catalog().entries if e.source in threads] == []


def test_an_anchor_wrapped_over_two_lines_is_found() -> None:
    lines = [
        "2021-05-01 10:00:00.1: W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic",
        "library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file",
    ]
    d = diagnose(lines)
    assert d and d[0].kind == "missing_library"
    assert d[0].expected == {"library": "libcudart.so.11.0", "cuda": "11.0"}
    assert d[0].line == 1
