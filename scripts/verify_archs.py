#!/usr/bin/env python3
"""Read which GPU architectures a framework's PyPI Linux wheels really carry code for, and list every matrix
row whose `sm` / `ptx` differ from them.

Run by hand (it streams wheels of up to 2.5 GB each from PyPI, never keeping one on disk; the tests never run
it that way):
    scripts/verify_archs.py [--package torch] [--version 2.7.0 ...] [--all] [--wheel FILE --version V]
    scripts/verify_archs.py --package nvidia-cudnn-cu11 [--version 8.7.0.84 ...] [--all] [--wheel FILE ...]

A CUDA library keeps its kernels in fat binaries: one compiled image (SASS) per architecture, and
optionally PTX that the driver can compile for newer ones. This reads the fat binary headers of the
wheel's own shared libraries (not NVIDIA's bundled ones) without loading them, counts the images per
architecture in the library that holds the most, and takes the architectures that most kernels were built
for: the build's architecture list (torch's TORCH_CUDA_ARCH_LIST, TensorFlow's TF_CUDA_COMPUTE_CAPABILITIES,
onnxruntime's CMAKE_CUDA_ARCHITECTURES). A few specialised kernels (sm_89 FP8, sm_90a) do not count.

The plain PyPI wheel is the row's default CUDA variant (cuda_default), so it checks the row's own lists.

For NVIDIA's cuDNN wheels (nvidia-cudnn-cuNN) it reads NVIDIA's own libraries instead and checks the floor of
the [[cudnn]] row for that CUDA major: the oldest compute capability that every library holding GPU code
carries code for (SASS of an X.y runs on X.z, z >= y; PTX on anything newer). A row whose floor NVIDIA's
support matrix states may be lower than the code (the code is kept for GPUs NVIDIA no longer lists); a row
whose floor was read from the library (compute_capability_basis = "library") must equal it.
Exit status: 0 when every checked row agrees, 1 when one differs, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import urllib.request
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # wheel_stream, when this file is loaded by path

from packaging.utils import canonicalize_name
from packaging.version import Version
from wheel_stream import WheelStreamError, stream_wheel

from dnnresolve.fatbin import (  # the reader is the package's (doctor reads installed libraries with it)
    KIND_PTX,
    KIND_SASS,
    NVIDIA_LIBRARY,
    BuildCode,
    Image,
    architecture_list,
    capability,
    count_images,
    fatbin_containers,
    fatbin_images,
)
from dnnresolve.matrix import load_matrix
from dnnresolve.model import CudnnRelease, FrameworkRelease
from dnnresolve.versions import ComputeCapability, CudnnVersion

__all__ = [
    "KIND_PTX",
    "KIND_SASS",
    "BuildCode",
    "Image",
    "architecture_list",
    "capability",
    "count_images",
    "fatbin_containers",
    "fatbin_images",
]

# A shared library's name on each system, and the platform tag of the wheels to read.
LIBRARY = {"linux": re.compile(r"\.so(\.|$)"), "windows": re.compile(r"\.(dll|pyd)$", re.IGNORECASE)}
PLATFORM = {"linux": re.compile(r"linux.*x86_64"), "windows": re.compile(r"win_amd64")}
PYTHON_PREFERENCE = (
    "cp311",
    "cp310",
    "cp312",
    "cp39",
    "cp38",
    "cp37",
    "cp36",
    "cp35",
    "cp34",
    "cp27",
    "cp313",
    "cp314",
    "cp315",
)


def wanted(system: str, nvidia: bool) -> Callable[[str], bool]:
    """Which members to read: the wheel's own shared libraries (not NVIDIA's, unless ``nvidia``: the wheel is
    NVIDIA's own), and the files that state the CUDA it was built with."""

    def keep(name: str) -> bool:
        base = name.rsplit("/", 1)[-1]
        library = bool(LIBRARY[system].search(base)) and (nvidia or not NVIDIA_LIBRARY.match(base))
        return library or bool(CUDA_STATING_FILES.match(name))

    return keep


def zip_members(wheel: Path, keep: Callable[[str], bool], workdir: Path) -> Iterator[tuple[str, Path]]:
    """(name, file) of each member of a wheel on disk that ``keep`` accepts, written out one at a time."""
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            if keep(info.filename):
                target = workdir / info.filename.rsplit("/", 1)[-1]
                with z.open(info) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
                yield info.filename, target


def read_members(found: Iterable[tuple[str, Path]]) -> tuple[dict[str, list[Counter[Image]]], dict[str, str]]:
    """The fat binary containers of each shared library among the members, and the text of the files that state
    the build's CUDA; each member's file is deleted once read (one on disk at a time)."""
    libraries: dict[str, list[Counter[Image]]] = {}
    texts: dict[str, str] = {}
    for name, path in found:
        if CUDA_STATING_FILES.match(name):
            texts[name] = path.read_text("utf-8", "replace")
        elif containers := fatbin_containers(path):
            libraries[name.rsplit("/", 1)[-1]] = containers
        path.unlink()
    return libraries, texts


def wheel_members(
    wheel: Path | dict[str, str], workdir: Path, system: str = "linux", nvidia: bool = False
) -> tuple[dict[str, list[Counter[Image]]], dict[str, str]]:
    """read_members() of a wheel on disk, or of PyPI's file (pypi_wheel()) as its download streams past."""
    keep = wanted(system, nvidia)
    if isinstance(wheel, Path):
        return read_members(zip_members(wheel, keep, workdir))
    try:
        return read_members(stream_wheel(wheel["url"], wheel["sha256"], keep, workdir))
    except WheelStreamError as e:
        raise SystemExit(f"verify_archs: {wheel['filename']}: {e}") from None


def common_sets(containers: list[Counter[Image]], n: int = 3) -> list[tuple[str, int]]:
    """The ``n`` commonest image sets among containers, for --show."""
    sets = Counter(frozenset(c) for c in containers)
    return [(" ".join(str(i) for i in sorted(s)), k) for s, k in sets.most_common(n)]


def pypi_files(package: str) -> list[dict[str, Any]]:
    """The files of a project, as PyPI's simple index names them in JSON."""
    request = urllib.request.Request(
        f"https://pypi.org/simple/{package}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        files: list[dict[str, Any]] = json.load(response)["files"]
    return files


def pypi_wheel(package: str, version: str, system: str = "linux") -> dict[str, str] | None:
    """PyPI's x86-64 wheel of a release for a system (one Python), as the simple index's JSON names it."""
    files = pypi_files(package)
    found = []
    for f in files:
        # name-version-python-abi-platform.whl, the name with "_" for "-" (older uploads kept its case)
        parts = f["filename"].split("-")
        name_matches = len(parts) >= 5 and canonicalize_name(parts[0]) == package and parts[1] == version
        if name_matches and PLATFORM[system].search(parts[-1]):
            found.append(f)
    ranked = sorted(
        found, key=lambda f: next((i for i, t in enumerate(PYTHON_PREFERENCE) if f"-{t}-" in f["filename"]), 99)
    )
    if not ranked:
        return None
    f = ranked[0]  # a py2.py3-none wheel (mxnet) ranks last, but is taken when it is all there is
    uploaded = str(f.get("upload-time", ""))[:10]
    return {"filename": f["filename"], "url": f["url"], "sha256": f["hashes"].get("sha256", ""), "uploaded": uploaded}


# Where a wheel states the CUDA it was built with: torch/version.py (cuda = '10.2'), TensorFlow's
# build_info.py ('cuda_version': '12.3'), paddle/version/__init__.py (cuda_version = '11.8').
CUDA_STATED = re.compile(r"""\bcuda(?:_version)?['"]?\s*(?::\s*[\w\[\]]+\s*)?[=:,]\s*['"](\d+\.\d+)""")
# TensorFlow's build_info also names the architectures it was built for: ['sm_50', ..., 'compute_80'] (a plain
# '3.5' in older releases meant both the SASS and the PTX of 3.5).
CODE_STATED = re.compile(r"""cuda_compute_capabilities['"]?\s*[=:,]\s*\[([^\]]*)\]""")
CUDA_STATING_FILES = re.compile(r"^[^/]+/(version\.py|version/__init__\.py|python/platform/build_info\.py)$")


def wheel_build_facts(texts: dict[str, str]) -> tuple[str, BuildCode | None]:
    """The CUDA series the wheel says it was built with ("" when it does not say), and the GPU code it says it
    carries (None when it does not say), from the texts of its CUDA_STATING_FILES."""
    cuda, code = "", None
    for _, text in sorted(texts.items()):
        m = CUDA_STATED.search(text)
        cuda = cuda or (m.group(1) if m else "")
        m = CODE_STATED.search(text)
        if m and code is None:
            sass, ptx = set(), set()
            for item in re.findall(r"""['"]([^'"]+)['"]""", m.group(1)):
                arch = re.sub(r"^(sm|compute)_", "", item).replace(".", "")
                if not arch.isdigit():
                    continue
                if not item.startswith("compute_"):
                    sass.add(int(arch))
                if not item.startswith("sm_"):
                    ptx.add(int(arch))
            code = BuildCode(tuple(capability(a) for a in sorted(sass)), tuple(capability(a) for a in sorted(ptx)))
    return cuda, code


def compare(row: FrameworkRelease, version: str, wheel_name: str, carried: BuildCode, cuda: str = "") -> bool:
    """Print one line for the row; True when it agrees with the wheel (its code, and its CUDA where stated)."""
    stated = BuildCode.of_row(row.sm, row.sm_exact, row.ptx)
    default = row.cuda_default or (row.cuda[0] if len(row.cuda) == 1 else None)  # the plain wheel's CUDA
    default_text = str(default.series) if default else ""
    named = "" if version == str(row.version) else f", the row of {row.version}"
    where = f"{row.package} {version} (matrix line {row.line}{named}, default CUDA {default_text or '-'})"
    built = f" (built with CUDA {cuda})" if cuda else ""
    if not carried.sm and not carried.ptx:
        print(f"none    {where}: {wheel_name}{built} holds no CUDA images (a CPU wheel?)")
        return not stated.sm and not stated.ptx
    if carried.matches(stated) and (not cuda or cuda == default_text):
        print(f"ok      {where}: {wheel_name}{built} carries {carried}")
        return True
    print(f"DIFFERS {where}: matrix {stated}, {wheel_name}{built} carries {carried}")
    return False


CUDNN_WHEEL = re.compile(r"^nvidia-cudnn-cu(\d+)$")


def library_floor(libraries: dict[str, list[Counter[Image]]]) -> tuple[str, str, BuildCode] | None:
    """The oldest compute capability every library carries code for, the library that sets it and its code (its
    images over all its containers); None when no library holds GPU code."""
    lowest: list[tuple[int, str, BuildCode]] = []
    for name, containers in libraries.items():
        images = count_images(containers)
        if not images:
            continue
        sass = sorted({i.arch for i in images if i.kind == KIND_SASS and not i.specific})
        ptx = sorted({i.arch for i in images if i.kind == KIND_PTX})
        code = BuildCode(tuple(capability(a) for a in sass), tuple(capability(a) for a in ptx))
        # a library of arch-specific kernels only (sm_90a) runs on that architecture alone
        lowest.append((min(sass + ptx or [i.arch for i in images]), name, code))
    if not lowest:
        return None
    arch, name, code = max(lowest, key=lambda t: (t[0], t[1]))
    return capability(arch), name, code


def compare_cudnn(
    rows: list[CudnnRelease], version: str, major: int, wheel_name: str, libraries: dict[str, list[Counter[Image]]]
) -> bool:
    """Print the wheel's floor against its [[cudnn]] row's for CUDA ``major``; True when they agree."""
    found = library_floor(libraries)
    wanted = CudnnVersion.parse(version).truncate(3)
    row = next((r for r in rows if r.version == wanted), None)
    where = f"cuDNN {wanted} for CUDA {major}.x" + (f" (matrix line {row.line})" if row else "")
    if found is None:
        print(f"none    {where}: {wheel_name} holds no GPU code")
        return False
    floor, lib, code = found
    said = f"{wheel_name} carries code for {floor} and newer in every library ({lib}: {code})"
    stated = row.floor(major) if row else None
    if row is None or stated is None:
        print(f"UNSTATED {where}: the matrix states no floor; {said}")
        return False
    from_library = row.compute_capability_basis == "library"
    if stated == ComputeCapability.parse(floor):
        print(f"ok      {where}: floor {stated}; {said}")
        return True
    if not from_library and stated > ComputeCapability.parse(floor):
        print(f"ok      {where}: NVIDIA's support matrix lists {stated} and newer; {said} (kept for older GPUs)")
        return True
    kind = "read from the library" if from_library else "NVIDIA's support matrix"
    print(f"DIFFERS {where}: matrix {stated} ({kind}); {said}")
    return False


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--package", default="torch", help="the framework's PyPI package (torch, onnxruntime-gpu, ...)")
    ap.add_argument("--version", action="append", default=[], help="a release to check (repeatable)")
    ap.add_argument("--all", action="store_true", help="every row of the package for the system")
    ap.add_argument("--os", choices=sorted(PLATFORM), default="linux", help="whose wheels and rows (default linux)")
    ap.add_argument("--wheel", type=Path, help="read this wheel instead of downloading (with one --version)")
    ap.add_argument("--matrix", help="this matrix instead of the packaged one")
    ap.add_argument("--show", action="store_true", help="also print the image counts of each library")
    args = ap.parse_args(argv)
    if args.wheel and len(args.version) != 1:
        ap.error("--wheel needs exactly one --version")
    if not args.version and not args.all:
        ap.error("name releases with --version, or --all")
    m = load_matrix(args.matrix)
    package = canonicalize_name(args.package)
    if cudnn := CUDNN_WHEEL.match(package):
        return check_cudnn_wheels(args, package, int(cudnn.group(1)), m.cudnn_releases())
    rows = [r for r in m.frameworks if r.package == package and args.os in r.os]
    # (release whose wheel is read, the row that states it): a row stands for the releases it covers
    checks: list[tuple[str, FrameworkRelease]] = []
    if args.version:
        for text in args.version:
            covering = [r for r in rows if r.matches(Version(text))]
            if not covering:
                ap.error(f"no {args.os} {package} row for {text}")
            checks.append((text, covering[0]))
    else:
        checks = [(str(r.version), r) for r in rows]
    differ = 0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for version, row in checks:
            found = {"filename": args.wheel.name} if args.wheel else pypi_wheel(package, version, args.os)
            if found is None:
                print(f"skip    {row.package} {version}: no {args.os} x86-64 wheel on PyPI")
                continue
            name = found["filename"]
            libraries, texts = wheel_members(args.wheel or found, work, args.os)
            cuda, stated = wheel_build_facts(texts)
            if args.show:
                for lib, containers in sorted(libraries.items()):
                    images = count_images(containers)
                    print(f"        {lib}: " + ", ".join(f"{i} x{n}" for i, n in sorted(images.items())))
                    for text, k in common_sets(containers):
                        print(f"          {k} containers: {text}")
            carried = architecture_list(libraries)
            if stated is not None:
                # a build flag such as compute_80 can also leave SASS behind: the libraries may carry more than
                # the build info names, never less
                read_sm = {s.rstrip("a") for s in carried.sm}
                if not (set(stated.sm) <= read_sm and set(stated.ptx) <= set(carried.ptx)):
                    differ += 1
                    print(
                        f"MISREAD {row.package} {version}: the wheel states {stated}, its libraries read as {carried}"
                    )
                elif carried.matches(stated, loose=True):
                    print(f"        {row.package} {version}: the wheel's own build info states the same ({stated})")
                else:
                    print(
                        f"        {row.package} {version}: the wheel's own build info states {stated}; "
                        "its libraries carry that and more"
                    )
            if not compare(row, version, name, carried, cuda):
                differ += 1
    print(f"{differ} difference(s)")
    return 1 if differ else 0


def check_cudnn_wheels(args: argparse.Namespace, package: str, major: int, rows: list[CudnnRelease]) -> int:
    """--package nvidia-cudnn-cuNN: each release's floor read from its wheel against the [[cudnn]] rows."""
    versions = list(args.version)
    if args.all:  # PyPI's newest build of each release the rows name for this CUDA major
        names = [f["filename"] for f in pypi_files(package)]
        for r in rows:
            if any(c.major == major for c in r.cuda):
                builds = sorted(
                    {n.split("-")[1] for n in names if n.split("-")[1].startswith(f"{r.version}.")}, key=Version
                )
                versions += builds[-1:]
    differ = 0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for version in versions:
            found = {"filename": args.wheel.name} if args.wheel else pypi_wheel(package, version, args.os)
            if found is None:
                print(f"skip    {package} {version}: no {args.os} x86-64 wheel on PyPI")
                continue
            name = found["filename"]
            libraries, _ = wheel_members(args.wheel or found, work, args.os, nvidia=True)
            if not args.wheel:  # printed once the download's sha256 was found to be the index's
                print(f"        {name}: sha256 {found['sha256']}, uploaded {found.get('uploaded', '?')}")
            if args.show:
                for lib, containers in sorted(libraries.items()):
                    images = count_images(containers)
                    print(f"        {lib}: " + ", ".join(f"{i} x{n}" for i, n in sorted(images.items())))
            if not compare_cudnn(rows, version, major, name, libraries):
                differ += 1
    print(f"{differ} difference(s)")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
