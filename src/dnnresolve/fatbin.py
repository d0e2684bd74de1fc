"""The GPU code a CUDA library carries, read from its fat binaries' headers without loading it.

A CUDA library keeps its kernels in fat binaries: per compilation unit one container, holding a compiled
image (SASS, ``sm_XY``; ``sm_90a`` when arch-specific) per architecture it was built for, and optionally PTX
(``compute_XY``) that the driver compiles for newer GPUs. Layout, as NVIDIA's cuobjdump reads it: a
container is a 16-byte header (magic 0xBA55ED50, version 1, header size 16, size of the images) followed by
its images, each a header (kind 1 PTX or 2 SASS, header size, payload size, architecture at +28, flags at
+40 with 0x100000 for arch-specific) and its payload.

In an ELF shared library the containers sit in the ``.nv_fatbin`` section, one after another: only their
headers are read, a few thousand small reads for a library of a gigabyte, never the code itself. Any other
file (a ``.fatbin``, a Windows DLL) is searched for the magic number. Used by ``doctor`` (what the installed
frameworks carry) and by ``scripts/verify_archs.py`` (what the PyPI wheels carry). No network; reads files only.
"""

from __future__ import annotations

import mmap
import re
import struct
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

FATBIN_MAGIC = struct.pack("<I", 0xBA55ED50)
KIND_PTX, KIND_SASS = 1, 2
ARCH_SPECIFIC = 0x100000  # the flag bit of sm_90a-style images
# NVIDIA's libraries that some wheels bundle: their architectures are NVIDIA's, not the framework's.
NVIDIA_LIBRARY = re.compile(
    r"^(lib)?(cudnn|cublas|cufft|curand|cusparse|cusolver|nvrtc|nvToolsExt|cudart|nccl|cupti|nvJitLink|gomp|cufile|nvshmem)",
    re.IGNORECASE,
)
_ELF_SECTION = ".nv_fatbin"
_IMAGE_HEADER = 48  # what is read of an image's header: kind, size, payload, architecture, flags


@dataclass(frozen=True, order=True)
class Image:
    """One compiled image in a fat binary: SASS or PTX for an architecture (75 = compute capability 7.5)."""

    kind: int
    arch: int
    specific: bool

    def __str__(self) -> str:
        name = "sm" if self.kind == KIND_SASS else "compute"
        return f"{name}_{self.arch}{'a' if self.specific else ''}"


def _numeric(cc: str) -> tuple[int, ...]:
    return tuple(int(p) for p in cc.rstrip("a").split("."))


def capability(arch: int) -> str:
    """75 -> "7.5", 100 -> "10.0", 121 -> "12.1"."""
    return f"{arch // 10}.{arch % 10}"


def fatbin_containers(path: Path | str) -> list[Counter[Image]]:
    """The images of each fat binary container in a file (a shared library, or a .fatbin). A container holds
    what one compilation unit was built into: one image per architecture it was compiled for."""
    with open(path, "rb") as f:
        sections = _elf_sections(f, _ELF_SECTION)
        if sections is not None:
            length = f.seek(0, 2)  # a section table may claim more than the file holds
            return [c for start, size in sections for c in _walk(f, start, min(start + size, length))]
        return _search(f)


def _elf_sections(f: BinaryIO, name: str) -> list[tuple[int, int]] | None:
    """(offset, size) of the sections called ``name`` of a little-endian 64-bit ELF file; None when the file
    is not one, or its section table cannot be read (then the whole file is searched instead)."""
    head = f.read(64)
    if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
        return None
    table_at = struct.unpack_from("<Q", head, 0x28)[0]
    entry, count, names_index = struct.unpack_from("<HHH", head, 0x3A)
    if entry < 64 or not 0 < count <= 65535 or names_index >= count:
        return None
    f.seek(table_at)
    table = f.read(entry * count)
    if len(table) < entry * count:
        return None
    headers = [struct.unpack_from("<IIQQQQ", table, i * entry) for i in range(count)]
    names_at, names_size = headers[names_index][4], headers[names_index][5]
    f.seek(names_at)
    names = f.read(min(names_size, 1 << 20))
    found = []
    for name_at, kind, _, _, offset, size in headers:
        end = names.find(b"\0", name_at)
        if kind != 8 and names[name_at:end].decode("latin-1") == name:  # 8: SHT_NOBITS, nothing in the file
            found.append((offset, size))
    return found


def _walk(f: BinaryIO, at: int, end: int) -> list[Counter[Image]]:
    """The containers from ``at`` to ``end``, each found from the one before by its size; after padding (zeros to
    an alignment) or a damaged container, the next one is searched for by its magic number."""

    def read(offset: int, size: int) -> bytes:
        f.seek(offset)
        return f.read(size)

    containers: list[Counter[Image]] = []
    while at + 16 <= end:
        stop, images = _container(read, at, end)
        if images:
            containers.append(images)
            at = stop
        else:
            at = _next_magic(read, at + 1, end)
    return containers


def _next_magic(read: Callable[[int, int], bytes], at: int, end: int, block: int = 1 << 20) -> int:
    """The offset of the next container magic number from ``at``, read a block at a time; ``end`` if none."""
    while at + 4 <= end:
        data = read(at, min(block, end - at))
        if not data:
            break
        found = data.find(FATBIN_MAGIC)
        if found != -1:
            return at + found
        at += max(len(data) - 3, 1)  # a number cut by the block's end is found in the next block
    return end


def _container(read: Callable[[int, int], bytes], at: int, end: int) -> tuple[int, Counter[Image]]:
    """The container at ``at`` (a 16-byte header, then images, each a header and its payload): its end and its
    images. One whose images do not fill it exactly, or that passes ``end``, is the magic number by chance or
    cut short: (-1, none)."""
    head = read(at, 16)
    if len(head) < 16 or head[:4] != FATBIN_MAGIC:
        return -1, Counter()
    _, version, header_size, size = struct.unpack("<IHHQ", head)
    stop: int = at + header_size + size
    if version != 1 or header_size != 16 or stop > end:
        return -1, Counter()
    found: Counter[Image] = Counter()
    p = at + header_size
    while p + 32 <= stop:
        image = _image(read(p, _IMAGE_HEADER))
        if image is None:
            return -1, Counter()
        found[image[0]] += 1
        p += image[1]
    if p != stop:
        return -1, Counter()
    return stop, found


def _image(raw: bytes) -> tuple[Image, int] | None:
    """An image header: the image and its full length (header and payload); None if it is not one."""
    if len(raw) < 32:
        return None
    kind, _, header_size, payload = struct.unpack_from("<HHIQ", raw)
    if header_size < 32 or kind not in (KIND_PTX, KIND_SASS):
        return None
    arch = struct.unpack_from("<I", raw, 28)[0]
    flags = struct.unpack_from("<Q", raw, 40)[0] if header_size >= 48 and len(raw) >= 48 else 0
    return Image(kind, arch, bool(flags & ARCH_SPECIFIC)), header_size + payload


def _search(f: BinaryIO) -> list[Counter[Image]]:
    """Every container found by its magic number, anywhere in the file."""
    containers: list[Counter[Image]] = []
    if f.seek(0, 2) == 0:
        return containers
    with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:

        def read(offset: int, size: int) -> bytes:
            return data[offset : offset + size]

        at = data.find(FATBIN_MAGIC)
        while at != -1:
            end, images = _container(read, at, len(data))
            if images:
                containers.append(images)
            at = data.find(FATBIN_MAGIC, end if end > at else at + 4)
    return containers


def count_images(containers: list[Counter[Image]]) -> Counter[Image]:
    """All the images of these containers, counted."""
    return sum(containers, Counter())


def fatbin_images(path: Path | str) -> Counter[Image]:
    """All the images of every container in a file, counted."""
    return count_images(fatbin_containers(path))


@dataclass(frozen=True)
class BuildCode:
    """What a build carries: SASS architectures ("9.0a" for an arch-specific image) and PTX architectures."""

    sm: tuple[str, ...]
    ptx: tuple[str, ...]

    def __str__(self) -> str:
        text = f"sm {' '.join(self.sm) or '-'}"
        return text + (f" + PTX {' '.join(self.ptx)}" if self.ptx else "")

    def matches(self, other: BuildCode, loose: bool = False) -> bool:
        """The same code; ``loose``: an arch-specific image counts as its architecture's (build info names no "a")."""

        def names(code: BuildCode) -> tuple[set[str], set[str]]:
            if loose:
                return {s.rstrip("a") for s in code.sm}, {p.rstrip("a") for p in code.ptx}
            return set(code.sm), set(code.ptx)

        return names(self) == names(other)

    @classmethod
    def of_row(cls, sm: Iterable[object], exact: Iterable[object], ptx: Iterable[object]) -> BuildCode:
        """A matrix row's (or recipe's) lists as a build's code: ``sm_exact`` entries carry their "a"."""
        sass = sorted([(str(s), "") for s in sm] + [(str(e), "a") for e in exact], key=lambda t: _numeric(t[0]))
        return cls(tuple(s + a for s, a in sass), tuple(str(p) for p in ptx))


def architecture_list(libraries: dict[str, list[Counter[Image]]]) -> BuildCode:
    """The build's architecture list: the set of images that most compilation units (fat-binary containers)
    of a library were built with, in the library where that set covers the most images. Kernels built apart
    (torch's sm_89 FP8 and sm_90a files, one-architecture units, a statically linked MAGMA with its own list)
    are fewer; a build made arch-specific for an architecture (onnxruntime's sm_90a, sm_120a) names it with
    its "a"."""
    best: tuple[int, frozenset[Image]] | None = None
    for containers in libraries.values():
        sets = Counter(frozenset(c) for c in containers if any(i.kind == KIND_SASS for i in c))
        if not sets:
            continue
        common = max(sets, key=lambda s: (sets[s], len(s)))
        # one-architecture units (onnxruntime's sm_90a-only kernels) can outnumber the main list's units: a set
        # holding the commonest one, and at least half as common, is the build's list
        wider = [s for s in sets if s > common and 2 * sets[s] >= sets[common]]
        if wider:
            common = max(wider, key=lambda s: (sets[s], len(s)))
        score = sets[common] * len(common)
        if best is None or score > best[0]:
            best = (score, common)
    if best is None:
        return BuildCode((), ())
    chosen = best[1]

    def names(kind: int) -> tuple[str, ...]:
        return tuple(capability(i.arch) + ("a" if i.specific else "") for i in sorted(chosen) if i.kind == kind)

    return BuildCode(names(KIND_SASS), names(KIND_PTX))
