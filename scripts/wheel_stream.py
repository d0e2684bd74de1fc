"""A wheel's members read as one HTTP download streams past (scripts/verify_archs.py): the wheel itself never
lands on disk (a cuDNN or torch wheel is 0.5-2.5 GB), only the member being read, and the whole download is still
held against the index's sha256 (and each member against its CRC-32) before anything read from it counts."""

from __future__ import annotations

import hashlib
import struct
import urllib.request
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

LOCAL_HEADER = b"PK\x03\x04"
CHUNK = 1 << 22


class WheelStreamError(Exception):
    """The download is not the wheel the index names, or not a zip read this way."""


class _Hashed:
    """A stream read exactly, every byte also fed to the digest."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw, self.digest, self.count = raw, hashlib.sha256(), 0

    def read(self, size: int) -> bytes:
        parts, left = [], size
        while left > 0:
            data = self.raw.read(min(left, CHUNK))
            if not data:
                break
            parts.append(data)
            left -= len(data)
        data = b"".join(parts)
        self.digest.update(data)
        self.count += len(data)
        return data

    def exact(self, size: int) -> bytes:
        data = self.read(size)
        if len(data) != size:
            raise WheelStreamError(f"the download ends early, at byte {self.count}")
        return data

    def drain(self) -> None:
        while self.read(CHUNK):
            pass


def _sizes(extra: bytes, compressed: int, size: int) -> tuple[int, int]:
    """The member's sizes, from its Zip64 extra field where the header's own are 0xFFFFFFFF."""
    at = 0
    while at + 4 <= len(extra):
        tag, length = struct.unpack_from("<HH", extra, at)
        if tag == 1:
            fields = extra[at + 4 : at + 4 + length]
            values = [struct.unpack_from("<Q", fields, i)[0] for i in range(0, len(fields) - 7, 8)]
            if size == 0xFFFFFFFF and values:
                size = values.pop(0)
            if compressed == 0xFFFFFFFF and values:
                compressed = values.pop(0)
        at += 4 + length
    return compressed, size


def members(stream: BinaryIO, sha256: str, keep: Callable[[str], bool], workdir: Path) -> Iterator[tuple[str, Path]]:
    """(name, file) of each member ``keep`` accepts, written to ``workdir`` one at a time (the caller reads it and
    may delete it before the next); raises WheelStreamError at the end when the stream's sha256 is not ``sha256``."""
    src = _Hashed(stream)
    while (signature := src.read(4)) == LOCAL_HEADER:
        head = src.exact(26)
        _, flags, method, _, _, crc, compressed, size, name_len, extra_len = struct.unpack("<HHHHHIIIHH", head)
        name = src.exact(name_len).decode("utf-8", "replace")
        compressed, size = _sizes(src.exact(extra_len), compressed, size)
        if flags & 0x8:  # sizes only after the data: not something a wheel builder writes
            raise WheelStreamError(f"{name}: sizes in a data descriptor; download the wheel and pass --wheel")
        if not keep(name):
            for done in range(0, compressed, CHUNK):
                src.exact(min(CHUNK, compressed - done))
            continue
        if method not in (0, 8):
            raise WheelStreamError(f"{name}: compression method {method}")
        target = workdir / name.rsplit("/", 1)[-1]
        inflate, check, left = zlib.decompressobj(-15), 0, compressed
        with open(target, "wb") as out:
            while left:
                data = src.exact(min(CHUNK, left))
                left -= len(data)
                data = inflate.decompress(data) if method == 8 else data
                check = zlib.crc32(data, check)
                out.write(data)
            if method == 8:
                tail = inflate.flush()
                check = zlib.crc32(tail, check)
                out.write(tail)
        if check != crc or target.stat().st_size != size:
            target.unlink()
            raise WheelStreamError(f"{name}: CRC-32 or size differs from its header")
        yield name, target
    if signature and signature != b"PK\x01\x02":  # the central directory follows the last member
        raise WheelStreamError(f"no zip member header at byte {src.count - len(signature)}")
    src.drain()
    if sha256 and src.digest.hexdigest() != sha256:
        raise WheelStreamError(f"sha256 {src.digest.hexdigest()} is not the index's {sha256}")


def stream_wheel(url: str, sha256: str, keep: Callable[[str], bool], workdir: Path) -> Iterator[tuple[str, Path]]:
    """members() of the wheel at ``url``, as its one download streams past."""
    with urllib.request.urlopen(url, timeout=120) as response:
        yield from members(response, sha256, keep, workdir)
