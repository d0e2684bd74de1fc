"""dnnresolve.fatbin: the GPU code of a library, read from its fat binaries' headers."""

from __future__ import annotations

import os
import struct
from pathlib import Path

from dnnresolve.fatbin import BuildCode, architecture_list, fatbin_containers, fatbin_images

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "fatbin"


def elf64(sections: dict[str, bytes]) -> bytes:
    """A little-endian 64-bit ELF file with these sections (and a section-name table), laid out as a linker
    lays out a shared library: header, section contents, then the section header table."""
    names = b"\0" + b"".join(name.encode() + b"\0" for name in [*sections, ".shstrtab"])
    body = b""
    headers = [struct.pack("<IIQQQQIIQQ", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)]  # the null section
    at = 64
    for name, data in [*sections.items(), (".shstrtab", names)]:
        pad = -(at + len(body)) % 16
        body += b"\0" * pad
        offset = at + len(body)
        kind = 3 if name == ".shstrtab" else 1  # SHT_STRTAB, SHT_PROGBITS
        headers.append(struct.pack("<IIQQQQIIQQ", names.index(name.encode() + b"\0"), kind, 0, 0, offset,
                                    len(data), 0, 0, 16, 0))  # fmt: skip
        body += data
    body += b"\0" * (-(at + len(body)) % 8)
    table_at = at + len(body)
    head = b"\x7fELF" + bytes([2, 1, 1]) + b"\0" * 9
    head += struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, table_at, 0, 64, 0, 0, 64, len(headers), len(headers) - 1)
    return head + body + b"".join(headers)


def test_the_containers_of_an_elf_librarys_nv_fatbin_section_are_read_by_their_headers(tmp_path: Path) -> None:
    kernels = (FIXTURES / "kernels.fatbin").read_bytes()
    # two compilation units, aligned as the linker aligns them, and code elsewhere that happens to hold the
    # magic number: only .nv_fatbin counts
    section = kernels + b"\0" * (-len(kernels) % 16) + kernels
    lib = tmp_path / "libtorch_cuda.so"
    lib.write_bytes(elf64({".text": os.urandom(3000) + kernels[:16], ".nv_fatbin": section}))
    containers = fatbin_containers(lib)
    assert len(containers) == 2
    assert {str(i): n for i, n in fatbin_images(lib).items()} == {
        "sm_75": 2, "sm_80": 2, "sm_90a": 2, "sm_100": 2, "compute_90": 2,
    }  # fmt: skip
    assert architecture_list({lib.name: containers}) == BuildCode(("7.5", "8.0", "9.0a", "10.0"), ("9.0",))


def test_an_elf_library_without_gpu_code_is_read_without_a_search(tmp_path: Path) -> None:
    # a CPU library that holds the magic number by chance: no .nv_fatbin section, no containers
    lib = tmp_path / "libtorch_cpu.so"
    lib.write_bytes(elf64({".text": (FIXTURES / "kernels.fatbin").read_bytes()}))
    assert fatbin_containers(lib) == []


def test_a_damaged_container_in_the_section_is_skipped_and_the_next_one_found(tmp_path: Path) -> None:
    kernels = (FIXTURES / "kernels.fatbin").read_bytes()
    broken = kernels[:16] + b"\xff" * 64  # a header whose images are not images
    lib = tmp_path / "lib.so"
    lib.write_bytes(elf64({".nv_fatbin": broken + kernels}))
    assert len(fatbin_containers(lib)) == 1


def test_any_other_file_is_searched_for_containers(tmp_path: Path) -> None:
    dll = tmp_path / "torch_cuda.dll"
    dll.write_bytes(b"MZ" + os.urandom(2000) + (FIXTURES / "kernels.fatbin").read_bytes() + os.urandom(100))
    assert len(fatbin_containers(dll)) == 1
    truncated = tmp_path / "short.so"
    truncated.write_bytes(b"\x7fELF\x02\x01")  # too short for an ELF header: searched, nothing found
    assert fatbin_containers(truncated) == []


def test_a_section_table_that_claims_too_much_or_long_garbage_ends_soon(tmp_path: Path) -> None:
    kernels = (FIXTURES / "kernels.fatbin").read_bytes()
    # 4 MB of garbage inside the section (after a damaged container), then a real one: found by its magic
    lib = tmp_path / "lib.so"
    lib.write_bytes(elf64({".nv_fatbin": kernels[:16] + os.urandom(4 << 20) + kernels}))
    assert len(fatbin_containers(lib)) == 1
    # a section header whose size runs far past the end of the file
    data = bytearray(elf64({".nv_fatbin": kernels}))
    table_at = struct.unpack_from("<Q", data, 0x28)[0]
    struct.pack_into("<Q", data, table_at + 1 * 64 + 32, 1 << 60)  # section 1's sh_size
    lib.write_bytes(bytes(data))
    assert len(fatbin_containers(lib)) == 1
