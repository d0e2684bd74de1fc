"""Whether the NVIDIA container toolkit starts an image on the host's driver: its ``NVIDIA_REQUIRE_*`` conditions.

NVIDIA's CUDA images set ``NVIDIA_REQUIRE_CUDA`` (``cuda>=12.4 brand=tesla,driver>=470,driver<471 ...``, kept in
the matrix's ``[[cuda_image]]`` rows). Before a container starts, nvidia-container-cli checks it on each visible GPU
(libnvidia-container ``src/cli/dsl.c``, ``configure.c``): space-separated terms are ORed, comma-separated factors
ANDed; ``cuda`` is the CUDA version the driver supports (``nvmlSystemGetCudaDriverVersion``, major.minor: a driver
that runs newer CUDA only through minor-version compatibility does not satisfy it), ``driver`` the driver's version,
``brand`` the GPU's NVML brand (any case). A condition that fails stops the container: "requirement error:
unsatisfied condition: cuda>=12.4, please update your driver to a newer version, or use an earlier cuda container".
The ``brand=…,driver>=N,driver<N+1`` terms admit the driver branches NVIDIA lists for that brand. Every
``NVIDIA_REQUIRE_*`` variable is ANDed (``NVIDIA_REQUIRE_JETPACK`` excepted), and ``NVIDIA_DISABLE_REQUIRE`` set
true (Go's ``strconv.ParseBool``) skips them all (nvidia-container-toolkit ``internal/config/image/cuda_image.go``).
The check is nvidia-container-cli's, which ``docker run --gpus`` (the toolkit's hook) and the nvidia runtime's legacy
mode call; the runtime's CDI modes (jit-cdi, its default from toolkit v1.18.0) skip it.

Pure: the host is what ``check``/``plan`` were told (``--driver``, ``--gpu``, a ``--target`` profile, detection).
A fact that is not known (the GPU's brand, a driver branch's patch level) makes a verdict "depends" (None), never a
guess.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .records import record
from .versions import CudaVersion, DriverVersion

if TYPE_CHECKING:
    from .images import CudaImage
    from .machine import Runtime
    from .matrix import Matrix

DSL_SOURCE = "https://github.com/NVIDIA/libnvidia-container/blob/main/src/cli/dsl.c"
DISABLE_SOURCE = "https://github.com/NVIDIA/nvidia-container-toolkit/blob/main/internal/config/image/cuda_image.go"
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})  # strconv.ParseBool's true values
# The NVML brand a GPU's name shows, where nvidia-smi -q prints both: "Tesla V100-SXM2-16GB" / "Product Brand:
# Tesla"; "NVIDIA GeForce RTX 4070 Laptop GPU" / "GeForce" (github.com/Jesse3692/MultiLanguageLearning,
# cuda-c/docs/nvidia-smi.md). Other names say nothing sure ("NVIDIA RTX A6000" is brand "NVIDIA RTX",
# github.com/ObrienlabsDev/machine-learning gpus.md; an A100's is not in its name): unknown then.
_NAME_BRANDS = (("tesla", frozenset({"tesla"})), ("geforce", frozenset({"geforce", "geforcertx"})))
_FACTOR = re.compile(r"^(?P<prop>[a-z]+)(?P<op>!=|<=|>=|=|<|>)(?P<value>[\w.]+)$")


@record(frozen=True)
class Host:
    """What the check compares with: the driver, the CUDA it supports, each GPU's possible brands (None: unknown)."""

    driver: DriverVersion
    cuda: CudaVersion | None  # for a branch (535): what every driver of it supports
    cuda_top: CudaVersion | None  # for a branch: what its newest driver supports; else = cuda
    brands: tuple[frozenset[str] | None, ...] = (None,)  # one entry per GPU


@record(frozen=True)
class Verdict:
    """``starts``: True, False, or None where an unknown fact decides; ``by``: the term that admits it when it is not
    the first (a brand clause); ``brands``: the brands a clause for this driver admits, when the brand decides."""

    starts: bool | None
    condition: str
    by: str = ""
    brands: tuple[str, ...] = ()


def host_of(target: Runtime | None, matrix: Matrix) -> Host | None:
    """The host the container meets, or None where its driver is unknown (then nothing is said)."""
    if target is None or target.driver is None:
        return None
    table = matrix.driver_table("linux")
    driver = target.driver
    cuda = target.driver_cuda if target.driver_cuda is not None else table.newest_cuda_for(driver)
    top = cuda
    if driver.is_branch:
        newer = [t.series for t, need in table.toolkits if need.major == driver.major]
        top = max([*newer, *([cuda] if cuda is not None else [])], default=None)
    brands = tuple(_brands(g.name) for g in target.gpus) or (None,)
    return Host(driver, cuda, top, brands)


def _brands(name: str) -> frozenset[str] | None:
    words = name.lower().split()
    for word, brands in _NAME_BRANDS:
        if word in words:
            return brands
    return None


def evaluate(conditions: Sequence[str], host: Host) -> Verdict:
    """The verdict of all conditions (ANDed) on every GPU; the first condition's first term names it. A GPU whose
    name leaves two brands open (GeForce, GeForce RTX) gets a verdict only where both brands get the same."""
    condition = conditions[0].split()[0] if conditions and conditions[0].split() else ""
    gpus = []
    for brands in host.brands:
        options = [None] if brands is None else [frozenset({b}) for b in sorted(brands)]
        verdicts = [_all([_one(c, host, option) for c in conditions if c.split()], condition) for option in options]
        if len({v.starts for v in verdicts}) > 1:
            admitted = sorted(
                {b for v in verdicts for b in v.brands}
                | {next(iter(o)) for o, v in zip(options, verdicts) if o and v.starts}
            )
            verdicts = [Verdict(None, condition, "", tuple(admitted))]
        gpus.append(verdicts[0])
    return _all(gpus, condition)


def _all(verdicts: Sequence[Verdict], condition: str) -> Verdict:
    for state in (False, None):
        for v in verdicts:
            if v.starts is state:
                return v
    return Verdict(True, condition, next((v.by for v in verdicts if v.by), ""))


def _one(condition: str, host: Host, brands: frozenset[str] | None) -> Verdict:
    terms = condition.split()
    first = terms[0]
    results = [_and(term, host, brands) for term in terms]
    if results[0] is True:
        return Verdict(True, first)
    passing = next((t for t, r in zip(terms, results) if r is True), "")
    if passing:
        return Verdict(True, first, passing)
    if any(r is None for r in results):
        # what a brand would decide: the brands of terms whose other factors hold
        admitted = sorted({b for t, r in zip(terms, results) if r is None for b in brand_values(t, host)})
        return Verdict(None, first, "", tuple(admitted))
    return Verdict(False, first)


def brand_values(term: str, host: Host) -> list[str]:
    """The brands a term names, where its other factors (the driver branch) hold on this host."""
    factors = term.split(",")
    rest = [f for f in factors if not f.startswith("brand")]
    if all(_factor(f, host, None) is True for f in rest):
        return [f.split("=", 1)[1].lower() for f in factors if f.startswith("brand=")]
    return []


def _and(term: str, host: Host, brands: frozenset[str] | None) -> bool | None:
    out: bool | None = True
    for factor in term.split(","):
        value = _factor(factor, host, brands)
        if value is False:
            return False
        if value is None:
            out = None
    return out


def _factor(factor: str, host: Host, brands: frozenset[str] | None) -> bool | None:
    m = _FACTOR.match(factor)
    if m is None:
        return False  # nvidia-container-cli: "invalid expression", the container does not start
    prop, op, value = m.group("prop", "op", "value")
    if prop == "cuda":
        if host.cuda is None:
            return None
        low = _compare(host.cuda.parts, op, value)
        high = _compare(host.cuda_top.parts, op, value) if host.cuda_top is not None else None
        return low if low == high else None
    if prop == "driver":
        shown = host.driver.parts
        if host.driver.is_branch:  # some 535.x: decided only where the major decides
            low, high = _compare((*shown, 0, 0), op, value), _compare((*shown, 99999, 99999), op, value)
            return low if low == high else None
        return _compare(shown, op, value)
    if prop == "brand":
        if brands is None or op not in ("=", "!="):
            return None
        return (value.lower() in brands) == (op == "=")  # (one brand: evaluate() tries each the name leaves open)
    return None  # arch: the GPU's compute capability, which no CUDA image's condition names


def _compare(have: Sequence[int], op: str, value: str) -> bool:
    """dsl_compare_version: numeric parts left to right, missing parts as zeros."""
    want = [int(p) for p in value.split(".") if p.isdigit()]
    n = max(len(have), len(want))
    a = tuple(have) + (0,) * (n - len(have))
    b = tuple(want) + (0,) * (n - len(want))
    return {"=": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def disabled(env: dict[str, str]) -> bool:
    return env.get("NVIDIA_DISABLE_REQUIRE", "") in _TRUE


def conditions(image_condition: str, env: dict[str, str]) -> list[str]:
    """What the toolkit checks: the image's NVIDIA_REQUIRE_CUDA unless the Dockerfile sets its own, and every other
    NVIDIA_REQUIRE_* the Dockerfile sets."""
    own = env.get("NVIDIA_REQUIRE_CUDA")
    out = [own] if own is not None else [image_condition]
    for name in sorted(env):
        if name.startswith("NVIDIA_REQUIRE_") and name != "NVIDIA_REQUIRE_CUDA" and "JETPACK" not in name:
            out.append(env[name])
    return [c for c in out if c.split()]


def starts(row: CudaImage, host: Host | None) -> bool | None:
    """Whether an image of the row starts on the host (True where the host's driver is unknown)."""
    if host is None or not row.nvidia_require_cuda:
        return True
    return evaluate([row.nvidia_require_cuda], host).starts


def newest_starting(
    flavour: str, os_name: str, cudnn: bool, host: Host, matrix: Matrix
) -> tuple[CudaImage, str] | None:
    """The newest published tag of this flavour, OS and cuDNN-ness that the host's driver starts, and its name."""
    best: tuple[tuple[tuple[int, ...], tuple[int, ...]], CudaImage] | None = None
    for row in matrix.cuda_images:
        if row.deleted or flavour not in row.flavours or os_name not in row.os or bool(row.cudnn_tag) != cudnn:
            continue
        if starts(row, host) is not True:
            continue
        key = (row.cuda.parts, row.cudnn.parts if row.cudnn is not None else ())
        if best is None or key > best[0]:
            best = (key, row)
    return (best[1], best[1].name(flavour, os_name)) if best is not None else None


def admitted_by(row: CudaImage, host: Host | None) -> list[str]:
    """Why the host's driver starts an image whose CUDA it does not support (a clause of its condition), if so."""
    if host is None or not row.nvidia_require_cuda:
        return []
    verdict = evaluate([row.nvidia_require_cuda], host)
    if verdict.starts is not True or not verdict.by:
        return []
    return [
        f"the host's driver {host.driver.shown} supports CUDA {host.cuda}, below this image's {verdict.condition}; "
        f"the container toolkit starts it by its NVIDIA_REQUIRE_CUDA clause {verdict.by}"
    ]
