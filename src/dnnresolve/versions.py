"""Version numbers as users meet them: parsing, ordering and the integer encodings.

Every parser raises ``VersionError`` (a ``ValueError``) with the text it could not read.
The compatibility rules that compare these versions live in ``compat``.
"""

from __future__ import annotations

import re
from functools import cached_property

from .lazyre import lazy_compile
from .records import field, record

__all__ = [
    "BuildTag",
    "ComputeCapability",
    "CudaVersion",
    "CudnnVersion",
    "DriverVersion",
    "PythonVersion",
    "VersionError",
    "parse_build_tag",
    "parse_cuda_tag",
]


class VersionError(ValueError):
    """A version string or number that cannot be read."""


TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import ClassVar, TypeVar

    _D = TypeVar("_D", bound="_Dotted")


@record(frozen=True, order=True)
class _Dotted:
    """Non-negative integer parts, compared numerically, printed with dots."""

    parts: tuple[int, ...]
    kind: ClassVar[str] = "version"

    def __post_init__(self) -> None:
        if not self.parts or any(p < 0 for p in self.parts):
            raise VersionError(f"invalid {self.kind}: {self.parts!r}")

    @classmethod
    def parse(cls: type[_D], text: str) -> _D:
        s = str(text).strip()
        parts = _plain_dotted(s, 4, 1, 6, 6)
        if parts is not None:
            return cls(parts)
        if not re.fullmatch(r"\d{1,6}(\.\d{1,6}){0,3}", s):
            raise VersionError(f"not a {cls.kind}: {text!r}")
        return cls(tuple(int(p) for p in s.split(".")))

    @property
    def major(self) -> int:
        return self.parts[0]

    @property
    def minor(self) -> int:
        return self.parts[1] if len(self.parts) > 1 else 0

    @property
    def patch(self) -> int:
        return self.parts[2] if len(self.parts) > 2 else 0

    def truncate(self: _D, n: int) -> _D:
        """The first ``n`` parts, padded with zeros: ``11.8.89`` -> ``11.8`` for n=2."""
        padded = self.parts + (0,) * max(0, n - len(self.parts))
        return type(self)(padded[:n])

    def key(self, n: int = 3) -> tuple[int, ...]:
        """A padded tuple for comparing versions of different lengths (``9.0`` == ``9.0.0``)."""
        return (self.parts + (0,) * n)[:n]

    def __str__(self) -> str:
        return ".".join(str(p) for p in self.parts)


@record(frozen=True, order=True)
class CudaVersion(_Dotted):
    """A CUDA toolkit, runtime or driver-API version: ``11.8``, ``12.2.2``, or a bare major ``12``.

    The runtime and driver APIs report ``1000 * major + 10 * minor`` (cudaRuntimeGetVersion,
    cudaDriverGetVersion: "CUDA 9.2 would be represented by 9020"), so 10010 is 10.1 and 12020 is 12.2.
    Source: https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART____VERSION.html
    """

    kind: ClassVar[str] = "CUDA version"

    @classmethod
    def from_encoded(cls, number: int | str) -> CudaVersion:
        n = _as_int(number, cls.kind)
        if n < 1000 or n >= 100000 or n % 10:
            raise VersionError(f"not an encoded CUDA version: {number!r}")
        return cls((n // 1000, (n % 1000) // 10))

    @property
    def encoded(self) -> int:
        return self.major * 1000 + self.minor * 10

    @cached_property  # compared often (every cuDNN and CUDA rule); a version never changes
    def series(self) -> CudaVersion:
        return self.truncate(2)

    @classmethod
    def parse(cls, text: str) -> CudaVersion:
        """Reads ``11.8``, ``11.8.0``, ``V11.8.89`` (nvcc), ``release 11.8`` and ``12.x`` (a whole major)."""
        s = str(text).strip()
        plain = _plain_dotted(s, 4, 1, 2, 99)
        if plain is not None and all(len(p) <= w for p, w in zip(s.split(".")[1:3], (2, 4))):
            return cls(plain[:3])
        m = re.fullmatch(r"(?:release\s+|[vV])?(\d{1,2})(?:\.(\d{1,2}|x))?(?:\.(\d{1,4}))?(?:\.\d+)?", s)
        if not m:
            raise VersionError(f"not a CUDA version: {text!r}")
        major, minor, patch = m.group(1), m.group(2), m.group(3)
        if minor is None or minor == "x":
            return cls((int(major),))
        parts = (int(major), int(minor)) + ((int(patch),) if patch is not None else ())
        return cls(parts)

    @property
    def is_major_only(self) -> bool:
        return len(self.parts) == 1

    def names_build(self, build: CudaVersion) -> bool:
        """Whether this CUDA, as a build tag names it, is the ``build`` variant: its series, or, for a whole
        major (jaxlib's ``+cuda12.cudnn89``), any build of that major."""
        if self.is_major_only:
            return build.major == self.major
        return build.series == self.series


@record(frozen=True, order=True)
class CudnnVersion(_Dotted):
    """A cuDNN version.

    cuDNN up to 8 encodes CUDNN_VERSION as ``MAJOR*1000 + MINOR*100 + PATCHLEVEL`` (5005 = 5.0.5,
    5103 = 5.1.3, 7605 = 7.6.5, 8600 = 8.6.0); cuDNN 9 changed it to ``MAJOR*10000 + MINOR*100 +
    PATCHLEVEL`` (90100 = 9.1.0), as its ``cudnn_version.h`` defines and the 9.0.0 release notes say.
    Early TensorFlow also printed a "compatibility version": the series in the same encoding with the
    patch level dropped (5000 = the 5.0 series, 5100 = 5.1).
    Sources: https://docs.nvidia.com/deeplearning/cudnn/latest/release-notes.html (9.0.0, API changes),
    cudnn_version.h of cuDNN 8 and 9.
    """

    kind: ClassVar[str] = "cuDNN version"

    @classmethod
    def from_encoded(cls, number: int | str) -> CudnnVersion:
        n = _as_int(number, cls.kind)
        if n >= 90000:
            if n >= 1000000:
                raise VersionError(f"not an encoded cuDNN version: {number!r}")
            return cls((n // 10000, (n % 10000) // 100, n % 100))
        if 1000 <= n < 10000:
            return cls((n // 1000, (n % 1000) // 100, n % 100))
        raise VersionError(f"not an encoded cuDNN version: {number!r}")

    @property
    def encoded(self) -> int:
        if self.major >= 9:
            return self.major * 10000 + self.minor * 100 + self.patch
        return self.major * 1000 + self.minor * 100 + self.patch

    @cached_property  # compared often (every cuDNN and CUDA rule); a version never changes
    def series(self) -> CudnnVersion:
        return self.truncate(2)

    @property
    def compatibility_version(self) -> int:
        """The encoded series, as early TensorFlow printed it: 5.0.5 -> 5000."""
        return self.series.truncate(3).encoded

    @classmethod
    def parse(cls, text: str) -> CudnnVersion:
        """Reads ``5.1.3``, ``8.9.2.26`` (pip wheels), ``(8, 9, 2)`` (PyTorch) and ``v5.1``."""
        s = str(text).strip()
        plain = _plain_dotted(s, 4, 1, 6, 6) if "." in s else None
        if plain is not None and plain[0] != 0:
            return cls(plain[:3])
        m = re.fullmatch(r"\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)", s)
        if m:
            return cls(tuple(int(g) for g in m.groups()))
        s = s.lstrip("vV")
        m = re.fullmatch(r"(\d{1,2})\.x", s)
        if m:  # a whole major, as ONNX Runtime's table states it ("cuDNN 9.x")
            return cls((int(m.group(1)),))
        if re.fullmatch(r"\d{4,6}", s):
            return cls.from_encoded(s)
        v = _Dotted.parse(s)
        if v.major == 0:
            raise VersionError(f"not a cuDNN version: {text!r}")
        return cls(v.parts[:3])


@record(frozen=True, order=True)
class DriverVersion(_Dotted):
    """An NVIDIA driver: ``375.26``, ``535.104.05``. Parts compare as numbers; ``text`` keeps "05".

    A branch alone (``535``, ``535.x``), as people name their driver, is one part: as a machine's driver it
    stands for some 535.x of unknown patch level (``is_branch``); as a table's minimum (CUDA 13.x on Windows:
    ``580``) it is the branch's first release, 580.0.
    """

    text: str = field(default="", compare=False)
    kind: ClassVar[str] = "driver version"

    @classmethod
    def parse(cls, text: str) -> DriverVersion:
        s = str(text).strip()
        parts = _plain_dotted(s, 4, 2, 4, 4)
        if parts is not None:
            return cls(parts, s)
        branch = re.fullmatch(r"(\d{2,4})\.[xX*]", s)
        if branch:
            return cls((int(branch.group(1)),), s)
        if not re.fullmatch(r"\d{2,4}(\.\d{1,4}){0,3}", s):
            raise VersionError(f"not an NVIDIA driver version: {text!r}")
        return cls(tuple(int(p) for p in s.split(".")), s)

    @property
    def is_branch(self) -> bool:
        """Only the branch is known (``535``): nvidia-smi always shows at least major.minor."""
        return len(self.parts) == 1

    @property
    def shown(self) -> str:
        """As a machine's driver is told back: ``535.x`` for a branch, else the version as given."""
        return f"{self.major}.x" if self.is_branch else str(self)

    def __str__(self) -> str:
        return self.text or super().__str__()


@record(frozen=True, order=True)
class ComputeCapability(_Dotted):
    """A GPU compute capability: ``3.5``, from ``"3.5"``, ``"sm_35"``, ``"compute_35"``, ``"sm_90a"``, ``"sm_100"``."""

    kind: ClassVar[str] = "compute capability"

    @classmethod
    def parse(cls, text: str) -> ComputeCapability:
        s = str(text).strip().lower()
        plain = _plain_dotted(s, 2, 1, 2, 1)
        if plain is not None and len(plain) == 2:
            return cls(plain)
        m = re.fullmatch(r"(?:sm|compute|lto)_?(\d{2,3})[af]?", s)
        if m:
            digits = m.group(1)
            return cls((int(digits[:-1]), int(digits[-1])))
        m = re.fullmatch(r"(\d{1,2})\.(\d)[af]?", s)
        if m:
            return cls((int(m.group(1)), int(m.group(2))))
        raise VersionError(f"not a compute capability: {text!r}")

    @property
    def sm(self) -> str:
        return f"sm_{self.major}{self.minor}"

    @property
    def compute(self) -> str:
        """The name of its PTX (virtual) architecture: ``compute_80``."""
        return f"compute_{self.major}{self.minor}"


@record(frozen=True, order=True)
class PythonVersion(_Dotted):
    """A Python series or release: ``3.11``, ``3.11.7``, ``cp311``, ``py36``."""

    kind: ClassVar[str] = "Python version"

    @classmethod
    def parse(cls, text: str) -> PythonVersion:
        s = str(text).strip().lower()
        plain = _plain_dotted(s, 3, 1, 1, 3)
        if plain is not None and len(plain) >= 2 and len(s.split(".")[1]) <= 2:
            return cls(plain)
        m = re.fullmatch(r"(?:cp|py)(\d)(\d{1,2})", s)
        if m:
            return cls((int(m.group(1)), int(m.group(2))))
        m = re.fullmatch(r"(?:python\s*)?(\d)\.(\d{1,2})(?:\.(\d{1,3}))?(?:[a-z+].*)?", s)
        if not m:
            raise VersionError(f"not a Python version: {text!r}")
        parts = [int(m.group(1)), int(m.group(2))]
        if m.group(3) is not None:
            parts.append(int(m.group(3)))
        return cls(tuple(parts))

    @cached_property  # compared often (every cuDNN and CUDA rule); a version never changes
    def series(self) -> PythonVersion:
        return self.truncate(2)


def parse_cuda_tag(tag: str) -> CudaVersion:
    """The CUDA that a "cuXY" name stands for.

    ``cu75``/``cu80``/``cu90``/``cu92`` -> 7.5/8.0/9.0/9.2; ``cu100``/``cu101``/``cu118``/``cu121`` ->
    10.0/10.1/11.8/12.1; ``cu11``/``cu12`` (nvidia-*-cu12 wheels, jax-cuda12-plugin) and
    ``cuda11x``/``cuda12x`` (CuPy) -> the whole major; ``mxnet-cu90mkl`` style suffixes are ignored.
    """
    s = tag.strip().lower()
    m = re.search(r"cu(?:da)?(\d{2,4})(x?)(?:mkl)?$", s) or re.fullmatch(r"(?:cu(?:da)?)?(\d{2,4})(x?)", s)
    if not m:
        raise VersionError(f"not a CUDA tag: {tag!r}")
    digits, wildcard = m.group(1), m.group(2)
    if wildcard or (len(digits) == 2 and digits[0] == "1"):
        return CudaVersion((int(digits),))
    if len(digits) == 2:
        return CudaVersion((int(digits[0]), int(digits[1])))
    if len(digits) == 3:
        return CudaVersion((int(digits[:2]), int(digits[2])))
    raise VersionError(f"not a CUDA tag: {tag!r}")


@record(frozen=True)
class BuildTag:
    """What a local version label like ``+cu118``, ``+cpu`` or ``+rocm5.6`` says about a build."""

    kind: str  # "cuda", "cpu", "rocm", or "" when the version has no such label
    cuda: CudaVersion | None = None
    label: str = ""

    @property
    def is_cuda(self) -> bool:
        return self.kind == "cuda"


def parse_build_tag(version: str) -> BuildTag:
    """``2.1.0+cu118`` -> cuda 11.8; ``1.7.1+cpu`` -> cpu; ``2.1.0`` -> no label."""
    _, sep, local = str(version).partition("+")
    if not sep:
        return BuildTag("")
    label = local.lower()
    if label == "cpu" or label.startswith("cpu."):
        return BuildTag("cpu", None, label)
    if label.startswith("rocm"):
        return BuildTag("rocm", None, label)
    if label.startswith("cu"):
        return BuildTag("cuda", parse_cuda_tag(label.split(".")[0]), label)
    return BuildTag("other", None, label)


# a conda build string or a pattern of one: ``py3.9_cuda11.3_cudnn8.3.2_0``, ``cuda112py39h...``, ``cpu_py39h...``
_CONDA_DOTTED = lazy_compile(r"(?:^|[_*])cuda(\d+\.\d+)")
_CONDA_PACKED = lazy_compile(r"(?:^|[_*])cuda(\d{2,3})(?=py|_|h|\*|$)")
_CONDA_CPU = lazy_compile(r"(?:^|[_*])cpu(?:_|$|py|\*)")


def parse_conda_build(build: str) -> BuildTag:
    """What a conda build string says of its build: ``py3.9_cuda11.3_cudnn8.3.2_0`` -> cuda 11.3, ``cuda112py39h...``
    -> cuda 11.2, ``py3.9_cpu_0`` -> cpu; kind "" when it names neither."""
    b = build.strip().lower()
    m = _CONDA_DOTTED.search(b)
    if m is not None:
        try:
            return BuildTag("cuda", CudaVersion.parse(m.group(1)), b)
        except VersionError:
            return BuildTag("", None, b)
    m = _CONDA_PACKED.search(b)
    if m is not None:
        digits = m.group(1)
        return BuildTag("cuda", CudaVersion((int(digits[:-1]), int(digits[-1]))), b)
    if _CONDA_CPU.search(b):
        return BuildTag("cpu", None, b)
    return BuildTag("", None, b)


def _as_int(number: int | str, kind: str) -> int:
    if isinstance(number, bool):
        raise VersionError(f"not an encoded {kind}: {number!r}")
    if isinstance(number, int):
        return number
    s = str(number).strip()
    if s.isascii() and s.isdigit() and len(s) <= 7:
        return int(s)
    if not re.fullmatch(r"\d{1,7}", s):
        raise VersionError(f"not an encoded {kind}: {number!r}")
    return int(s)


def _plain_dotted(s: str, most: int, first_min: int, first_max: int, rest_max: int) -> tuple[int, ...] | None:
    """``s`` as numbers when it is only ASCII digits and dots: at most ``most`` parts, the first of
    ``first_min``..``first_max`` digits, the others of 1..``rest_max``. None for anything else (the
    callers' regular expressions then decide); a start-up parses hundreds of these."""
    parts = s.split(".")
    if len(parts) > most or not s.isascii():
        return None
    for i, part in enumerate(parts):
        low, high = (first_min, first_max) if i == 0 else (1, rest_max)
        if not (low <= len(part) <= high and part.isdigit()):
            return None
    return tuple(int(part) for part in parts)
