"""`check` of a Dockerfile's image on the host's driver: would the NVIDIA container toolkit start it at all?

An ``nvidia/cuda`` image whose ``NVIDIA_REQUIRE_CUDA`` the host's driver fails (``image_require``) never starts:
an error naming the condition, the CUDA the driver supports, the newest published tag of the same flavour and OS
that the driver starts, and the driver that starts this one. A brand clause that admits this GPU on this driver is
a note; one that decides on a brand not known here, a warning. ``ENV NVIDIA_DISABLE_REQUIRE=true`` in the Dockerfile
turns the toolkit's check off: a warning then. Where the driver is unknown nothing is said.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .findings import Finding, Severity
from .image_require import (
    DISABLE_SOURCE,
    DSL_SOURCE,
    Host,
    Verdict,
    brand_values,
    conditions,
    disabled,
    evaluate,
    host_of,
)
from .versions import CudaVersion, VersionError

if TYPE_CHECKING:
    from .machine import Runtime
    from .matrix import Matrix
    from .sources.container import Container

REFUSAL = "please update your driver to a newer version, or use an earlier cuda container"
# The check runs in nvidia-container-cli, which `docker run --gpus` and the nvidia runtime's legacy mode call; the
# runtime's CDI modes (jit-cdi, its default from nvidia-container-toolkit v1.18.0) do not evaluate NVIDIA_REQUIRE_*
# (internal/info/auto.go; only internal/modifier/csv.go and the hook read them).
CDI_NOTE = "the nvidia runtime's CDI modes, its default from container toolkit 1.18.0, skip this check"


def image_findings(container: Container, target: Runtime | None, matrix: Matrix) -> list[Finding]:
    host = host_of(target, matrix)
    if host is None or not container.image or "image" not in container.where:
        return []
    from .base_image import resolve

    image = resolve(container.image, matrix)
    checked = conditions(image.nvidia_require_cuda, container.env)
    if not checked:
        return []
    file, line = _at(container.where["image"])
    if "NVIDIA_REQUIRE_CUDA" in container.env:
        file, line = _at(container.where["ENV NVIDIA_REQUIRE_CUDA"])
    verdict = evaluate(checked, host)
    if verdict.starts is True and not verdict.by:
        return []
    source = DSL_SOURCE if "NVIDIA_REQUIRE_CUDA" in container.env else image.require_source or DSL_SOURCE
    what = "its NVIDIA_REQUIRE_CUDA"
    if "NVIDIA_REQUIRE_CUDA" in container.env:
        what = f"the NVIDIA_REQUIRE_CUDA of line {line}"
    supports = f"driver {host.driver.shown} supports CUDA {_cuda(host)}"
    if verdict.starts is True:
        message = (
            f"{container.image}: {what} asks {verdict.condition} and {supports}, but its clause {verdict.by} "
            f"admits {'this GPU on this driver' if 'brand=' in verdict.by else 'this driver'}: the NVIDIA container "
            "toolkit starts it"
        )
        return [Finding(file, line, "", Severity.INFO, "image-driver", message, "", source)]
    fix = _remedies(image.flavour, image.os, image.cudnn is not None, verdict, host, matrix)
    if disabled(container.env):
        env_file, env_line = _at(container.where["ENV NVIDIA_DISABLE_REQUIRE"])
        message = (
            f"{container.image}: NVIDIA_DISABLE_REQUIRE (line {env_line}) turns the NVIDIA container toolkit's check "
            f"off; with it on, the toolkit would refuse this image here ({verdict.condition}; {supports}): "
            "CUDA code in it runs only as far as this driver runs that CUDA"
        )
        return [Finding(env_file, env_line, "", Severity.WARNING, "image-driver", message, fix, DISABLE_SOURCE)]
    refusal = f'"requirement error: unsatisfied condition: {verdict.condition}, {REFUSAL}"'
    if verdict.starts is None:
        message = (
            f"{container.image} may not start on this host: {what} asks {verdict.condition} and {supports}; "
            + _depends(verdict, host)
            + f"; else nvidia-container-cli (docker run --gpus) refuses it: {refusal} ({CDI_NOTE})"
        )
        return [Finding(file, line, "", Severity.WARNING, "image-driver", message, fix, source)]
    message = (
        f"{container.image} will not start on this host: {what} asks {verdict.condition} and {supports}"
        f"{_no_brand(checked, host)}; nvidia-container-cli (docker run --gpus) refuses it: {refusal} ({CDI_NOTE})"
    )
    return [Finding(file, line, "", Severity.ERROR, "image-driver", message, fix, source)]


def _no_brand(checked: list[str], host: Host) -> str:
    """Why no brand clause helps: none is for this driver branch, or none names this GPU's brand."""
    terms = [t for c in checked for t in c.split() if "brand=" in t]
    if not terms:
        return ""
    if any(brand_values(t, host) for t in terms):
        return f", and its brand clauses for a {host.driver.major} driver do not name this GPU's brand"
    return f", and none of its brand clauses is for a {host.driver.major} driver"


def _depends(verdict: Verdict, host: Host) -> str:
    if verdict.brands:
        return (
            f"it starts only by a brand clause for this driver, if the GPU's brand (nvidia-smi -q: Product Brand) is "
            f"one of {', '.join(verdict.brands)}"
        )
    return f"whether it starts depends on driver {host.driver.shown}'s patch level (give the full version)"


def _remedies(flavour: str, os_name: str, cudnn: bool, verdict: Verdict, host: Host, matrix: Matrix) -> str:
    """An image the driver starts (the newest published tag of this flavour and OS), or the driver this one needs."""
    from .image_require import newest_starting

    steps = []
    if flavour and os_name:
        found = newest_starting(flavour, os_name, cudnn, host, matrix)
        if found is not None:
            row, name = found
            steps.append(
                f"FROM nvidia/cuda:{name} (CUDA {row.cuda}: the newest published {flavour} tag for {os_name}"
                f"{' with cuDNN' if cudnn else ''} that this driver starts)"
            )
    needed = _wanted_cuda(verdict.condition)
    if needed is not None:
        driver = matrix.driver_table("linux").min_driver_for(needed)
        if driver is not None:
            steps.append(f"upgrade the NVIDIA driver to >= {driver} (CUDA {needed}; needs root)")
    if not steps:
        return ""
    return "use an image this driver starts, or a driver that starts this one\n" + "\n".join(steps)


def _wanted_cuda(condition: str) -> CudaVersion | None:
    if not condition.startswith("cuda>="):
        return None
    try:
        return CudaVersion.parse(condition[len("cuda>=") :])
    except VersionError:
        return None


def _cuda(host: Host) -> str:
    if host.cuda is None:
        return "an unknown CUDA"
    if host.cuda_top is not None and host.cuda_top != host.cuda:
        return f"{host.cuda} to {host.cuda_top}"
    return str(host.cuda)


def _at(where: str) -> tuple[str, int]:
    """("Dockerfile", 3) of "Dockerfile:3 (FROM ...)"."""
    m = re.match(r"^(.*):(\d+)(?: \(|$)", where)
    return (m.group(1), int(m.group(2))) if m else (where, 0)
