"""NVIDIA's vocabulary (data/nvidia_vocabulary.toml): built from headers by scripts/build_vocabulary.py, and read by
`explain` so that a status code, a library file name or a version is recognised without a sentence for it (#22)."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import pytest

from dnnresolve.explain import diagnose
from dnnresolve.explain.catalog import load_catalog
from dnnresolve.explain.vocabulary import load_vocabulary, read_library_name

REPO = Path(__file__).resolve().parent.parent
HEADERS = Path(__file__).parent / "fixtures" / "headers"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_vocabulary", REPO / "scripts" / "build_vocabulary.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["build_vocabulary"] = module
    spec.loader.exec_module(module)
    return module


def test_the_script_reads_codes_numbers_meanings_and_encodings_from_headers(tmp_path: Path) -> None:
    out = tmp_path / "v.toml"
    script = _script()
    rc = script.main(["--toolkit", str(tmp_path), "--headers", f"{HEADERS}=nvidia-x-cu12==1.2.3", "--out", str(out)])
    assert rc == 0
    text = out.read_text()
    rows = {m.group(1): block for block in text.split("[[code]]") if (m := re.search(r'name = "(\w+)"', block))}
    codes = dict(re.findall(r'name = "(\w+)"\nvalue = (\d+)', text))
    assert codes["CUBLAS_STATUS_NOT_INITIALIZED"] == "1"
    assert codes["cudaErrorInsufficientDriver"] == "35"
    assert codes["cudaErrorNextOne"] == "36"  # an implicit value, as C counts it
    assert codes["cudaErrorStartupFailure"] == "127"
    assert codes["NVML_ERROR_FUTURE_THING"] == "20"
    assert 'kind = "driver_too_old"' in rows["cudaErrorInsufficientDriver"]
    assert "older than the CUDA runtime library." in rows["cudaErrorInsufficientDriver"]
    assert 'kind = "init_failure"' in rows["NVML_ERROR_LIB_RM_VERSION_MISMATCH"]
    assert 'kind = "arch_unsupported"' in rows["CUBLAS_STATUS_ARCH_MISMATCH"]
    assert '"nvidia-x-cu12==1.2.3: mini_status.h"' in rows["CUBLAS_STATUS_ARCH_MISMATCH"]
    assert 'macro = "CUSPARSE_VERSION"\nmajor = 1000\nminor = 100' in text
    assert 'url = "https://pypi.org/project/nvidia-x-cu12/1.2.3/"' in text


@pytest.mark.skipif(not Path("/usr/local/cuda/include/cuda.h").is_file(), reason="no CUDA toolkit here")
def test_the_script_reads_this_machines_cuda_toolkit(tmp_path: Path) -> None:
    out = tmp_path / "v.toml"
    assert _script().main(["--out", str(out)]) == 0
    text = out.read_text()
    assert 'name = "CUDA_ERROR_NO_BINARY_FOR_GPU"\nvalue = 209\nkind = "arch_unsupported"' in text
    assert 'name = "cudaErrorNoKernelImageForDevice"\nvalue = 209\nkind = "arch_unsupported"' in text


def test_the_packaged_vocabulary_has_every_librarys_status_type_and_cites_each_code() -> None:
    v = load_vocabulary()
    types = {c.type for codes in v.codes.values() for c in codes}
    assert types == {
        "CUresult",
        "cudaError_t",
        "cublasStatus_t",
        "cudnnStatus_t",
        "cufftResult",
        "cusolverStatus_t",
        "cusparseStatus_t",
        "curandStatus_t",
        "ncclResult_t",
        "nvmlReturn_t",
        "nvrtcResult",
        "nvJitLinkResult",
    }
    for codes in v.codes.values():
        for c in codes:
            assert v.source_url(c).startswith("https://"), c
    # cuDNN 9 renumbered its statuses: both numberings are kept
    assert {c.value for c in v.code("CUDNN_STATUS_NOT_INITIALIZED")} == {1, 1001}


def test_every_error_code_of_the_vocabulary_is_found_by_the_status_entry() -> None:
    entry = load_catalog().entry("nvidia-status-code")
    for codes in load_vocabulary().codes.values():
        if all(c.kind == "ok" for c in codes):
            continue
        spelled = codes[0].name
        assert any(a in spelled.lower() for a in entry.anchors), spelled
        m = entry.pattern.search(f"error: {spelled} when calling")
        assert m is not None and m.group("code") == spelled, spelled


@pytest.mark.parametrize(
    ("text", "kind", "id_"),
    [
        (
            "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",
            "init_failure",
            "nvidia-status-code",
        ),
        ("cuDNN error: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH", "cudnn_version_mismatch", "nvidia-status-code"),
        ("CUDA error: cudaErrorNoKernelImageForDevice", "arch_unsupported", "cuda-no-kernel-image"),
        ("nvmlInit failed: NVML_ERROR_LIB_RM_VERSION_MISMATCH", "init_failure", "nvml-driver-mismatch"),
        ("cuinit: cuda_error_no_device", "init_failure", "cuda-no-device"),  # any letter case
        ("NCCL error: ncclUnhandledCudaError: Call to CUDA function failed.", "other", "nvidia-status-code"),
    ],
)
def test_a_status_code_is_diagnosed_by_its_kind(text: str, kind: str, id_: str) -> None:
    (d,) = diagnose([text])
    assert (d.kind, d.id) == (kind, id_)
    assert d.fixes


def test_a_success_code_or_an_unknown_name_is_no_diagnosis() -> None:
    assert diagnose(["cudaSuccess CUBLAS_STATUS_SUCCESS CUBLAS_STATUS_MADE_UP"]) == []


@pytest.mark.parametrize(
    ("name", "component", "version"),
    [
        ("libnvinfer.so.8.6.1", "tensorrt", (8, 6, 1)),
        ("libcudnn_cnn_infer.so.8", "cudnn", (8,)),
        ("cudnn_cnn_infer64_8.dll", "cudnn", (8,)),
        ("cublasLt64_12.dll", "cuda", (12,)),
        ("cudart64_110.dll", "cuda", (110,)),
        ("nvinfer_10.dll", "tensorrt", (10,)),
        ("libcufft.so.11", "cuda_math", (11,)),
        ("libnccl.so.2", "nccl", (2,)),
        ("libcudart.so.13.1.2.3", "cuda", (13, 1, 2, 3)),
    ],
)
def test_library_file_names_read_by_rule(name: str, component: str, version: tuple[int, ...]) -> None:
    lib = read_library_name(name)
    assert lib is not None and (lib.component, lib.version) == (component, version)


def test_a_library_name_with_a_runaway_number_is_no_library() -> None:
    # found by the fuzz test: 'libcudart.so.777…7.0' (4,751 digits) made int() raise, and explain crash
    assert read_library_name("libcudart.so." + "7" * 4751 + ".0") is None
    assert diagnose(["Could not load dynamic library 'libcudart.so." + "7" * 5000 + ".0'"]) is not None


def test_a_library_name_no_catalog_row_spells_is_decoded_by_rule(run_cli: Callable[..., Any]) -> None:
    result = run_cli("explain", "--json", "ImportError: libnvinfer.so.8.6.1: cannot open shared object file")
    (d,) = json.loads(result.stdout)["diagnoses"]
    assert d["kind"] == "missing_library"
    assert d["expected"] == {"library": "libnvinfer.so.8.6.1", "tensorrt": "8"}


@pytest.mark.parametrize(
    ("text", "kind", "found", "expected"),
    [
        (  # https://github.com/NVIDIA/nvidia-docker/issues/1442
            "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=11.0, please update your driver",
            "driver_too_old",
            {},
            {"cuda": "11.0"},
        ),
        (  # https://github.com/CMU-Perceptual-Computing-Lab/openpose/issues/2053
            "nvcc fatal   : Unsupported gpu architecture 'compute_86'",
            "arch_unsupported",
            {"compute_capability": "8.6"},
            {},
        ),
        (  # https://github.com/NVIDIA/TensorRT/issues/2983
            "[TRT] [E] 6: The engine plan file is not compatible with this version of TensorRT, expecting library "
            "version 8.6.1.6 got 8.6.0.12, please rebuild.",
            "other",
            {"tensorrt": "8.6.1.6"},  # the library loaded (the corpus README's reading)
            {"tensorrt": "8.6.0.12"},  # the engine's
        ),
        (  # https://github.com/AILab-CVC/Make-Your-Video/issues/4
            "Error: Could not load library libcudnn_cnn_infer.so.8",
            "missing_library",
            {},
            {"library": "libcudnn_cnn_infer.so.8", "cudnn": "8"},
        ),
        ("RuntimeError: CUDA error: no kernel image is available for execution", "arch_unsupported", {}, {}),
    ],
)
def test_families_that_had_no_diagnosis(text: str, kind: str, found: dict[str, str], expected: dict[str, str]) -> None:
    (d,) = diagnose([text])
    assert (d.kind, d.found, d.expected) == (kind, found, expected)
