"""Every encoding users meet, with values taken from real messages, headers and package names."""

from __future__ import annotations

import pytest

from dnnresolve.versions import (
    ComputeCapability,
    CudaVersion,
    CudnnVersion,
    DriverVersion,
    PythonVersion,
    VersionError,
    parse_build_tag,
    parse_cuda_tag,
)


@pytest.mark.parametrize(
    ("encoded", "text", "series"),
    [
        # TensorFlow: "Loaded runtime CuDNN library: 5005 (compatibility version 5000) but source was
        # compiled with 5103 (compatibility version 5100)"
        (5005, "5.0.5", "5.0"),
        (5103, "5.1.3", "5.1"),
        (5110, "5.1.10", "5.1"),  # cuDNN 5.1.10 (the cudnn-8.0-linux-x64-v5.1 archive) encodes as 5110
        # "Loaded runtime CuDNN library: 7.5.0 but source was compiled with: 7.6.5" / cudnn.h 7.6.5
        (7605, "7.6.5", "7.6"),
        # JAX: "Found cuDNN version 8600, but JAX was built against version 8800"
        (8600, "8.6.0", "8.6"),
        (8800, "8.8.0", "8.8"),
        (8907, "8.9.7", "8.9"),
        # cuDNN 9's cudnn_version.h: CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL
        (90100, "9.1.0", "9.1"),
        (90300, "9.3.0", "9.3"),
        (91001, "9.10.1", "9.10"),
    ],
)
def test_cudnn_integer_encodings(encoded: int, text: str, series: str) -> None:
    v = CudnnVersion.from_encoded(encoded)
    assert str(v) == text
    assert str(v.series) == series
    assert v.encoded == encoded
    assert CudnnVersion.parse(str(encoded)) == v


def test_cudnn_compatibility_version_is_the_encoded_series() -> None:
    assert CudnnVersion.from_encoded(5005).compatibility_version == 5000
    assert CudnnVersion.from_encoded(5103).compatibility_version == 5100
    assert CudnnVersion.from_encoded(5000) == CudnnVersion.parse("5.0.0")


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("(8, 9, 2)", (8, 9, 2)),  # PyTorch: "PyTorch was compiled against (8, 9, 2)"
        ("8.9.2.26", (8, 9, 2)),  # nvidia-cudnn-cu12==8.9.2.26
        ("v5.1", (5, 1)),  # module names and archives: cudnn-8.0-linux-x64-v5.1.tgz
        ("9.1.0", (9, 1, 0)),
    ],
)
def test_cudnn_text_forms(text: str, parts: tuple[int, ...]) -> None:
    assert CudnnVersion.parse(text).parts == parts


@pytest.mark.parametrize("bad", [0, 999, 10000, 1000000, "abc", "", "5.1.x", -5005])
def test_cudnn_rejects_nonsense(bad: object) -> None:
    with pytest.raises(VersionError):
        if isinstance(bad, int) and bad > 0:
            CudnnVersion.from_encoded(bad)
        else:
            CudnnVersion.parse(str(bad))


@pytest.mark.parametrize(
    ("encoded", "text"),
    [
        (10010, "10.1"),  # PyTorch: "The NVIDIA driver on your system is too old (found version 10010)"
        (12020, "12.2"),
        (12040, "12.4"),  # nvidia-smi / cudaDriverGetVersion on a 550 driver
        (9020, "9.2"),  # NVIDIA's own example in the runtime API docs
        (11080, "11.8"),
        (8000, "8.0"),
    ],
)
def test_cuda_api_integers(encoded: int, text: str) -> None:
    v = CudaVersion.from_encoded(encoded)
    assert str(v) == text
    assert v.encoded == encoded


@pytest.mark.parametrize("bad", [10011, 999, 123456])
def test_cuda_api_integer_rejects(bad: int) -> None:
    with pytest.raises(VersionError):
        CudaVersion.from_encoded(bad)


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("11.8", (11, 8)),
        ("11.8.0", (11, 8, 0)),
        ("V11.8.89", (11, 8, 89)),  # nvcc --version: "Cuda compilation tools, release 11.8, V11.8.89"
        ("release 8.0", (8, 0)),
        ("12.x", (12,)),
        ("12", (12,)),
    ],
)
def test_cuda_toolkit_versions(text: str, parts: tuple[int, ...]) -> None:
    v = CudaVersion.parse(text)
    assert v.parts == parts


def test_cuda_ordering_and_series() -> None:
    assert CudaVersion.parse("9.2") < CudaVersion.parse("10.0") < CudaVersion.parse("10.1")
    assert str(CudaVersion.parse("11.8.89").series) == "11.8"
    assert CudaVersion.parse("12.x").is_major_only


@pytest.mark.parametrize(
    ("text", "parts", "shown"),
    [
        ("375.26", (375, 26), "375.26"),
        ("535.104.05", (535, 104, 5), "535.104.05"),
        ("450.80.02", (450, 80, 2), "450.80.02"),
    ],
)
def test_driver_strings(text: str, parts: tuple[int, ...], shown: str) -> None:
    d = DriverVersion.parse(text)
    assert d.parts == parts
    assert str(d) == shown


def test_driver_order_is_numeric() -> None:
    assert DriverVersion.parse("535.104.05") > DriverVersion.parse("535.54.03")
    assert DriverVersion.parse("418.39") < DriverVersion.parse("1000.1")
    assert DriverVersion.parse("375.26") == DriverVersion.parse("375.26")


@pytest.mark.parametrize(
    ("text", "branch", "shown"),
    [
        ("535", True, "535.x"),
        ("535.x", True, "535.x"),
        ("535.104.05", False, "535.104.05"),
        ("375.26", False, "375.26"),
    ],
)
def test_a_driver_branch_alone_is_some_driver_of_that_branch(text: str, branch: bool, shown: str) -> None:
    # people say "driver 535" for the branch; nvidia-smi always shows major.minor at least
    d = DriverVersion.parse(text)
    assert d.is_branch is branch and d.shown == shown
    assert d.major == 535 or d.major == 375


@pytest.mark.parametrize("bad", ["", "abc", "375", "3.5.6.7.8", "375,26"])
def test_driver_rejects(bad: str) -> None:
    if bad == "375":  # a bare major is a valid (if vague) driver version
        assert DriverVersion.parse(bad).parts == (375,)
        return
    with pytest.raises(VersionError):
        DriverVersion.parse(bad)


@pytest.mark.parametrize(
    ("text", "parts", "sm"),
    [
        ("3.5", (3, 5), "sm_35"),
        ("sm_35", (3, 5), "sm_35"),
        ("compute_35", (3, 5), "sm_35"),  # "sm_35 is not compatible" / -gencode arch=compute_35
        ("sm_90a", (9, 0), "sm_90"),
        ("sm_100", (10, 0), "sm_100"),  # Blackwell data center
        ("sm_120", (12, 0), "sm_120"),  # Blackwell GeForce
        ("8.6", (8, 6), "sm_86"),
    ],
)
def test_compute_capability(text: str, parts: tuple[int, ...], sm: str) -> None:
    cc = ComputeCapability.parse(text)
    assert cc.parts == parts
    assert cc.sm == sm


def test_compute_capability_order() -> None:
    assert ComputeCapability.parse("sm_37") < ComputeCapability.parse("5.0") < ComputeCapability.parse("sm_100")


@pytest.mark.parametrize(
    ("tag", "parts"),
    [
        ("cu75", (7, 5)),  # mxnet-cu75
        ("cu80", (8, 0)),
        ("cu90", (9, 0)),  # torch +cu90, mxnet-cu90
        ("cu92", (9, 2)),
        ("cu100", (10, 0)),
        ("cu101", (10, 1)),
        ("cu118", (11, 8)),  # https://download.pytorch.org/whl/cu118
        ("cu121", (12, 1)),
        ("cu128", (12, 8)),
        ("cu11", (11,)),  # nvidia-cudnn-cu11
        ("cu12", (12,)),  # nvidia-cublas-cu12, jax-cuda12-plugin
        ("cuda11x", (11,)),  # cupy-cuda11x
        ("cuda12x", (12,)),  # cupy-cuda12x
        ("cupy-cuda102", (10, 2)),
        ("mxnet-cu90mkl", (9, 0)),
    ],
)
def test_cuda_tags(tag: str, parts: tuple[int, ...]) -> None:
    assert parse_cuda_tag(tag).parts == parts


@pytest.mark.parametrize("bad", ["cpu", "rocm5.6", "cu", "cu12345"])
def test_cuda_tag_rejects(bad: str) -> None:
    with pytest.raises(VersionError):
        parse_cuda_tag(bad)


def test_torch_local_tags() -> None:
    t = parse_build_tag("2.1.0+cu118")
    assert t.is_cuda and t.cuda == CudaVersion((11, 8))
    assert parse_build_tag("1.7.1+cu110").cuda == CudaVersion((11, 0))
    assert parse_build_tag("1.7.1+cpu").kind == "cpu"
    assert parse_build_tag("2.1.0+rocm5.6").kind == "rocm"
    assert parse_build_tag("2.1.0").kind == ""
    assert not parse_build_tag("2.1.0").is_cuda


@pytest.mark.parametrize(
    ("text", "parts"),
    [("3.11", (3, 11)), ("3.11.7", (3, 11, 7)), ("cp311", (3, 11)), ("py36", (3, 6)), ("3.13.0rc1", (3, 13, 0))],
)
def test_python_versions(text: str, parts: tuple[int, ...]) -> None:
    assert PythonVersion.parse(text).parts == parts
