"""The linker's cache read as a file (``linker.parse_ld_cache``) says what ``ldconfig -p`` says of it: this
machine's cache, and caches this machine's ldconfig writes in each of its formats into a root of its own."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dnnresolve.detect.linker import LD_CACHE, parse_ld_cache, parse_ldconfig
from dnnresolve.detect.machine import detect_runtime

LDCONFIG = shutil.which("ldconfig") or next(
    (p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.path.exists(p)), None
)
pytestmark = pytest.mark.skipif(LDCONFIG is None, reason="no ldconfig on this machine")


def listed(cache: Path) -> dict[str, list[str]]:
    assert LDCONFIG is not None
    out = subprocess.run([LDCONFIG, "-p", "-C", str(cache)], capture_output=True, text=True, timeout=30, check=True)
    return parse_ldconfig(out.stdout).entries


@pytest.mark.skipif(not os.path.isfile(LD_CACHE), reason="this machine has no linker cache")
def test_this_machines_cache_reads_as_ldconfig_lists_it() -> None:
    cache = parse_ld_cache(Path(LD_CACHE).read_bytes())
    assert cache is not None and cache.entries == listed(Path(LD_CACHE))


def _machine(root: Path) -> None:
    """A root with real shared libraries (copies of this machine's) in a system and a CUDA-style directory."""
    libz = next(
        Path(d) / "libz.so.1"
        for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib")
        if (Path(d) / "libz.so.1").exists()
    )
    for d in ("usr/lib", "usr/local/cuda-11.8/lib64", "opt/cudnn/lib"):
        (root / d).mkdir(parents=True)
        shutil.copy(libz.resolve(), root / d / "libz.so.1")
    (root / "etc").mkdir()
    (root / "etc" / "ld.so.conf").write_text("/usr/local/cuda-11.8/lib64\n/opt/cudnn/lib\n")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="ldconfig -r (chroot) needs root")
@pytest.mark.parametrize("fmt", ["new", "compat", "old"])
def test_caches_ldconfig_writes_read_as_it_lists_them(tmp_path: Path, fmt: str) -> None:
    root = tmp_path / "root"
    _machine(root)
    assert LDCONFIG is not None
    # -r: everything it reads and writes (the cache, its auxiliary cache) stays under the root
    subprocess.run([LDCONFIG, "-r", str(root), "-X", "-c", fmt], capture_output=True, timeout=60, check=True)
    cache_file = root / "etc" / "ld.so.cache"
    expected = listed(cache_file)
    assert "/opt/cudnn/lib/libz.so.1" in expected["libz.so.1"]
    parsed = parse_ld_cache(cache_file.read_bytes())
    if fmt == "old":  # only the old format: not read here, so detection asks ldconfig, as before
        assert parsed is None
    else:
        assert parsed is not None and parsed.entries == expected
    # and detection of the copy finds the same libraries either way
    rt = detect_runtime(root=str(root), env={"PATH": "/usr/bin:/bin"})
    assert not any("ldconfig" in n for n in rt.notes), rt.notes


def test_what_is_not_a_cache_is_not_read_as_one() -> None:
    assert parse_ld_cache(b"") is None
    assert parse_ld_cache(b"glibc-ld.so.cache1.1") is None  # cut short in its header
    header = b"glibc-ld.so.cache1.1" + (5).to_bytes(4, "little") + bytes(24)
    assert parse_ld_cache(header) is None  # five entries announced, none there
    assert parse_ld_cache(b"ld.so-1.7.0\0" + (1 << 30).to_bytes(4, "little")) is None


@given(st.binary(max_size=400), st.sampled_from([b"", b"glibc-ld.so.cache1.1", b"ld.so-1.7.0\0\1\0\0\0"]))
def test_any_bytes_read_as_a_cache_or_none_never_an_error(data: bytes, magic: bytes) -> None:
    cache = parse_ld_cache(magic + data)
    assert cache is None or all(isinstance(p, str) for paths in cache.entries.values() for p in paths)
