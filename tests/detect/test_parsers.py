"""The parsers on output captured from real machines (public issue threads)."""

from __future__ import annotations

from pathlib import Path

from dnnresolve.detect.cudnn import header_version
from dnnresolve.detect.linker import parse_ldconfig, soname_of
from dnnresolve.detect.modules import parse_avail, split_module
from dnnresolve.detect.smi import parse_query, parse_table

CAPTURED = Path(__file__).resolve().parents[1] / "fixtures" / "captured"

# tensorflow/tensorflow#8877 (2017, driver 346.46, an AWS GRID K520)
TABLE_346 = (CAPTURED / "nvidia-smi-346.46-grid-k520.txt").read_text()

# kubernetes-sigs/dra-driver-nvidia-gpu#889 (2026, driver 580.126.09, a Tesla T4)
TABLE_580 = (CAPTURED / "nvidia-smi-580.126.09-tesla-t4.txt").read_text()

# filecoin-project/bellperson#227 (2021, driver 470.57.02): nvidia-smi shortens long names
TABLE_470_SHORTENED = (CAPTURED / "nvidia-smi-470.57.02-shortened-name.txt").read_text()


def test_table_of_2017_driver_has_no_cuda_version() -> None:
    t = parse_table(TABLE_346)
    assert (t.driver, t.cuda) == ("346.46", "")
    assert [(g.name, g.memory_mib) for g in t.gpus] == [("GRID K520", 4095)]


def test_table_of_580_driver() -> None:
    t = parse_table(TABLE_580)
    assert (t.driver, t.cuda) == ("580.126.09", "13.0")
    assert [(g.name, g.memory_mib) for g in t.gpus] == [("Tesla T4", 15360)]


def test_table_with_shortened_name() -> None:
    t = parse_table(TABLE_470_SHORTENED)
    assert (t.driver, t.cuda) == ("470.57.02", "11.4")
    assert [(g.name, g.memory_mib) for g in t.gpus] == [("NVIDIA GeForce ...", 7979)]


def test_query_csv_with_and_without_compute_cap() -> None:
    # triton-inference-server/server#8070: "7.0, Default, 570.86.15, NVIDIA TITAN V, 0" reordered to our fields
    rows = parse_query("NVIDIA TITAN V, 7.0, 12288 MiB, 570.86.15\n", with_compute_cap=True)
    assert [(g.name, g.compute_capability, g.memory_mib, g.driver) for g in rows] == [
        ("NVIDIA TITAN V", "7.0", 12288, "570.86.15")
    ]
    old = parse_query("Tesla K20m, 4742 MiB, 375.26\nTesla K20m, 4742 MiB, 375.26\n", with_compute_cap=False)
    assert [(g.name, g.compute_capability, g.memory_mib) for g in old] == [("Tesla K20m", "", 4742)] * 2
    assert parse_query("GRID K520, [N/A], [N/A], 346.46\n", with_compute_cap=True)[0].memory_mib is None


def test_ldconfig_lines_64_bit_first() -> None:
    cache = parse_ldconfig(
        "3 libs found in cache `/etc/ld.so.cache'\n"
        "\tlibc.so.6 (libc6, OS ABI: Linux 3.2.0) => /lib/i386-linux-gnu/libc.so.6\n"
        "\tlibc.so.6 (libc6,x86-64, OS ABI: Linux 3.2.0) => /lib/x86_64-linux-gnu/libc.so.6\n"
        "\tlibcudart.so.13 (libc6,x86-64) => /usr/local/cuda-13.0/lib/libcudart.so.13\n"
    )
    assert cache.entries["libc.so.6"] == ["/lib/x86_64-linux-gnu/libc.so.6", "/lib/i386-linux-gnu/libc.so.6"]
    assert cache.files_named("libcudart.so.") == ["/usr/local/cuda-13.0/lib/libcudart.so.13"]


def test_sonames() -> None:
    assert soname_of("/opt/apps/cudnn/5.1/lib64/libcudnn.so.5.1.10") == "libcudnn.so.5"
    assert soname_of("libcudnn.so.9") == "libcudnn.so.9"
    assert soname_of("libcudnn.so") is None


def test_cudnn_headers_of_each_era() -> None:
    old = "#define CUDNN_MAJOR      5\n#define CUDNN_MINOR      1\n#define CUDNN_PATCHLEVEL 10\n"
    assert str(header_version(old)) == "5.1.10"
    assert str(header_version("#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n")) == "9.1.0"
    assert header_version("#define CUDNN_MAJOR 9\n") is None


def test_module_avail_terse_output_and_names() -> None:
    # `$LMOD_CMD bash -t avail` as Lmod 8.6 prints it on stderr
    text = "/opt/apps/modulefiles:\ncuda/\ncuda/8.0\ncudnn/\ncudnn/5.0\ncudnn/5.1(default)\n"
    assert parse_avail(text) == ["cuda/8.0", "cudnn/5.0", "cudnn/5.1"]
    assert split_module("cudnn/5.1-cuda8.0") == ("cudnn", "5.1-cuda8.0")
    assert split_module("apps/cudnn/5.1") == ("apps/cudnn", "5.1")
    assert split_module("cuda") == ("cuda", "")
