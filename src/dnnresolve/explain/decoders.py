"""Decoders: turn the numbers a message prints into versions a person can act on.

Each decoder reads the named groups of a catalog pattern's match and returns a ``Decoded`` (what was found,
what was expected, the decoded facts as labelled rows, and facts for fix templates), or ``None`` when the
match is not a problem dnnresolve knows (a library name that is no GPU library, say). The catalog names the
decoder per entry; ``DECODERS`` is that name -> function table.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..compat import CudnnRule, cudnn_compatible, cudnn_rule_text
from ..records import field, record
from ..versions import ComputeCapability, CudaVersion, CudnnVersion, VersionError, parse_cuda_tag

TYPE_CHECKING = False
if TYPE_CHECKING:  # the catalog imports this module (its rows name these functions), not the other way round
    from .catalog import Catalog, CatalogEntry
    from .vocabulary import Code

__all__ = ["DECODERS", "Decoded", "decode"]


@record
class Decoded:
    found: dict[str, str] = field(default_factory=dict)
    expected: dict[str, str] = field(default_factory=dict)
    rows: list[tuple[str, str]] = field(default_factory=list)  # (label, decoded fact) for the reader
    facts: dict[str, str] = field(default_factory=dict)  # placeholders for rule and fix templates
    rule: str = ""
    kind: str = ""  # the kind the vocabulary gives, in place of the entry's
    advice: str = ""  # the catalog entry that advises on it (its summary, explanation and fixes), if not this one
    source: str = ""  # where the vocabulary read it, in place of the entry's source


Decoder = Callable[["re.Match[str]", "CatalogEntry", "Catalog", str], "Decoded | None"]


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


def fill(template: str, facts: dict[str, str]) -> str:
    """The template with its placeholders filled, or "" when one of them is unknown."""
    missing = False

    def sub(m: re.Match[str]) -> str:
        nonlocal missing
        value = facts.get(m.group(1), "")
        if not value:
            missing = True
        return value

    text = re.sub(r"\{(\w+)\}", sub, template)
    return "" if missing else text


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
    g = m.groupdict()
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


# ---------------------------------------------------------------- libraries


def library(m: re.Match[str], entry: CatalogEntry, catalog: Catalog, framework: str) -> Decoded | None:
    if not m.groupdict().get("lib"):
        # cut before the library's name: a framework's own words still say a library is missing; a loader's
        # generic ones ("failed to load") say nothing
        return Decoded() if entry.framework else None
    name = re.split(r"[\\/]", m.group("lib").strip().strip("'\"`‘’"))[-1]
    known = catalog.library(name)
    if known is None:
        return _library_by_rule(name)
    rule, groups = known
    windows = name.lower().endswith(".dll")
    facts: dict[str, str] = {"library": name, "path_var": "PATH" if windows else "LD_LIBRARY_PATH"}
    expected = {"library": name}
    if "cuda" in groups or "cuda_tag" in groups:
        cuda = CudaVersion.parse(groups["cuda"]) if "cuda" in groups else parse_cuda_tag("cu" + groups["cuda_tag"])
        facts["cuda"] = str(cuda)
        expected["cuda"] = str(cuda)
        if not windows:  # environment modules are a Linux cluster's; a DLL is looked up on PATH
            facts["module_hint"] = f"cuda/{cuda}"
    if "cudnn" in groups:
        facts["cudnn"] = groups["cudnn"]
        expected["cudnn"] = groups["cudnn"]
        if not windows:
            facts["module_hint"] = f"cudnn/{groups['cudnn']}"
    if "tensorrt" in groups:
        facts["tensorrt"] = groups["tensorrt"]
    what = fill(rule.what, facts) or rule.what
    facts["what"] = what
    rows = [("missing", f"{name}: {what}")]
    if rule.note:
        rows.append(("note", rule.note))
    return Decoded({}, expected, rows, facts)


_WHAT = {
    "cudnn": "cuDNN {major}",
    "tensorrt": "TensorRT {major}",
    "nccl": "NCCL {major}",
    "cuda": "a CUDA {major}.x library",
    "cuda_math": "a CUDA math library (its number, {major}, is the library's own major, not the CUDA release)",
    "driver": "the NVIDIA driver's library",
}


def _library_by_rule(name: str) -> Decoded | None:
    """A library name no catalog row spells, read by the vocabulary's rule (``libnvinfer.so.8.6.1``,
    ``nvinfer_10.dll``); None for a name that is no NVIDIA library's."""
    from .vocabulary import read_library_name

    lib = read_library_name(name)
    if lib is None:
        return None
    facts = {"library": name, "path_var": "PATH" if lib.windows else "LD_LIBRARY_PATH"}
    expected = {"library": name}
    major = str(lib.version[0]) if lib.version else ""
    if lib.component == "cuda" and major:
        cuda = parse_cuda_tag("cu" + major) if lib.windows and len(major) >= 3 else CudaVersion((int(major),))
        facts["cuda"] = expected["cuda"] = str(cuda)
    elif lib.component in ("cudnn", "tensorrt", "nccl") and major:
        facts[lib.component] = expected[lib.component] = major
        if lib.component == "cudnn" and not lib.windows:
            facts["module_hint"] = f"cudnn/{major}"
    what = _WHAT[lib.component].format(major=major) if major else f"an NVIDIA library ({lib.stem})"
    facts["what"] = what
    rows = [("missing", f"{name}: {what}")]
    if len(lib.version) > 1 and not lib.windows:
        rows.append(("version", f"{'.'.join(map(str, lib.version))}: the release the name was linked against"))
    return Decoded({}, expected, rows, facts)


# ---------------------------------------------------------------- status codes


def status_code(m: re.Match[str], entry: CatalogEntry, catalog: Catalog, framework: str) -> Decoded | None:
    """A status or error code NVIDIA's libraries define (``CUBLAS_STATUS_NOT_INITIALIZED``, ``cudaErrorNoDevice``),
    named as the vocabulary names it: its kind, number, meaning and where it is defined. A catalog entry whose
    ``codes`` list it advises on it; a success code, or a name no header defines, is no diagnosis."""
    from .vocabulary import load_vocabulary

    vocabulary = load_vocabulary()
    return _code_decoded([c for c in vocabulary.code(m.group("code")) if c.kind != "ok"], catalog)


def status_text(m: re.Match[str], entry: CatalogEntry, catalog: Catalog, framework: str) -> Decoded | None:
    """A message that quotes only the CUDA runtime's text for a code (cudaGetErrorString: "no kernel image is
    available for execution on the device"), read as that code; a text that is not CUDA's own wherever it is
    printed ("out of memory") only after a CUDA error's prefix. A title cut short reads as the text it starts."""
    from .vocabulary import load_vocabulary, specific_text, text_key

    vocabulary = load_vocabulary()
    said = text_key(m.group("text"))
    short = re.sub(r" (?:is|are)(?= )", "", said)
    codes: list[Code] = []
    for key, found in sorted(vocabulary.texts.items(), key=lambda kv: len(kv[0])):
        if key == said or re.sub(r" (?:is|are)(?= )", "", key).startswith(short):
            codes = found
            break
    if not codes or not (m.group("prefix") or specific_text(codes[0].text)):
        return None
    decoded = _code_decoded(codes, catalog)
    if decoded is not None:
        decoded.rows.insert(0, ("text", f"{codes[0].text!r}: what cudaGetErrorString says for {codes[0].name}"))
    return decoded


def _code_decoded(codes: list[Code], catalog: Catalog) -> Decoded | None:
    from .vocabulary import load_vocabulary

    if not codes:
        return None
    vocabulary = load_vocabulary()
    code = codes[-1]  # the newest header's numbering (cuDNN 9 renumbered its statuses)
    numbers = " or ".join(dict.fromkeys(str(c.value) for c in codes))
    rows = [("code", f"{code.name} = {numbers} ({code.type}, {code.library})")]
    if code.meaning:
        rows.append(("meaning", code.meaning))
    rows.append(("defined in", code.source))
    # cuBLAS's header gives no comments: its names say it ("CUBLAS_STATUS_NOT_INITIALIZED": not initialized)
    words = re.sub(r"^(?:[A-Z]+_(?:STATUS|ERROR)_|CUFFT_|cudaError|nccl)", "", code.name)
    words = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", words).replace("_", " ").lower()
    facts = {"code": code.name, "code_library": code.library, "meaning": code.meaning.rstrip(".") or words}
    advice = catalog.advice_for(code.name)
    return Decoded(rows=rows, facts=facts, kind=code.kind, advice=advice, source=vocabulary.source_url(code))


# ---------------------------------------------------------------- GPU architecture


def _sm(text: str) -> str:
    """An architecture as a list names it: ``sm_86``, ``compute_80``, ``8.6``, or bare digits (Paddle's ``86``,
    ``120``), which mean ``sm_86``."""
    return f"sm_{text}" if text.isdigit() else text


def compute_capability(m: re.Match[str], entry: CatalogEntry, catalog: Catalog, framework: str) -> Decoded:
    g = m.groupdict()
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


# What an undefined symbol inside an NVIDIA library means, by the library it belongs to: two releases of cuDNN's
# sub-libraries, of cuBLAS and cuBLASLt (CUDA's), loaded together; a framework built against a newer NCCL.
_SYMBOL_KIND = {
    "cudnn": "cudnn_version_mismatch",
    "cuda": "cuda_version_mismatch",
    "cuda_math": "cuda_version_mismatch",
    "nccl": "missing_library",
}
_SYMBOL_OWNER = (  # a symbol's own name, when no library version names its owner
    (re.compile(r"cudnn", re.IGNORECASE), "cudnn", "cuDNN"),
    (re.compile(r"^(?:_Z\w*?)?cublas", re.IGNORECASE), "cuda", "cuBLAS"),
    (re.compile(r"^nccl", re.IGNORECASE), "nccl", "NCCL"),
    (re.compile(r"^(?:cufft|cusparse|cusolver|curand|_*nvJitLink)", re.IGNORECASE), "cuda_math", "a CUDA math library"),
    # the CUDA runtime's API (cuda_runtime_api.h: every function is cudaXxx), versioned with the toolkit
    (re.compile(r"^cuda[A-Z]"), "cuda", "the CUDA runtime"),
)
_SYMBOL_WHY = {
    "cudnn": "two cuDNN releases are loaded together: one sub-library calls a function another release lacks",
    "cuda": "cuBLAS and cuBLASLt (or another CUDA library) of two CUDA releases are loaded together",
    "cuda_math": "CUDA libraries of two releases are loaded together",
    "nccl": "the framework was built against a newer NCCL than the one loaded",
}


def undefined_symbol(m: re.Match[str], entry: CatalogEntry, catalog: Catalog, framework: str) -> Decoded | None:
    """An undefined symbol, read by rule: the library whose version the symbol names (``version
    libcudnn_ops_infer.so.8``), else the library the symbol's name belongs to (``ncclCommRegister``), read by the
    vocabulary's library names; None when neither is NVIDIA's."""
    from .vocabulary import read_library_name

    g = m.groupdict()
    symbol = g.get("symbol") or ""
    owner = read_library_name((g.get("lib") or "").strip("*"))
    component, label = (owner.component, owner.stem) if owner else ("", "")
    if component not in _SYMBOL_KIND:
        component, label = next(((c, name) for rx, c, name in _SYMBOL_OWNER if rx.search(symbol)), ("", ""))
    if component not in _SYMBOL_KIND:
        return None
    rows = (
        [("symbol", f"{symbol[:80]}{'...' if len(symbol) > 80 else ''}: expected in {label}")]
        if symbol
        else [("version", f"{g.get('lib')}: not found in the copy loaded")]
    )
    if g.get("file"):
        rows.append(("needed by", g["file"]))
    rows.append(("meaning", _SYMBOL_WHY[component]))
    facts = {"symbol": symbol, "symbol_library": label, "meaning": _SYMBOL_WHY[component]}
    return Decoded(rows=rows, facts=facts, kind=_SYMBOL_KIND[component])


# The macro each library's header encodes its version in, by the name a framework prints
_VERSION_MACRO = {
    "cublas": "CUBLAS_VERSION",
    "cufft": "CUFFT_VERSION",
    "curand": "CURAND_VERSION",
    "cusolver": "CUSOLVER_VERSION",
    "cusparse": "CUSPARSE_VERSION",
    "cudnn": "CUDNN_VERSION",
    "nccl": "NCCL_VERSION_CODE",
}


def library_versions(m: re.Match[str], entry: CatalogEntry, catalog: Catalog, framework: str) -> Decoded:
    """A CUDA library's integer versions (JAX's "Found cuSPARSE version 12103, but JAX was built against version
    12200"), each read by the encoding the library's own header defines (the vocabulary's [[encoding]] rows), so a
    release newer than the data still reads; a library with no encoding keeps its numbers as printed."""
    from .vocabulary import load_vocabulary

    decoded = plain(m, entry, catalog, framework)
    component = (m.groupdict().get("component") or "").strip()
    macro = _VERSION_MACRO.get(component.lower(), "")
    vocabulary = load_vocabulary()
    rows = [("library", component)] if component else []
    for group in ("installed", "minimum", "built"):
        number = m.groupdict().get(group)
        if not number:
            continue
        read = vocabulary.decode(macro, int(number)) if macro else None
        if read is None:
            rows.append((group, number))
            continue
        version = ".".join(map(str, read[0]))
        decoded.facts[f"{group}_version"] = version
        rows.append((group, f"{component} {version}  ({read[1]})"))
    decoded.rows = rows
    return decoded


def plain(m: re.Match[str], entry: CatalogEntry, catalog: Catalog, framework: str) -> Decoded:
    """The named groups as they are, as rows and as facts for the fix templates (jaxlib's ``{needs}``)."""
    groups = {k: v for k, v in m.groupdict().items() if v}
    return Decoded(rows=list(groups.items()), facts=dict(groups))


DECODERS: dict[str, Decoder] = {
    "cudnn_pair": cudnn_pair,
    "cudnn_warning": cudnn_warning,
    "cudnn_minimum": cudnn_minimum,
    "cuda_pair": cuda_pair,
    "driver_cuda_encoded": driver_cuda_encoded,
    "library": library,
    "compute_capability": compute_capability,
    "cuda_cudnn_majors": cuda_cudnn_majors,
    "plain": plain,
    "cuda_required": cuda_required,
    "status_code": status_code,
    "status_text": status_text,
    "versions": versions,
    "undefined_symbol": undefined_symbol,
    "library_versions": library_versions,
}
