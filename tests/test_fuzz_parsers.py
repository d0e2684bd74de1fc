"""Property tests: any input to a parser gives a result or a clear error, never a traceback.

The number of examples is bounded for scripts/test; set HYPOTHESIS_PROFILE=long for a longer run (tests/conftest.py).
"""

from __future__ import annotations

import contextlib

from hypothesis import given
from hypothesis import strategies as st

from dnnresolve.errors import MatrixError
from dnnresolve.matrix.parse import parse_matrix
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

PARSERS = [
    CudaVersion.parse,
    CudnnVersion.parse,
    DriverVersion.parse,
    ComputeCapability.parse,
    PythonVersion.parse,
    parse_cuda_tag,
    parse_build_tag,
]
version_like = st.one_of(
    st.text(max_size=30),
    st.from_regex(r"[vV]?\d{1,7}(\.\d{1,5}){0,4}[a-z+_-]{0,3}", fullmatch=True),
    st.from_regex(r"(sm|compute|cu|cuda|cp|py)_?\d{0,5}[xa]?", fullmatch=True),
)


@given(version_like)
def test_version_parsers_answer_or_raise_version_error(text: str) -> None:
    for parse in PARSERS:
        with contextlib.suppress(VersionError):
            parse(text)


@given(st.integers(min_value=-(10**9), max_value=10**9))
def test_encoded_integers(n: int) -> None:
    for decode in (CudnnVersion.from_encoded, CudaVersion.from_encoded):
        try:
            v = decode(n)
        except VersionError:
            continue
        # CUDA integers round-trip; a cuDNN 9 value met in the old encoding (9000) re-encodes in the new one.
        assert decode(v.encoded) == v


@given(
    st.integers(min_value=1, max_value=99),
    st.integers(min_value=0, max_value=9),
    st.integers(min_value=0, max_value=99),
)
def test_cudnn_round_trip(major: int, minor: int, patch: int) -> None:
    v = CudnnVersion((major, minor, patch))
    if major < 9 and (minor > 9 or patch > 99):
        return
    if major >= 100:
        return
    assert CudnnVersion.from_encoded(v.encoded) == v


toml_fragments = st.lists(
    st.sampled_from(
        [
            "[[framework]]",
            "[[cuda]]",
            "[[gpu]]",
            "[[cudnn]]",
            "[[wheel_pins]]",
            "[[cuda_family]]",
            'package = "torch"',
            'version = "2.1.0"',
            'version = "x"',
            'os = ["linux"]',
            'os = "linux"',
            'python = ["3.11"]',
            "python = [3.11]",
            'cuda = ["12.1"]',
            'source = "https://pytorch.org/"',
            'driver_min_linux = "530.30.02"',
            'name = "T4"',
            'compute_capability = "7.5"',
            'architecture = "Turing"',
            "major = 12",
            'install = [ { kind = "pip", requirement = "torch==2.1.0" } ]',
            "install = [ 1 ]",
            'requires = ["nvidia-cublas-cu12==12.1.3.1"]',
            'platform = "linux-x86_64"',
            "x = {",
            "[table]",
            "",
        ]
    ),
    max_size=25,
)


@given(toml_fragments)
def test_matrix_parser_answers_or_raises_matrix_error(lines: list[str]) -> None:
    try:
        parse_matrix("\n".join(lines), "fuzz.toml")
    except MatrixError as exc:
        assert "\n" not in str(exc)
        assert str(exc).startswith("fuzz.toml")
