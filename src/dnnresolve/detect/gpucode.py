"""The GPU code the installed frameworks' own libraries carry, read from their fat binaries (`doctor`).

A framework runs on a GPU only if its libraries hold machine code (SASS) for that GPU's architecture, or PTX
the driver can compile for it; otherwise the first kernel fails with "no kernel image is available for
execution on the device". The matrix says what the official wheels carry; this reads what is installed here
(a conda build, a build from source, a nightly), without importing anything: the package's file list (pip's
RECORD, conda's conda-meta record) names its libraries, and ``fatbin`` reads their headers. NVIDIA's own
libraries that some wheels bundle (cuDNN, cuBLAS...) are left out: their code is NVIDIA's, not the
framework's.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter

from ..fatbin import NVIDIA_LIBRARY, Image, architecture_list, fatbin_containers
from ..machine import InstalledCode, InstalledPackage
from ..pkgname import canonicalize_name
from ..versions import ComputeCapability
from .context import ProbeContext
from .python_env import metadata_dir

_LIBRARY = re.compile(r"\.so(\.\d+)*$|\.(dll|pyd)$", re.IGNORECASE)


def probe(ctx: ProbeContext, packages: list[InstalledPackage], names: set[str]) -> list[InstalledCode]:
    """The code of each installed package named in ``names`` (canonical), in the order given."""
    out = []
    for p in packages:
        if canonicalize_name(p.name) not in names:
            continue
        files = _files(ctx, p)
        if files is None:
            ctx.note(
                f"{p.name} {p.version}: no file list (RECORD, conda record) names its libraries: GPU code not read"
            )
            continue
        libraries = [f for f in files if _LIBRARY.search(f) and not NVIDIA_LIBRARY.match(os.path.basename(f))]
        if not libraries:  # (Anaconda's tensorflow-gpu: a metapackage, its libraries tensorflow-base's)
            ctx.note(f"{p.name} {p.version}: its file list names no library of its own: GPU code not read")
            continue
        found: dict[str, list[Counter[Image]]] = {}
        for path in libraries:
            host = ctx.host(path)
            if not ctx.is_file(path):  # absent, or a FIFO or device in its place, which must not hang doctor
                continue
            try:
                containers = fatbin_containers(host)
            except OSError as exc:
                ctx.note(f"{path}: cannot read: {exc.strerror or exc}")
                continue
            if containers:
                found[path] = containers
        code = architecture_list(found)
        sass = [s for s in code.sm if not s.endswith("a")]
        out.append(
            InstalledCode(
                p.name,
                p.version,
                tuple(ComputeCapability.parse(s) for s in sass),
                tuple(ComputeCapability.parse(s.rstrip("a")) for s in code.sm if s.endswith("a")),
                tuple(ComputeCapability.parse(s) for s in code.ptx),
                tuple(sorted(found)),
                len(libraries),
            )
        )
    return out


def _files(ctx: ProbeContext, p: InstalledPackage) -> list[str] | None:
    """The package's files as target paths: from pip's RECORD next to its site-packages, or from the conda
    record (``location`` is then the conda-meta JSON file); None when neither can be read."""
    if p.location.endswith(".json"):
        text = ctx.read_text(p.location)
        try:
            data = json.loads(text) if text else None
        except ValueError:
            return None
        if not isinstance(data, dict) or not isinstance(data.get("files"), list):
            return None
        prefix = os.path.dirname(os.path.dirname(p.location))
        return [os.path.join(prefix, f) for f in data["files"] if isinstance(f, str)]
    name = canonicalize_name(p.name)
    for entry in ctx.listdir(p.location):
        if entry.endswith(".dist-info") and metadata_dir(entry) == (name, p.version):
            text = ctx.read_text(os.path.join(p.location, entry, "RECORD"))
            if text is None:
                return None
            rows = (line.split(",", 1)[0] for line in text.splitlines())
            return [os.path.normpath(os.path.join(p.location, f)) for f in rows if f]
    return None
