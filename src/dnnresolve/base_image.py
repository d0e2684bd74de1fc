"""What a Dockerfile's base image brings: its CUDA, cuDNN, OS and Python, or the framework it carries.

``nvidia/cuda:X-[cudnnN-]{base,runtime,devel}-OS`` is looked up in the matrix's ``[[cuda_image]]`` rows (which
also say whether NVIDIA deleted the tag); ``pytorch/pytorch:2.2.1-cuda12.1-cudnn8-runtime`` carries that torch
build, with the CUDA and cuDNN its tag names, ``tensorflow/tensorflow:2.15.0-gpu`` that TensorFlow; ``python:3.11``
that Python; an OS image (``ubuntu:22.04``) its OS. Of any other image, what its tag spells as whole words
(``cuda11.8.0``, ``cudnn8.2``, ``ubuntu20.04``, ``py3.10``) is read, with a note that the image is not in the matrix.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from .records import field, record
from .versions import CudaVersion, CudnnVersion, PythonVersion, VersionError

if TYPE_CHECKING:
    from .images import CudaImage
    from .matrix import Matrix

_REF = re.compile(r"^(?:(?P<registry>[\w.-]+(?::\d+)?)/(?=[^/]+/))?(?P<name>[\w./-]+?)(?::(?P<tag>[\w.-]+))?(?:@\S+)?$")
_CUDA_TAG = re.compile(
    r"^(?P<version>\d+\.\d+(?:\.\d+)?)-(?:(?P<cudnn>cudnn\d*)-)?(?P<flavour>base|runtime|devel)(?:-(?P<os>[\w.]+))?$"
)
_TORCH_TAG = re.compile(r"^(?P<torch>\d+\.\d+(?:\.\d+)?)-cuda(?P<cuda>\d+\.\d+)-cudnn(?P<cudnn>\d+)-(runtime|devel)$")
_TF_TAG = re.compile(r"^(?P<tf>\d+\.\d+(?:\.\d+)?)(?:rc\d+)?-gpu(?:-py3)?(?:-jupyter)?$")
_PYTHON_TAG = re.compile(r"^(?P<python>3\.\d+)(?:\.\d+)?(?:[-.\w]*)?$")
# what other images' tags spell out, each as a whole dash- or underscore-separated word:
# paddlepaddle/paddle:2.4.2-gpu-cuda11.2-cudnn8.2-trt8.0, rapidsai/…:cuda11.8.0-base-ubuntu20.04-py3.10
_TAG_FACTS = {
    "cuda": re.compile(r"(?:^|[-_])cuda(\d+\.\d+(?:\.\d+)?)(?=$|[-_])"),
    "cudnn": re.compile(r"(?:^|[-_])cudnn(\d+(?:\.\d+){0,3})(?=$|[-_])"),
    "os": re.compile(r"(?:^|[-_])(ubuntu\d\d\.\d\d)(?=$|[-_])"),
    "python": re.compile(r"(?:^|[-_])py(?:thon)?(3\.\d+)(?=$|[-_])"),
}
_LABELS = {"cuda": "CUDA", "cudnn": "cuDNN", "os": "OS", "python": "Python"}
_PARSE: dict[str, Callable[[str], object]] = {
    "cuda": CudaVersion.parse,
    "cudnn": CudnnVersion.parse,
    "os": str,
    "python": PythonVersion.parse,
}
_UBUNTU = {"bionic": "18.04", "focal": "20.04", "jammy": "22.04", "noble": "24.04", "xenial": "16.04"}
_NO_CUDA_LIBS = frozenset({"cuda", "cudnn"})  # an OS, Python or conda image: no CUDA libraries until a step adds them
_NO_CUDA = ("continuumio/miniconda3", "continuumio/anaconda3", "condaforge/miniforge3", "mambaorg/micromamba")
TORCH_IMAGE_SOURCE = "https://hub.docker.com/r/pytorch/pytorch/tags"
TF_IMAGE_SOURCE = "https://www.tensorflow.org/install/docker"
CUDA_IMAGE_LIST = "https://gitlab.com/nvidia/container-images/cuda/blob/master/doc/supported-tags.md"


@record
class BaseImage:
    """What one FROM image sets; ``known`` is False for an image this reader cannot tell anything of."""

    ref: str
    known: bool = True
    os: str = ""  # "ubuntu22.04"
    cuda: CudaVersion | None = None
    cudnn: CudnnVersion | None = None
    python: PythonVersion | None = None
    framework: str = ""  # a requirement the image has installed: "torch==2.2.1+cu121"
    deleted: bool = False
    replacement: str = ""  # a published tag with the same CUDA and cuDNN, for a deleted one
    flavour: str = ""  # of an nvidia/cuda tag: "base", "runtime", "devel"
    nvidia_require_cuda: str = ""  # the NVIDIA_REQUIRE_CUDA it sets, where the matrix knows it
    require_source: str = ""  # the Dockerfile that sets it
    source: str = ""
    notes: list[str] = field(default_factory=list)
    absent: frozenset[str] = frozenset()  # of "cuda", "cudnn": what this image is known not to have


def parse_ref(ref: str) -> tuple[str, str]:
    """(repository without a default registry, tag) of an image reference; tag "" when none."""
    m = _REF.match(ref.strip())
    if m is None:
        return ref, ""
    name = m.group("name")
    registry = m.group("registry") or ""
    if registry in ("docker.io", "index.docker.io", "registry.hub.docker.com", "nvcr.io") or not registry:
        pass
    else:
        name = f"{registry}/{name}"
    if name.startswith("library/"):
        name = name[len("library/") :]
    return name.lower(), m.group("tag") or ""


def resolve(ref: str, matrix: Matrix) -> BaseImage:
    name, tag = parse_ref(ref)
    if name == "nvidia/cuda":
        return _cuda_image(ref, tag, matrix)
    if name == "pytorch/pytorch":
        m = _TORCH_TAG.match(tag)
        if m:
            cuda = m.group("cuda").replace(".", "")
            # the tag's CUDA and cuDNN are the image's: conda's on the runtime images, nvidia/cuda's on the devel ones
            return BaseImage(
                ref,
                cuda=CudaVersion.parse(m.group("cuda")),
                cudnn=CudnnVersion.parse(m.group("cudnn")),
                framework=f"torch=={m.group('torch')}+cu{cuda}",
                source=TORCH_IMAGE_SOURCE,
            )
        return BaseImage(ref, known=False, notes=[f"pytorch/pytorch tag {tag or 'latest'!r}: which torch is unknown"])
    if name == "tensorflow/tensorflow":
        m = _TF_TAG.match(tag)
        if m:
            version = m.group("tf")
            package = "tensorflow-gpu" if version.startswith("1.") else "tensorflow"
            return BaseImage(ref, framework=f"{package}=={version}", source=TF_IMAGE_SOURCE)
        return BaseImage(ref, known=False, notes=[f"tensorflow/tensorflow tag {tag or 'latest'!r}: not a GPU release"])
    if name == "python":
        m = _PYTHON_TAG.match(tag)
        if m:
            return BaseImage(
                ref,
                python=PythonVersion.parse(m.group("python")),
                source="https://hub.docker.com/_/python",
                absent=_NO_CUDA_LIBS,
            )
    if name == "ubuntu":
        version = _UBUNTU.get(tag, tag)
        if re.fullmatch(r"\d\d\.\d\d", version):
            return BaseImage(ref, os=f"ubuntu{version}", absent=_NO_CUDA_LIBS)
    if name in _NO_CUDA:
        return BaseImage(ref, absent=_NO_CUDA_LIBS)
    return _from_tag(ref, tag)


def _from_tag(ref: str, tag: str) -> BaseImage:
    """An image the matrix does not know: what its tag spells of CUDA, cuDNN, OS and Python, and a note."""
    image = BaseImage(ref, known=False)
    spelled = []
    for key, pattern in _TAG_FACTS.items():
        m = pattern.search(tag)
        if m is None:
            continue
        try:
            value = _PARSE[key](m.group(1))
        except VersionError:
            continue
        setattr(image, key, value)
        spelled.append(f"{_LABELS[key]} {m.group(1)}")
    if spelled:
        image.notes.append(f"base image {ref}: not in the matrix; {', '.join(spelled)} read from its tag")
    else:
        image.notes.append(f"base image {ref}: not in the matrix, its CUDA, cuDNN and Python not checked")
    return image


def _cuda_image(ref: str, tag: str, matrix: Matrix) -> BaseImage:
    m = _CUDA_TAG.match(tag)
    if m is None:
        return BaseImage(
            ref, known=False, notes=[f"nvidia/cuda tag {tag or 'latest'!r}: not a CUDA image tag this check reads"]
        )
    version, cudnn_tag, flavour, os_name = m.group("version", "cudnn", "flavour", "os")
    cudnn_tag = cudnn_tag or ""
    rows = [r for r in matrix.cuda_images if r.tag == version and r.cudnn_tag == cudnn_tag and flavour in r.flavours]
    if os_name:
        rows = [r for r in rows if os_name in r.os]
    if not rows:
        return BaseImage(
            ref, known=False, notes=[f"nvidia/cuda:{tag} is not a tag NVIDIA's image sources built: not checked"]
        )
    published = [r for r in rows if not r.deleted]
    row = (published or rows)[-1]
    # a tag without "cudnnN" is an image without cuDNN (NVIDIA's image sources install it only in those)
    absent = frozenset() if row.cudnn is not None else frozenset({"cudnn"})
    image = BaseImage(ref, os=os_name or "", cuda=row.cuda, cudnn=row.cudnn, source=row.source, absent=absent)
    image.flavour = flavour
    image.nvidia_require_cuda, image.require_source = row.nvidia_require_cuda, row.require_source
    if not published:
        image.deleted = True
        image.replacement = _replacement(row, flavour, os_name or "", matrix)
    return image


def _replacement(row: CudaImage, flavour: str, os_name: str, matrix: Matrix) -> str:
    """A published tag with the same CUDA series, cuDNN major, flavour and OS as a deleted one (newest first)."""
    major = row.cudnn.major if row.cudnn is not None else None
    for other in reversed(matrix.cuda_images):
        if other.deleted or flavour not in other.flavours or (os_name and os_name not in other.os):
            continue
        if other.cuda.series != row.cuda.series:
            continue
        if (other.cudnn.major if other.cudnn is not None else None) != major:
            continue
        return f"nvidia/cuda:{other.name(flavour, os_name or other.os[-1])}"
    return ""


def os_python(os_name: str, matrix: Matrix) -> tuple[PythonVersion | None, str]:
    """The python3 an OS image installs, and the page that says so."""
    for row in matrix.os_pythons:
        if row.os == os_name:
            return row.python, row.source
    return None, ""


def parse_python(text: str) -> PythonVersion | None:
    try:
        return PythonVersion.parse(text)
    except VersionError:
        return None
