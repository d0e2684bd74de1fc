"""Container images as the matrix knows them: NVIDIA's CUDA image tags, and the Python each OS image installs.

``[[cuda_image]]`` rows hold one tag family of ``nvidia/cuda`` (``11.0.3-cudnn8-{runtime,devel}-ubuntu18.04``):
the CUDA toolkit it carries, the cuDNN of its ``-cudnnN`` variant, whether NVIDIA has deleted it, and the
``NVIDIA_REQUIRE_CUDA`` its base image sets (the condition the container toolkit checks on the host's driver).
``[[os_python]]`` rows hold the ``python3`` an OS image's package manager installs (the CUDA images carry none).
"""

from __future__ import annotations

import re

from .records import record
from .versions import CudaVersion, CudnnVersion, PythonVersion

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .schema import Row

FLAVOURS = ("base", "runtime", "devel")


@record(frozen=True)
class CudaImage:
    """One tag family of nvidia/cuda: ``{tag}-[{cudnn_tag}-]{flavour}-{os}``."""

    tag: str  # the version as the tag spells it: "10.0", "11.0.3"
    cuda: CudaVersion
    flavours: tuple[str, ...]
    os: tuple[str, ...]
    cudnn_tag: str = ""  # "cudnn8", "cudnn" (CUDA 12.4 on: the tag names no major); "" for no cuDNN
    cudnn: CudnnVersion | None = None
    deleted: bool = False
    nvidia_require_cuda: str = ""  # "cuda>=12.4 brand=tesla,driver>=470,driver<471 ...": "" when unknown
    source: str = ""
    require_source: str = ""  # the base Dockerfile that sets nvidia_require_cuda
    note: str = ""
    row: int = 0
    line: int = 0

    def name(self, flavour: str, os_name: str) -> str:
        middle = f"{self.cudnn_tag}-" if self.cudnn_tag else ""
        return f"{self.tag}-{middle}{flavour}-{os_name}"


@record(frozen=True)
class OsPython:
    """The Python 3 an OS image installs as ``python3`` (``apt-get install python3``)."""

    os: str  # as CUDA image tags spell it: "ubuntu22.04"
    python: PythonVersion
    source: str = ""
    note: str = ""
    row: int = 0
    line: int = 0


# NVIDIA_REQUIRE_CUDA: space-separated terms (ORed) of comma-separated PROPERTY OP VALUE factors (ANDed), the
# properties libnvidia-container knows (src/cli/configure.c); an unknown one fails the container ("invalid expression")
_REQUIRE_FACTOR = re.compile(r"^(?:cuda|driver|arch|brand)(?:=|!=|<|<=|>|>=)[\w.]+$")


def build_cuda_image(row: Row) -> CudaImage:
    row.check_keys(
        {"tag", "cuda", "cudnn_tag", "cudnn", "flavours", "os", "deleted", "nvidia_require_cuda", "source", "sources"}
        | {"note"}
    )
    tag = row.text("tag", required=True)
    cuda = row.parsed("cuda", CudaVersion.parse, required=True)
    assert cuda is not None
    flavours = row.texts("flavours", required=True)
    unknown = sorted(set(flavours) - set(FLAVOURS))
    if unknown:
        row.fail("flavours", f"unknown flavour {unknown[0]!r} (known: {', '.join(FLAVOURS)})")
    cudnn_tag = row.text("cudnn_tag")
    cudnn = row.parsed("cudnn", CudnnVersion.parse)
    if bool(cudnn_tag) != (cudnn is not None):
        row.fail("cudnn", "cudnn_tag and cudnn go together")
    if cudnn_tag and not cudnn_tag.startswith("cudnn"):
        row.fail("cudnn_tag", f"expected 'cudnn' or 'cudnnN', got {cudnn_tag!r}")
    require = row.text("nvidia_require_cuda")
    for factor in (f for term in require.split() for f in term.split(",")):
        if not _REQUIRE_FACTOR.match(factor):
            row.fail("nvidia_require_cuda", f"not a condition the container toolkit reads: {factor!r}")
    source = row.source()
    # (the script lists the base Dockerfile last in sources where it is not the source itself)
    dockerfiles = [u for u in row.texts("sources") if u.endswith("/Dockerfile")]
    return CudaImage(
        tag=tag,
        cuda=cuda,
        flavours=flavours,
        os=row.texts("os", required=True),
        cudnn_tag=cudnn_tag,
        cudnn=cudnn,
        deleted=row.flag("deleted", False),
        nvidia_require_cuda=require,
        source=source,
        require_source=(dockerfiles[-1] if dockerfiles else source) if require else "",
        note=row.text("note"),
        row=row.index,
        line=row.line,
    )


def build_os_python(row: Row) -> OsPython:
    row.check_keys({"os", "python", "source", "sources", "note"})
    python = row.parsed("python", PythonVersion.parse, required=True)
    assert python is not None
    return OsPython(
        os=row.text("os", required=True),
        python=python,
        source=row.source(),
        note=row.text("note"),
        row=row.index,
        line=row.line,
    )
