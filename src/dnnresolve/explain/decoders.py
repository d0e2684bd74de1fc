"""Decoders: turn the numbers a message prints into versions a person can act on.

Each decoder reads the named groups of a catalog pattern's match and returns a ``Decoded`` (what was found,
what was expected, the decoded facts as labelled rows, and facts for fix templates), or ``None`` when the
match is not a problem dnnresolve knows (a library name that is no GPU library, say). The catalog names the
decoder per entry; ``DECODERS`` is that name -> function table.
"""

from __future__ import annotations

import re

from ..compat import CudnnRule, cudnn_compatible, cudnn_rule_text
from ..versions import ComputeCapability, CudaVersion, CudnnVersion, VersionError, parse_cuda_tag
from .decoded import Decoded, Decoder, fill, plain
from .library_decoders import (
    dll_loader,
    library,
    library_versions,
    status_code,
    status_number,
    status_text,
    undefined_symbol,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # the catalog imports this module (its rows name these functions), not the other way round
    from .catalog import Catalog, CatalogEntry

__all__ = ["DECODERS", "Decoded", "decode", "fill"]


def decode(
    match: re.Match[str], entry: CatalogEntry, catalog: Catalog, framework: str, cut: bool = False
) -> Decoded | None:
    """Run the entry's decoder; fill the rule from its template. ``framework`` is the resolved framework id; ``cut``
    says the match is of the sentence cut short, so groups past the cut are None."""
    try:
        decoded = DECODERS[entry.decoder](match, entry, catalog, framework)
    except VersionError:
        if not cut or any(match.groupdict().values()):
            return None  # numbers that are no version: not a message we know after all
        return Decoded() if entry.framework else None  # cut before any number (below)
    except (TypeError, AttributeError, KeyError):
        if not cut:
            raise
        # cut before what the decoder reads: a framework's own sentence still names the problem; a generic one
        # (a loader's, a status's) says nothing without it
        return Decoded() if entry.framework else None
    if decoded is None:
        return None
    name = catalog.framework_name(framework)
    decoded.facts.setdefault("framework_name", name or "framework")
    decoded.facts.setdefault("framework_package", catalog.packages.get(framework, ""))
    if entry.rule:
        decoded.rule = fill(entry.rule, decoded.facts) or decoded.rule
    return decoded


# ---------------------------------------------------------------- cuDNN


def _cudnn_origin(text: str, version: CudnnVersion) -> str:
    """How a printed cuDNN version reads: '5005 = 5*1000 + 0*100 + 5'."""
    s = text.strip()
    if re.fullmatch(r"\d{4,6}", s):
        scale = 10000 if version.major >= 9 else 1000
        return f"{s} = {version.major}*{scale} + {version.minor}*100 + {version.patch}"
    if s.startswith("("):
        return f"{s} is (major, minor, patch)"
    return ""


def _compat_origin(text: str | None) -> str:
    if not text:
        return ""
    series = CudnnVersion.from_encoded(text).series
    return f"compatibility version {text} = the {series} series"


def _want(built: CudnnVersion, rule: CudnnRule) -> str:
    s = built.series
    if rule is CudnnRule.EXACT_SERIES or (rule is CudnnRule.TORCH and s.major < 7):
        return f"{s}.x"
    if rule is CudnnRule.AT_LEAST:
        return f"{s} or newer"
    return f"{s} or a newer {s.major}.x"


def cudnn_pair(m: re.Match[str], entry: CatalogEntry, catalog: Catalog, framework: str) -> Decoded:
    # a version a title typed without its punctuation ("8 5 0") reads as its dotted form
    g = {k: re.sub(r"^(\d+) (\d+) (\d+)$", r"\1.\2.\3", v) if v else v for k, v in m.groupdict().items()}
    if not g.get("built") and not g.get("loaded"):  # the check's words alone: no version to read
        return Decoded()
    if not g.get("built"):  # cut before the build's version (TensorFlow prints the loaded one first)
        loaded = CudnnVersion.parse(g["loaded"])
        row = ("loaded at run time", _cudnn_row(loaded, g["loaded"], g.get("loaded_compat")))
        return Decoded(found={"cudnn": str(loaded)}, rows=[row], facts={"found": str(loaded)})
    built = CudnnVersion.parse(g["built"])
    rule = entry.cudnn_rule or CudnnRule.TORCH
    if not g.get("loaded"):  # a title cut short after the build's version: what it needs still reads
        name = catalog.framework_name(framework) or "build"
        return Decoded(
            expected={"cudnn": str(built)},
            rows=[("built against", _cudnn_row(built, g["built"], g.get("built_compat")))],
            facts={"built": str(built), "want_series": str(built.series), "want": _want(built, rule)},
            rule=f"this {name} needs {cudnn_rule_text(built, rule)}",
        )
    loaded = CudnnVersion.parse(g["loaded"])
    rows = [
        ("loaded at run time", _cudnn_row(loaded, g["loaded"], g.get("loaded_compat"))),
        ("built against", _cudnn_row(built, g["built"], g.get("built_compat"))),
    ]
    name = catalog.framework_name(framework) or "build"
    if cudnn_compatible(built, loaded, rule):
        rows.append(("note", "by this rule the two should fit; another cuDNN copy may be the one really loaded"))
    facts = {
        "found": str(loaded),
        "built": str(built),
        "found_series": str(loaded.series),
        "want_series": str(built.series),
        "want": _want(built, rule),
    }
    return Decoded(
        found={"cudnn": str(loaded)},
        expected={"cudnn": str(built)},
        rows=rows,
        facts=facts,
        rule=f"this {name} needs {cudnn_rule_text(built, rule)}",
    )


def cudnn_warning(m: re.Match[str], entry: CatalogEntry, catalog: Catalog, framework: str) -> Decoded:
    """A framework that only warns on any difference (MXNet's "cuDNN lib mismatch"): the pair, and whether the
    loaded library fits the build by the entry's rule (then the warning is harmless) or not."""
    decoded = cudnn_pair(m, entry, catalog, framework)
    loaded, built = CudnnVersion.parse(decoded.facts["found"]), CudnnVersion.parse(decoded.facts["built"])
    rows = [row for row in decoded.rows if row[0] != "note"]
    rule = entry.cudnn_rule or CudnnRule.SAME_MAJOR_NEWER_MINOR
    if cudnn_compatible(built, loaded, rule):
        fits = f"cuDNN {loaded} fits a build for {built} (same major, equal or newer minor): harmless"
        rows.append(("verdict", fits))
        # nothing to load instead: the steps that fetch another cuDNN ({want}) are left out, quieting it is not
        decoded.facts = {k: v for k, v in decoded.facts.items() if k not in ("want", "want_series")}
        decoded.facts["harmless"] = str(loaded)
    else:
        rows.append(("verdict", f"cuDNN {loaded} does not fit a build for {built}: {cudnn_rule_text(built, rule)}"))
    decoded.rows = rows
    return decoded


def cudnn_minimum(m: re.Match[str], entry: CatalogEntry, catalog: Catalog, framework: str) -> Decoded:
    g = m.groupdict()
    loaded = CudnnVersion.parse(g["loaded"])
    built = CudnnVersion.parse(g["built"])
    minimum = CudnnVersion.parse(g["minimum"])
    rows = [
        ("installed", _cudnn_row(loaded, g["loaded"], None)),
        ("minimum supported", _cudnn_row(minimum, g["minimum"], None)),
        ("built against", _cudnn_row(built, g["built"], None)),
    ]
    facts = {
        "found": str(loaded),
        "built": str(built),
        "found_series": str(loaded.series),
        "want_series": str(minimum.series),
        "want": f"{minimum.series} or newer",
    }
    return Decoded({"cudnn": str(loaded)}, {"cudnn": str(minimum)}, rows, facts)


def _cudnn_row(version: CudnnVersion, text: str, compat: str | None) -> str:
    how = "; ".join(x for x in (_cudnn_origin(text, version), _compat_origin(compat)) if x)
    if not compat:
        how = "; ".join(x for x in (how, f"the {version.series} series") if x)
    return f"cuDNN {version}  ({how})"


# ---------------------------------------------------------------- CUDA and the driver


def _cuda(text: str) -> tuple[CudaVersion, str]:
    s = text.strip()
    if re.fullmatch(r"\d{4,6}", s):
        v = CudaVersion.from_encoded(s)
        return v, f"{s} = {v.major}*1000 + {v.minor}*10"
    return CudaVersion.parse(s), ""


def _cuda_row(version: CudaVersion, how: str) -> str:
    return f"CUDA {version}" + (f"  ({how})" if how else "")


def cuda_pair(m: re.Match[str], entry: CatalogEntry, catalog: Catalog, framework: str) -> Decoded:
    if not m.groupdict().get("built"):  # cut before the build's version
        found, found_how = _cuda(m.group("found"))
        return Decoded({"cuda": str(found)}, {}, [("found", _cuda_row(found, found_how))], {"found_cuda": str(found)})
    built, built_how = _cuda(m.group("built"))
    if not m.groupdict().get("found"):  # a title cut short after the build's version
        facts = {"want_cuda": str(built), "want_major": str(built.major), "want_tag": f"{built.major}{built.minor}"}
        return Decoded({}, {"cuda": str(built)}, [("built for", _cuda_row(built, built_how))], facts)
    found, found_how = _cuda(m.group("found"))
    rows = [("found", _cuda_row(found, found_how)), ("built for", _cuda_row(built, built_how))]
    facts = {
        "found_cuda": str(found),
        "want_cuda": str(built),
        "want_major": str(built.major),
        "want_tag": f"{built.major}{built.minor}",
        "found_tag": f"{found.major}{found.minor}",
    }
    return Decoded({"cuda": str(found)}, {"cuda": str(built)}, rows, facts)


def driver_cuda_encoded(m: re.Match[str], entry: CatalogEntry, catalog: Catalog, framework: str) -> Decoded:
    if not m.group("found"):  # cut before the version
        return Decoded()
    found, how = _cuda(m.group("found"))
    row = f"CUDA {found} at most  (found version {how}, the driver API's cudaDriverGetVersion)"
    return Decoded({"cuda": str(found)}, {}, [("driver supports", row)], {"found_cuda": str(found)})


# ---------------------------------------------------------------- GPU architecture


def _sm(text: str) -> str:
    """An architecture as a list names it: ``sm_86``, ``compute_80``, ``8.6``, or bare digits (Paddle's ``86``,
    ``120``), which mean ``sm_86``."""
    return f"sm_{text}" if text.isdigit() else text


def compute_capability(m: re.Match[str], entry: CatalogEntry, catalog: Catalog, framework: str) -> Decoded:
    g = m.groupdict()
    if not g.get("cc") and g.get("minimum"):  # only what the build needs ("The minimum required ... is 6.0")
        minimum = ComputeCapability.parse(g["minimum"])
        rows = [("needs", f"compute capability {minimum} or higher")]
        return Decoded({}, {"compute_capability": str(minimum)}, rows, {"minimum": str(minimum)})
    if not g.get("cc"):  # an architecture the message names but no number reads ("Unknown CUDA arch (Ada)")
        arch = (g.get("arch") or "").strip()
        return Decoded(rows=[("architecture", arch)] if arch else [], facts={"arch": arch} if arch else {})
    cc = ComputeCapability.parse(_sm(g["cc"]))
    gpu = (g.get("gpu") or "").strip()
    gpu = re.split(r":\s", gpu)[-1].strip() if gpu else ""
    gpu = re.sub(r"^.*\bname:\s*([^,]+).*$", r"\1", gpu)  # TensorFlow's "(device: 0, name: GRID K520, ...)"
    facts = {"gpu_cc": str(cc), "gpu_sm": cc.sm}
    rows = [("GPU", f"{gpu + ', ' if gpu else ''}compute capability {cc} ({cc.sm})")]
    expected: dict[str, str] = {}
    if g.get("minimum"):
        minimum = ComputeCapability.parse(g["minimum"])
        expected["compute_capability"] = str(minimum)
        facts["minimum"] = str(minimum)
        rows.append(("needs", f"compute capability {minimum} or higher"))
    if g.get("supported"):
        archs = [_sm(a) for a in g["supported"].replace(",", " ").split()]
        sass = sorted(ComputeCapability.parse(a) for a in archs if a.startswith("sm_"))
        facts["supported_text"] = " ".join(archs)
        rows.append(("build carries", " ".join(archs)))
        if sass and cc < sass[0]:
            expected["compute_capability"] = str(sass[0])
            facts["direction"] = f"an older release that still lists {cc.sm}"
        elif sass and cc.major > sass[-1].major:
            facts["direction"] = f"a newer release, built with a CUDA that knows {cc.sm}"
        else:
            facts["direction"] = f"one whose list includes {cc.sm}"
    return Decoded({"compute_capability": str(cc)}, expected, rows, facts)


# ---------------------------------------------------------------- no numbers


def cuda_cudnn_majors(m: re.Match[str], entry: CatalogEntry, catalog: Catalog, framework: str) -> Decoded:
    """The CUDA and cuDNN majors a build names as its requirement ("Require cuDNN 9.* and CUDA 12.*")."""
    cuda, cudnn = m.group("cuda"), m.group("cudnn")
    facts = {"want_cuda_major": cuda, "want_cudnn_major": cudnn}
    rows = [("needs", f"CUDA {cuda}.x and cuDNN {cudnn}.x libraries, found by the loader")]
    return Decoded({}, {"cuda": f"{cuda}.x", "cudnn": f"{cudnn}.x"}, rows, facts)


def cuda_required(m: re.Match[str], entry: CatalogEntry, catalog: Catalog, framework: str) -> Decoded:
    """The CUDA a program or image requires (nvidia-container-cli's ``cuda>=12.8``), and the CUDA the host's driver
    supports where the message adds it (nvidia-container-toolkit's ``cuda>=12.8 (cuda=12.4)``)."""
    if not m.group("cuda"):  # cut before the version
        return Decoded()
    cuda = CudaVersion.parse(m.group("cuda"))
    rows = [("needs", f"a driver that supports CUDA {cuda} or newer")]
    found: dict[str, str] = {}
    if m.groupdict().get("found"):
        found["cuda"] = str(CudaVersion.parse(m.group("found")))
        rows.append(("driver supports", f"CUDA {found['cuda']}"))
    return Decoded(found, {"cuda": str(cuda)}, rows, {"cuda": str(cuda), "want_cuda": str(cuda)})


def versions(m: re.Match[str], entry: CatalogEntry, catalog: Catalog, framework: str) -> Decoded:
    """Versions as a message prints them, by the group's name: ``found_<component>`` and ``expected_<component>``
    (TensorRT's "expecting library version 8.0.0 got 8.0.1"); other groups as ``plain`` reads them."""
    decoded = plain(m, entry, catalog, framework)
    for name, value in m.groupdict().items():
        side, _, component = name.partition("_")
        if value and component and side in ("found", "expected"):
            (decoded.found if side == "found" else decoded.expected)[component] = value
    return decoded


# torch and its companion named in a title, each with the CUDA its build is for in any spelling ("cu118",
# "CUDA 11.8", "cuda-11.8", "CUDA Version=11.8", a bare "11.8" of a CUDA release's range)
_SIDE = re.compile(r"(?<![\w-])(?:(?P<companion>torchvision|torchaudio)|(?:py)?torch)(?![a-z-])", re.I)
_CUDA_SPELT = re.compile(
    r"(?<![\w.])(?:cu(?P<tag>\d{3})|(?:cuda[ _=:-]*(?:version[ =:]*)?)?(?P<dotted>(?:[7-9]|1[0-9])\.\d))(?![\w]|\.\d)",
    re.I,
)


def companion_cuda(m: re.Match[str], entry: CatalogEntry, catalog: Catalog, framework: str) -> Decoded:
    """torchvision or torchaudio built for another CUDA than torch, read as ``plain`` reads it; where the text read
    names each side's CUDA (two releases, torch and the companion both named), the companion's is found, torch's
    expected: the versions are taken in the order the two are first named."""
    decoded = plain(m, entry, catalog, framework)
    text = m.group(0)
    sides: list[str] = []
    for side in _SIDE.finditer(text):
        name = "companion" if side.group("companion") else "torch"
        if name not in sides:
            sides.append(name)
    cudas: list[str] = []
    for c in _CUDA_SPELT.finditer(text):
        version = str(parse_cuda_tag("cu" + c.group("tag"))) if c.group("tag") else c.group("dotted")
        if version not in cudas:
            cudas.append(version)
    if len(sides) == 2 and len(cudas) == 2:
        read = dict(zip(sides, cudas))
        decoded.found["cuda"], decoded.expected["cuda"] = read["companion"], read["torch"]
    return decoded


# What an undefined symbol inside an NVIDIA library means, by the library it belongs to: two releases of cuDNN's
# sub-libraries, of cuBLAS and cuBLASLt (CUDA's), loaded together; a framework built against a newer NCCL.
DECODERS: dict[str, Decoder] = {
    "cudnn_pair": cudnn_pair,
    "cudnn_warning": cudnn_warning,
    "cudnn_minimum": cudnn_minimum,
    "cuda_pair": cuda_pair,
    "driver_cuda_encoded": driver_cuda_encoded,
    "library": library,
    "dll_loader": dll_loader,
    "compute_capability": compute_capability,
    "cuda_cudnn_majors": cuda_cudnn_majors,
    "plain": plain,
    "cuda_required": cuda_required,
    "status_code": status_code,
    "status_text": status_text,
    "versions": versions,
    "companion_cuda": companion_cuda,
    "undefined_symbol": undefined_symbol,
    "library_versions": library_versions,
    "status_number": status_number,
}
