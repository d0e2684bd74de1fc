"""Property tests for every input parser past versions and the matrix (those are in test_fuzz_parsers.py).

Any input gives a result or a clear error (a UserError of one line that names the file), never a traceback.
Examples are bounded by the hypothesis profile of tests/conftest.py; HYPOTHESIS_PROFILE=long runs many more.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dnnresolve.check import check_sources
from dnnresolve.detect import cuda, cudnn, linker, modules, smi
from dnnresolve.errors import UserError
from dnnresolve.explain import scan
from dnnresolve.explain.source import open_input
from dnnresolve.machine import Runtime
from dnnresolve.matrix import Matrix, load_matrix
from dnnresolve.profile import runtime_from_json, runtime_to_json
from dnnresolve.sources import read_file
from dnnresolve.versions import CudaVersion, CudnnVersion, DriverVersion, PythonVersion


@pytest.fixture(scope="module")
def project() -> Iterator[Path]:
    """A project directory (a .git marks its root) the generated files are written into."""
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        (root / ".git").mkdir()
        (root / "base.txt").write_text("numpy\n")
        yield root


def _matrix() -> Matrix:
    return load_matrix()  # loaded once per process


def _one_line_error_naming(exc: UserError, file: str) -> None:
    text = str(exc)
    assert "\n" not in text and "\r" not in text, text
    assert text.startswith(file), text


def _read_or_clear_error(path: Path, data: bytes, matrix: Matrix) -> None:
    """Read the file, then check what it says against a fixed machine: a result or a one-line UserError."""
    path.write_bytes(data)
    try:
        sf = read_file(path)
    except UserError as exc:
        _one_line_error_naming(exc, str(path))
        return
    target = Runtime(driver=DriverVersion.parse("535.104.05"), python=PythonVersion.parse("3.10"))
    try:
        check_sources([sf], target, matrix)
    except UserError as exc:
        assert "\n" not in str(exc), str(exc)


# Numbers of every size: Python refuses to convert more than 4300 digits, and a parser must not crash on that.
digits = st.one_of(st.from_regex(r"\d{1,8}", fullmatch=True), st.integers(4000, 5000).map(lambda n: "7" * n))
junk = st.one_of(st.text(max_size=200), st.binary(max_size=200).map(lambda b: b.decode("latin-1")))
requirement_lines = st.sampled_from(
    [
        "torch==2.1.0",
        "tensorflow-gpu==1.0.0",
        "jax[cuda12]>=0.4.20",
        "torch==2.1; rm -rf ~",
        'torch>=2; python_version > "3.8"',
        'numpy; python_version > "x"',
        "-r base.txt",
        "-r missing.txt",
        "-r ../../../etc/passwd",
        "-c base.txt",
        "--index-url https://user:secret@example.org/simple",
        "--extra-index-url=https://download.pytorch.org/whl/cu121",
        "-f https://storage.googleapis.com/jax-releases/jax_cuda_releases.html",
        "--no-index",
        "-e .",
        "--hash=sha256:00",
        "git+https://github.com/x/y.git#egg=y",
        "./local.whl",
        "torch @ https://example.org/torch.whl",
        "cupy-cuda12x==13.0.0 \\",
        "# comment",
        "    ",
        "-r",
        "--",
        "torch==",
        "[extras]",
    ]
)


pinned = st.tuples(
    st.sampled_from(["torch", "tensorflow-gpu", "jax"]), st.sampled_from(["==", ">=", "~=", "<"]), digits
)


@given(
    st.lists(st.one_of(requirement_lines, pinned.map("".join), junk), max_size=12),
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),
)
def test_requirements_txt(project: Path, lines: list[str], newline: str, bom: bool) -> None:
    data = ("\ufeff" if bom else "") + newline.join(lines)
    _read_or_clear_error(project / "requirements.txt", data.encode("utf-8", "surrogatepass"), _matrix())


@given(st.binary(max_size=300))
def test_requirements_txt_from_any_bytes(project: Path, data: bytes) -> None:
    _read_or_clear_error(project / "requirements-bytes.txt", data, _matrix())


toml_values = st.recursive(
    st.one_of(
        st.sampled_from(['"torch==2.1.0"', '"x"', "1", "true", "1.5", '"3.11"', '"https://u:p@example.org/simple"']),
        st.text(max_size=10).map(json.dumps),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.dictionaries(
            st.sampled_from(["url", "name", "index", "version", "extras", "markers", "git", "default"]),
            inner,
            max_size=3,
        ).map(lambda d: "{" + ", ".join(f"{k} = {v}" for k, v in d.items()) + "}"),
    ),
    max_leaves=8,
)
pyproject_tables = st.sampled_from(
    [
        "[project]",
        "[project.optional-dependencies]",
        "[dependency-groups]",
        "[tool.uv]",
        "[[tool.uv.index]]",
        "[tool.uv.sources]",
        "[tool.poetry.dependencies]",
        "[tool.poetry.group.gpu.dependencies]",
        "[[tool.poetry.source]]",
        "[tool.dnnresolve]",
        "[packages]",
        "[dev-packages]",
        "[[source]]",
    ]
)
pyproject_keys = st.sampled_from(
    [
        "dependencies",
        "gpu",
        "torch",
        "python",
        "index",
        "url",
        "name",
        "extra-index-url",
        "find-links",
        "index-url",
        "sources",
        "source",
        "driver",
        "cuda",
        "cudnn",
        "os",
        "gpu",
        "packages",
        "version",
    ]
)
poetry_constraints = st.tuples(st.sampled_from(["^", "~", "", ">=", "~="]), digits, digits).map(
    lambda t: f'torch = "{t[0]}{t[1]}.{t[2]}"'
)
toml_docs = st.lists(
    st.one_of(
        pyproject_tables,
        st.tuples(pyproject_keys, toml_values).map(lambda kv: f"{kv[0]} = {kv[1]}"),
        poetry_constraints,
        junk,
    ),
    max_size=12,
)


@given(toml_docs)
def test_pyproject_toml(project: Path, lines: list[str]) -> None:
    _read_or_clear_error(project / "pyproject.toml", "\n".join(lines).encode("utf-8", "surrogatepass"), _matrix())


@given(toml_docs)
def test_pipfile(project: Path, lines: list[str]) -> None:
    _read_or_clear_error(project / "Pipfile", "\n".join(lines).encode("utf-8", "surrogatepass"), _matrix())


yaml_lines = st.sampled_from(
    [
        "name: dl",
        "channels:",
        "  - conda-forge",
        "dependencies:",
        "  - python=3.6",
        "  - cudatoolkit=11.8",
        "  - pytorch::pytorch=2.1=py3.10_cuda11.8_cudnn8.7.0_0",
        "  - cudnn[version='>=8,<9']",
        "  - pytorch-cuda=12.1",
        "  - =1",
        "  - 'numpy|scipy'",
        "  - pip",
        "  - pip:",
        "    - tensorflow-gpu==1.0.0",
        "    - -r base.txt",
        "    - --index-url https://user:pw@example.org/simple",
        "    - {a: b}",
        "  - {pip: 1}",
        "dependencies: 3",
        "- just a list",
        "&a [*a]",
        "key: !!python/object/apply:os.system ['echo hi']",
        "  -",
        "\t- tab",
    ]
)


conda_numbered = st.tuples(
    st.sampled_from(["  - cudatoolkit={}", "  - cudnn {}.1", "  - pytorch>={},<2", "    - torch=={}"]), digits
).map(lambda td: td[0].format(td[1]))


@given(st.lists(st.one_of(yaml_lines, conda_numbered, junk), max_size=12))
def test_environment_yml(project: Path, lines: list[str]) -> None:
    _read_or_clear_error(project / "environment.yml", "\n".join(lines).encode("utf-8", "surrogatepass"), _matrix())


def _valid_profile() -> dict[str, Any]:
    rt = Runtime(
        driver=DriverVersion.parse("535.104.05"),
        python=PythonVersion.parse("3.10.12"),
    )
    return runtime_to_json(rt)


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=12)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=10,
)
profile_keys = st.sampled_from(
    [
        "schema",
        "os",
        "system",
        "driver",
        "driver_cuda",
        "gpus",
        "cuda",
        "cudnn",
        "python",
        "packages",
        "conda",
        "modules",
        "notes",
        "sources",
    ]
)


@given(st.dictionaries(profile_keys, json_values, max_size=5), json_values)
def test_runtime_profile_with_wrong_types(changes: dict[str, Any], anything: Any) -> None:
    for data in ({**_valid_profile(), **changes}, anything):
        try:
            runtime_from_json(data, "profile.json")
        except UserError as exc:
            _one_line_error_naming(exc, "profile.json")


explain_lines = st.sampled_from(
    [
        "Loaded runtime CuDNN library: 5005 (compatibility version 5000) but source was compiled with 5103 "
        "(compatibility version 5100).",
        "Loaded runtime CuDNN library: 99999999999999 but source was compiled with 7",
        "CUDA driver version is insufficient for CUDA runtime version",
        "libcudnn.so.8: cannot open shared object file: No such file or directory",
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        "NVIDIA GeForce RTX 4090 with CUDA capability sm_89 is not compatible with the current PyTorch installation.",
        "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70.",
        "E   ",
        "W0000 00:00:00.000 1 a.cc:1] ",
    ]
)


numbered_explain_lines = st.tuples(
    st.sampled_from(
        [
            "ImportError: libcudnn.so.{}: cannot open shared object file: No such file or directory",
            "Could not load dynamic library 'libcudart.so.{}.0'; dlerror: libcudart.so.{}.0: cannot open shared object",
            "Loaded runtime CuDNN library: {} (compatibility version {}) but source was compiled with 5103",
            "Loaded runtime CuDNN library: 8.{}.0 but source was compiled with 8.{}.0. CuDNN library needs to have "
            "matching major version and equal or higher minor version.",
            "The NVIDIA driver on your system is too old (found version {}).",
            "GPU with CUDA capability sm_{} is not compatible with the current PyTorch installation.",
        ]
    ),
    digits,
).map(lambda td: td[0].replace("{}", td[1]))


@given(st.lists(st.one_of(explain_lines, numbered_explain_lines, junk), min_size=1, max_size=10))
def test_explain_scans_any_text(words: list[str]) -> None:
    try:
        with open_input(words, None) as (_, lines):
            scan(lines)
    except UserError as exc:
        assert str(exc) == "the error text is empty"


@given(st.binary(max_size=400))
def test_explain_reads_any_log_file(project: Path, data: bytes) -> None:
    log = project / "run.log"
    log.write_bytes(data)
    try:
        with open_input(None, str(log)) as (_, lines):
            scan(lines)
    except UserError as exc:
        _one_line_error_naming(exc, str(log))


smi_lines = st.sampled_from(
    [
        "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |",
        "|   0  Tesla T4            Off  | 00000000:00:1E.0 Off |                    0 |",
        "| N/A   34C    P8     9W /  70W |      2MiB / 15360MiB |      0%      Default |",
        "| Processes:                                                                  |",
        "Tesla T4, 7.5, 15360 MiB, 535.104.05",
        "Tesla K20m, [N/A], 4742 MiB, 375.26",
        '"a, b", ,,',
        "Driver Version: ",
        "CUDA Version: 99999999999999999999.1",
    ]
)


@given(st.lists(st.one_of(smi_lines, junk, digits.map(lambda d: f"| 0 X On | {d}MiB / {d}MiB |")), max_size=10))
def test_nvidia_smi_output(lines: list[str]) -> None:
    text = "\n".join(lines)
    smi.parse_table(text)
    smi.parse_query(text, with_compute_cap=True)
    smi.parse_query(text, with_compute_cap=False)


header_lines = st.one_of(
    st.sampled_from(["#define CUDNN_MAJOR 8", "#define CUDNN_MINOR 9", "#define CUDNN_PATCHLEVEL 2", "# define X"]),
    st.tuples(st.sampled_from(["CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL"]), digits).map(
        lambda kv: f"#define {kv[0]} {kv[1]}"
    ),
)


@given(st.lists(st.one_of(header_lines, junk), max_size=8))
def test_cudnn_headers(lines: list[str]) -> None:
    version = cudnn.header_version("\n".join(lines))
    assert version is None or isinstance(version, CudnnVersion)


@given(st.one_of(junk, st.dictionaries(st.sampled_from(["cuda", "cuda_cudart"]), json_values).map(json.dumps)))
def test_cuda_version_json(text: str) -> None:
    version = cuda._from_version_json(text)
    assert version is None or isinstance(version, CudaVersion)


module_lines = st.one_of(
    st.sampled_from(
        [
            "/opt/apps/modulefiles:",
            "cuda/",
            "cuda/8.0",
            "cudnn/5.1 (L)",
            "cudnn/5.0 <D>",
            "Lmod has detected an error",
            "apps/cudnn/7.6.5.lua",
            "cuda(default)",
            "/",
            "(L)",
        ]
    ),
    digits.map(lambda d: f"cudnn/{d}.1"),
)


@given(st.lists(st.one_of(module_lines, junk), max_size=10))
def test_module_listings(lines: list[str]) -> None:
    for full in modules.parse_avail("\n".join(lines)):
        name, version = modules.split_module(full)
        assert isinstance(name, str) and isinstance(version, str)


ldconfig_lines = st.sampled_from(
    [
        "\tlibcudnn.so.8 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.8",
        "\tlibcudart.so.11.0 (libc6) => /usr/lib/libcudart.so.11.0",
        "123 libs found in cache `/etc/ld.so.cache'",
        "\t => ",
    ]
)


@given(st.lists(st.one_of(ldconfig_lines, junk), max_size=10))
def test_ldconfig_listing(lines: list[str]) -> None:
    cache = linker.parse_ldconfig("\n".join(lines))
    for soname in cache.entries:
        linker.soname_of(soname)
