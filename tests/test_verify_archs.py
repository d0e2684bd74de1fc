"""scripts/verify_archs.py, offline: it reads the fat binaries in real nvcc output and in wheels built here.

tests/fixtures/fatbin/kernels.fatbin was made by nvcc 13.0 from kernels.cu with
  -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80
  -gencode arch=compute_90a,code=sm_90a -gencode arch=compute_100f,code=sm_100f
  -gencode arch=compute_90,code=compute_90
(NVIDIA's cuobjdump lists sm_75, sm_80, sm_90a, sm_100 and PTX sm_90 in it). Where nvcc is on the machine, a
test also compiles a shared library and reads it.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import struct
import subprocess
import sys
import zipfile
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "fatbin"
NVCC = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "bin" / "nvcc"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("verify_archs", REPO / "scripts" / "verify_archs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the script loads
    spec.loader.exec_module(module)
    return module


va = _script()


def _names(images: Counter) -> dict[str, int]:  # type: ignore[type-arg]
    return {str(i): n for i, n in images.items()}


def _library(tmp_path: Path, name: str, fatbins: list[bytes]) -> Path:
    """Fat binaries with other bytes around them, in a file the ELF section reader declines (a 32-bit class),
    so it is searched for them as a Windows DLL is (tests/test_fatbin.py reads a 64-bit ELF's section)."""
    blob = b"\x7fELF\x01" + os.urandom(4096)
    for f in fatbins:
        blob += f + b"\0" * (-len(f) % 8) + os.urandom(512)
    path = tmp_path / name
    path.write_bytes(blob)
    return path


def test_reads_every_image_of_nvcc_output() -> None:
    images = va.fatbin_images(FIXTURES / "kernels.fatbin")
    assert _names(images) == {"sm_75": 1, "sm_80": 1, "sm_90a": 1, "sm_100": 1, "compute_90": 1}


def test_the_build_code_names_sass_ptx_and_arch_specific_images(tmp_path: Path) -> None:
    lib = _library(tmp_path, "libtorch_cuda.so", [(FIXTURES / "kernels.fatbin").read_bytes()])
    code = va.architecture_list({"libtorch_cuda.so": va.fatbin_containers(lib)})
    assert code == va.BuildCode(("7.5", "8.0", "9.0a", "10.0"), ("9.0",))
    assert str(code) == "sm 7.5 8.0 9.0a 10.0 + PTX 9.0"
    assert code.matches(va.BuildCode.of_row(["7.5", "8.0", "10.0"], ["9.0"], ["9.0"]))  # sm_exact holds 9.0a
    assert not code.matches(va.BuildCode.of_row(["7.5", "8.0", "9.0", "10.0"], [], ["9.0"]))
    assert code.matches(va.BuildCode(("7.5", "8.0", "9.0", "10.0"), ("9.0",)), loose=True)


def test_a_truncated_or_chance_magic_number_is_skipped(tmp_path: Path) -> None:
    data = (FIXTURES / "kernels.fatbin").read_bytes()
    lib = _library(tmp_path, "lib.so", [data[:200], b"\x50\xed\x55\xba\x07\x00\x10\x00" + b"\xff" * 8, data])
    assert _names(va.fatbin_images(lib)) == {"sm_75": 1, "sm_80": 1, "sm_90a": 1, "sm_100": 1, "compute_90": 1}
    empty = tmp_path / "empty.so"
    empty.write_bytes(b"")
    assert not va.fatbin_images(empty)


def _unit(*images: tuple[int, int, bool]) -> Counter:  # type: ignore[type-arg]
    """One compilation unit's container: an image per (kind, arch, arch-specific)."""
    return Counter(va.Image(*i) for i in images)


def test_the_list_is_what_most_compilation_units_were_built_for() -> None:
    sass, ptx = va.KIND_SASS, va.KIND_PTX
    torch_list = [(sass, a, False) for a in (37, 50, 60, 70)]
    magma_list = [(sass, a, False) for a in (35, 50, 60, 61, 70)]
    # torch 1.8.0's libtorch_cuda.so: its own units, a statically linked MAGMA with another list, FP8 extras
    units = [_unit(*torch_list)] * 500 + [_unit(*magma_list)] * 450 + [_unit((sass, 89, False))] * 2
    linalg = [_unit((sass, 35, False), (sass, 50, False))] * 100  # a smaller library
    one_arch = [_unit((sass, 80, False))] * 600 + [_unit((sass, 70, False))] * 500  # many one-architecture units
    libraries = {"libtorch_cuda.so": units, "libtorch_cuda_linalg.so": linalg, "libtorch_cuda_cpp.so": one_arch}
    assert va.architecture_list(libraries) == va.BuildCode(("3.7", "5.0", "6.0", "7.0"), ())
    # TensorFlow: SASS for older architectures and PTX for the newest
    tf = [_unit((sass, 50, False), (sass, 60, False), (ptx, 80, False))] * 9 + [_unit((sass, 80, False))]
    assert va.architecture_list({"libtensorflow_cc.so.2": tf}) == va.BuildCode(("5.0", "6.0"), ("8.0",))
    # onnxruntime 1.31.1: built arch-specific for Hopper and Blackwell, with more Hopper-only units than others
    ort = [_unit(*[(sass, a, False) for a in (75, 80, 86, 89)], (sass, 90, True), (sass, 120, True))] * 217
    ort += [_unit((sass, 90, True))] * 292 + [_unit(*[(sass, a, False) for a in (80, 86, 89)], (sass, 90, True))] * 91
    assert va.architecture_list({"libonnxruntime_providers_cuda.so": ort}).sm == (
        "7.5",
        "8.0",
        "8.6",
        "8.9",
        "9.0a",
        "12.0a",
    )
    assert va.architecture_list({}) == va.BuildCode((), ())
    assert va.architecture_list({"libc10.so": [_unit((ptx, 80, False))]}) == va.BuildCode((), ())


def _wheel(tmp_path: Path, members: dict[str, bytes]) -> Path:
    wheel = tmp_path / "torch-2.6.0-cp311-cp311-manylinux1_x86_64.whl"
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return wheel


def _matrix(tmp_path: Path, sm: str, ptx: str = "", system: str = "linux", exact: str = "") -> Path:
    text = f"""
[[framework]]
package = "torch"
version = "2.6.0"
os = ["{system}"]
python = ["3.11"]
cuda = ["12.4"]
cuda_default = "12.4"
cudnn_rule = "bundled"
sm = [{sm}]
sm_exact = [{exact}]
ptx = [{ptx}]
source = "https://pypi.org/project/torch/2.6.0/"

[[cuda]]
version = "12.4"
driver_min_linux = "525.60.13"
source = "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html"
"""
    path = tmp_path / "m.toml"
    path.write_text(text)
    return path


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / "verify_archs.py"), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_wheel_is_checked_against_its_row(tmp_path: Path) -> None:
    kernels = (FIXTURES / "kernels.fatbin").read_bytes()
    own = _library(tmp_path, "own", [kernels]).read_bytes()
    wheel = _wheel(
        tmp_path,
        {
            "torch/__init__.py": b"",
            "torch/version.py": b"__version__ = '2.6.0+cu124'\ncuda: Optional[str] = '12.4'\n",
            "torch/lib/libtorch_cuda.so": own,
            "torch/lib/libcudnn_ops.so.9": own + own,  # NVIDIA's bundled library: not the build's list
            "torch/lib/libc10.so": os.urandom(2048),
        },
    )
    matrix = _matrix(tmp_path, '"7.5", "8.0", "10.0"', '"9.0"', exact='"9.0"')
    agree = _run("--wheel", str(wheel), "--version", "2.6.0", "--matrix", str(matrix))
    assert agree.returncode == 0, agree.stdout + agree.stderr
    assert (
        "ok      torch 2.6.0 (matrix line 2, default CUDA 12.4): torch-2.6.0-cp311-cp311-manylinux1_x86_64.whl"
        in agree.stdout
    )
    assert "(built with CUDA 12.4) carries sm 7.5 8.0 9.0a 10.0 + PTX 9.0" in agree.stdout

    differ = _run(
        "--wheel", str(wheel), "--version", "2.6.0", "--matrix", str(_matrix(tmp_path, '"7.5", "8.0"')), "--show"
    )
    assert differ.returncode == 1
    assert "DIFFERS torch 2.6.0" in differ.stdout
    assert "matrix sm 7.5 8.0, " in differ.stdout and "carries sm 7.5 8.0 9.0a 10.0 + PTX 9.0" in differ.stdout
    assert "libtorch_cuda.so: compute_90 x1, sm_75 x1, sm_80 x1, sm_90a x1, sm_100 x1" in differ.stdout
    assert "1 containers: compute_90 sm_75 sm_80 sm_90a sm_100" in differ.stdout
    assert "libcudnn" not in differ.stdout


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert _run().returncode == 2
    wheel = _wheel(tmp_path, {"torch/__init__.py": b""})
    assert _run("--wheel", str(wheel)).returncode == 2
    unknown = _run("--wheel", str(wheel), "--version", "0.0.1")
    assert unknown.returncode == 2 and "no linux torch row for 0.0.1" in unknown.stderr


@pytest.mark.skipif(not NVCC.exists() or shutil.which("g++") is None, reason="needs nvcc and a host compiler")
def test_reads_a_shared_library_nvcc_builds_now(tmp_path: Path) -> None:
    lib = tmp_path / "libkernels.so"
    subprocess.run(
        [
            str(NVCC),
            "-shared",
            "-cudart",
            "shared",
            "-Xcompiler",
            "-fPIC",
            "-gencode",
            "arch=compute_75,code=sm_75",
            "-gencode",
            "arch=compute_86,code=sm_86",
            "-gencode",
            "arch=compute_86,code=compute_86",
            str(FIXTURES / "kernels.cu"),
            "-o",
            str(lib),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    images = va.fatbin_images(lib)
    assert {str(i) for i in images} == {"sm_75", "sm_86", "compute_86"}
    code = va.architecture_list({"libkernels.so": va.fatbin_containers(lib)})
    assert code == va.BuildCode(("7.5", "8.6"), ("8.6",))


def test_windows_wheels_are_read_from_their_dlls(tmp_path: Path) -> None:
    own = _library(tmp_path, "own", [(FIXTURES / "kernels.fatbin").read_bytes()]).read_bytes()
    other = _library(tmp_path, "other", [(FIXTURES / "kernels.fatbin").read_bytes()[:300]]).read_bytes()
    wheel = _wheel(
        tmp_path,
        {
            "torch/lib/torch_cuda.dll": own,
            "torch/lib/cudnn64_9.dll": other + own,  # NVIDIA's, not the build's
            "torch/lib/libtorch_cuda.so": other,  # not a Windows library
        },
    )
    matrix = _matrix(tmp_path, '"7.5", "8.0", "10.0"', '"9.0"', system="windows", exact='"9.0"')
    agree = _run("--wheel", str(wheel), "--version", "2.6.0", "--os", "windows", "--matrix", str(matrix), "--show")
    assert agree.returncode == 0, agree.stdout + agree.stderr
    assert "torch_cuda.dll: compute_90 x1" in agree.stdout and "cudnn64" not in agree.stdout
    linux = _run("--wheel", str(wheel), "--version", "2.6.0", "--matrix", str(matrix))
    assert linux.returncode == 2 and "no linux torch row for 2.6.0" in linux.stderr


def test_the_cuda_a_wheel_states_is_checked_against_the_row(tmp_path: Path) -> None:
    own = _library(tmp_path, "own", [(FIXTURES / "kernels.fatbin").read_bytes()]).read_bytes()
    tf = {"tensorflow/python/platform/build_info.py": b"build_info = {'cuda_version': '12.3', 'is_cuda_build': True}"}
    wheel = _wheel(tmp_path, {**tf, "tensorflow/libtensorflow_cc.so.2": own})
    matrix = _matrix(tmp_path, '"7.5", "8.0", "10.0"', '"9.0"', exact='"9.0"')  # says its default is CUDA 12.4
    differ = _run("--wheel", str(wheel), "--version", "2.6.0", "--matrix", str(matrix))
    assert differ.returncode == 1 and "(built with CUDA 12.3)" in differ.stdout


def test_a_release_a_row_covers_is_checked_against_that_row(tmp_path: Path) -> None:
    own = _library(tmp_path, "own", [(FIXTURES / "kernels.fatbin").read_bytes()]).read_bytes()
    wheel = _wheel(tmp_path, {"onnxruntime/capi/libonnxruntime_providers_cuda.so": own})
    matrix = _matrix(tmp_path, '"7.5", "8.0", "10.0"', '"9.0"', exact='"9.0"')
    matrix.write_text(matrix.read_text().replace('version = "2.6.0"\n', 'version = "2.6.0"\ncovers = ">=2.6.0,<2.7"\n'))
    covered = _run("--wheel", str(wheel), "--version", "2.6.1", "--matrix", str(matrix))
    assert covered.returncode == 0, covered.stdout + covered.stderr
    assert "ok      torch 2.6.1 (matrix line 2, the row of 2.6.0, default CUDA 12.4)" in covered.stdout


def test_tensorflow_build_info_is_held_against_what_is_read(tmp_path: Path) -> None:
    """TensorFlow's build_info.py names its CUDA and its architectures (as 2.15.0's wheel writes it)."""
    own = _library(tmp_path, "own", [(FIXTURES / "kernels.fatbin").read_bytes()]).read_bytes()
    info = (
        "build_info = collections.OrderedDict([('cpu_compiler', '/usr/lib/llvm-17/bin/clang'), "
        "('cuda_compute_capabilities', {caps}), ('cuda_version', '12.4'), ('cudnn_version', '8')])"
    )
    matrix = _matrix(tmp_path, '"7.5", "8.0", "10.0"', '"9.0"', exact='"9.0"')
    same = "['sm_75', 'sm_80', 'sm_90', 'sm_100', 'compute_90']"
    wheel = _wheel(tmp_path, {"tensorflow/python/platform/build_info.py": info.format(caps=same).encode(), "x.so": own})
    agree = _run("--wheel", str(wheel), "--version", "2.6.0", "--matrix", str(matrix))
    assert agree.returncode == 0, agree.stdout
    assert "the wheel's own build info states the same (sm 7.5 8.0 9.0 10.0 + PTX 9.0)" in agree.stdout
    assert "(built with CUDA 12.4)" in agree.stdout
    fewer = "['sm_75', 'sm_80', 'compute_90']"  # the build info may name less than the libraries carry
    wheel = _wheel(
        tmp_path, {"tensorflow/python/platform/build_info.py": info.format(caps=fewer).encode(), "x.so": own}
    )
    more = _run("--wheel", str(wheel), "--version", "2.6.0", "--matrix", str(matrix))
    assert more.returncode == 0 and "states sm 7.5 8.0 + PTX 9.0; its libraries carry that and more\n" in more.stdout
    assert "None" not in more.stdout
    other = "['7.5', '8.0']"  # a plain number: SASS and PTX of that architecture
    wheel = _wheel(
        tmp_path, {"tensorflow/python/platform/build_info.py": info.format(caps=other).encode(), "x.so": own}
    )
    misread = _run("--wheel", str(wheel), "--version", "2.6.0", "--matrix", str(matrix))
    assert misread.returncode == 1
    assert (
        "MISREAD torch 2.6.0: the wheel states sm 7.5 8.0 + PTX 7.5 8.0, its libraries read as sm 7.5" in misread.stdout
    )


def _fatbin(*images: tuple[int, int]) -> bytes:
    """A fat-binary container as nvcc lays it out: a 16-byte header, then per image a 64-byte header (kind, header
    size, payload size, architecture at +28) and its payload."""
    body = b""
    for kind, arch in images:
        head = bytearray(64)
        struct.pack_into("<HHIQ", head, 0, kind, 0x101, 64, 16)
        struct.pack_into("<I", head, 28, arch)
        body += bytes(head) + os.urandom(16)
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


CUDNN_ROW = """
[[cudnn]]
version = "8.7.0"
cuda = ["11.x", "10.2"]
{floor}
source = "https://developer.nvidia.com/rdp/cudnn-archive"
"""


def _cudnn_wheel(tmp_path: Path) -> Path:
    """cuDNN 8.7.0's CUDA 11 wheel in small: its libraries carry sm_35 ... sm_90 and PTX 9.0, as the real one's do,
    and the convolution library adds kernels for newer GPUs only."""
    sass, ptx = va.KIND_SASS, va.KIND_PTX
    common = _fatbin(*[(sass, a) for a in (35, 50, 60, 61, 70, 75, 80, 86, 90)], (ptx, 90))
    wheel = tmp_path / "nvidia_cudnn_cu11-8.7.0.84-py3-none-manylinux1_x86_64.whl"
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("nvidia/cudnn/lib/libcudnn.so.8", os.urandom(4096))  # the loader: no GPU code
        z.writestr("nvidia/cudnn/lib/libcudnn_ops_infer.so.8", _library(tmp_path, "ops", [common] * 3).read_bytes())
        cnn = [common, _fatbin((sass, 80), (sass, 90)), _fatbin((sass, 90))] * 2
        z.writestr("nvidia/cudnn/lib/libcudnn_cnn_infer.so.8", _library(tmp_path, "cnn", cnn).read_bytes())
    return wheel


def _cudnn_matrix(tmp_path: Path, floor: str) -> Path:
    path = _matrix(tmp_path, '"7.5"')
    path.write_text(path.read_text() + CUDNN_ROW.format(floor=floor))
    return path


def test_a_cudnn_wheel_is_read_for_the_floor_of_its_row(tmp_path: Path) -> None:
    """--package nvidia-cudnn-cuNN reads NVIDIA's own libraries (skipped for a framework's wheel) and holds the
    oldest architecture all of them carry code for against the [[cudnn]] row's floor for that CUDA major."""
    wheel = _cudnn_wheel(tmp_path)
    args = ("--package", "nvidia-cudnn-cu11", "--wheel", str(wheel), "--version", "8.7.0.84", "--show")
    url = "https://pypi.org/project/nvidia-cudnn-cu11/8.7.0.84/#files"
    read = 'compute_capability_min_by_cuda = { "11" = "3.5" }\ncompute_capability_basis = "library"\n'
    read += f'compute_capability_source = "{url}"'
    agree = _run(*args, "--matrix", str(_cudnn_matrix(tmp_path, read)))
    assert agree.returncode == 0, agree.stdout + agree.stderr
    assert "libcudnn_ops_infer.so.8: compute_90 x3, sm_35 x3, sm_50 x3" in agree.stdout
    assert "ok      cuDNN 8.7.0 for CUDA 11.x (matrix line 20): floor 3.5; " in agree.stdout
    assert "carries code for 3.5 and newer in every library" in agree.stdout
    # a floor read from the library must be what it carries
    wrong = _run(*args, "--matrix", str(_cudnn_matrix(tmp_path, read.replace('"3.5"', '"5.0"'))))
    assert wrong.returncode == 1 and "DIFFERS cuDNN 8.7.0 for CUDA 11.x" in wrong.stdout
    assert "matrix 5.0 (read from the library)" in wrong.stdout
    # NVIDIA's page may list fewer GPUs than the code serves: its floor is kept
    page = 'compute_capability_min_by_cuda = { "11" = "5.0" }\n'
    page += 'compute_capability_source = "https://docs.nvidia.com/deeplearning/cudnn/x/support-matrix/index.html"'
    kept = _run(*args, "--matrix", str(_cudnn_matrix(tmp_path, page)))
    assert kept.returncode == 0, kept.stdout
    assert "NVIDIA's support matrix lists 5.0 and newer; " in kept.stdout and "(kept for older GPUs)" in kept.stdout
    # a row with no floor is named, for it to be filled
    none = _run(*args, "--matrix", str(_cudnn_matrix(tmp_path, 'compute_capability_unstated = "not read"')))
    assert none.returncode == 1 and "UNSTATED cuDNN 8.7.0 for CUDA 11.x" in none.stdout


def test_a_floor_read_from_the_library_cites_the_wheel(tmp_path: Path) -> None:
    from dnnresolve.errors import MatrixError
    from dnnresolve.matrix import load_matrix

    floor = 'compute_capability_min_by_cuda = { "11" = "3.5" }\ncompute_capability_basis = "library"\n'
    bad = floor + 'compute_capability_source = "https://docs.nvidia.com/deeplearning/cudnn/x/support-matrix.html"'
    with pytest.raises(MatrixError, match="'compute_capability_source': a floor read from the library needs the URL"):
        load_matrix(_cudnn_matrix(tmp_path, bad)).cudnn_releases()
    odd = floor.replace('"library"', '"forum"') + 'compute_capability_source = "https://pypi.org/project/x/"'
    with pytest.raises(MatrixError, match="'compute_capability_basis': expected one of support_matrix, library"):
        load_matrix(_cudnn_matrix(tmp_path, odd)).cudnn_releases()


def test_the_floor_is_the_oldest_architecture_every_library_carries() -> None:
    sass, ptx = va.KIND_SASS, va.KIND_PTX
    # cuDNN 9.11's CUDA 12 wheel: its kernel library still holds sm_50 units, its ops library starts at sm_75
    engines = [_unit((sass, 50, False), (sass, 75, False))] * 3 + [_unit((sass, 90, True))]
    ops = [_unit((sass, 75, False), (sass, 80, False), (ptx, 120, False))] * 2
    floor, library, code = va.library_floor({"libcudnn_engines_precompiled.so.9": engines, "libcudnn_ops.so.9": ops})
    assert (floor, library, str(code)) == ("7.5", "libcudnn_ops.so.9", "sm 7.5 8.0 + PTX 12.0")
    # PTX serves every newer GPU; a library of arch-specific kernels only runs on that one architecture
    assert va.library_floor({"a.so": [_unit((ptx, 35, False), (sass, 50, False))]})[0] == "3.5"
    assert va.library_floor({"a.so": ops, "hopper.so": [_unit((sass, 90, True))]})[:2] == ("9.0", "hopper.so")
    assert va.library_floor({"loader.so": []}) is None


def test_a_wheel_is_read_as_its_download_streams_past(tmp_path: Path) -> None:
    """PyPI's wheel is read from one download as it arrives (no copy of it on disk), held against the index's
    sha256, and gives what the same wheel read from disk gives; a download that is not the index's file fails."""
    import hashlib

    from tests.servers import Reply, serve

    wheel = _cudnn_wheel(tmp_path)
    adv = "nvidia/cudnn/lib/libcudnn_adv.so.8"
    with zipfile.ZipFile(wheel, "a", zipfile.ZIP_DEFLATED) as z, z.open(adv, "w", force_zip64=True) as out:
        out.write(_library(tmp_path, "adv", [_fatbin((va.KIND_SASS, 50))]).read_bytes())
    body = wheel.read_bytes()
    work = tmp_path / "work"
    work.mkdir()
    with serve({"/w.whl": Reply(body)}) as server:
        found = {"filename": wheel.name, "url": server.url("/w.whl"), "sha256": hashlib.sha256(body).hexdigest()}
        streamed, _ = va.wheel_members(found, work, nvidia=True)
        assert not list(work.iterdir())  # each library deleted once read; the wheel never written
        local, _ = va.wheel_members(wheel, work, nvidia=True)
        assert streamed == local and set(local) == {
            "libcudnn_ops_infer.so.8",
            "libcudnn_cnn_infer.so.8",
            "libcudnn_adv.so.8",
        }
        assert va.library_floor(streamed)[0] == "5.0"
        with pytest.raises(SystemExit, match=r"manylinux1_x86_64\.whl: sha256 [0-9a-f]{64} is not the index's 0{64}"):
            va.wheel_members({**found, "sha256": "00" * 32}, work, nvidia=True)
        server.routes["/w.whl"] = Reply(body[: len(body) // 2])
        with pytest.raises(SystemExit, match=r"the download ends early|CRC-32"):
            va.wheel_members(found, work, nvidia=True)


def test_a_zip_written_with_data_descriptors_is_refused_by_name(tmp_path: Path) -> None:
    import io

    from wheel_stream import WheelStreamError, members  # on the path since verify_archs loaded

    class Unseekable(io.RawIOBase):
        def __init__(self) -> None:
            self.data = bytearray()

        def writable(self) -> bool:
            return True

        def write(self, b: bytes) -> int:  # type: ignore[override]
            self.data += b
            return len(b)

    sink = Unseekable()
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED) as z:  # unseekable: sizes come after the data
        z.writestr("torch/lib/libtorch_cuda.so", b"x" * 1000)
    with pytest.raises(WheelStreamError, match=r"libtorch_cuda\.so: sizes in a data descriptor; download the wheel"):
        list(members(io.BytesIO(bytes(sink.data)), "", lambda n: True, tmp_path))
