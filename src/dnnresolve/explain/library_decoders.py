"""Decoders of NVIDIA's vocabulary in a message: a library file name (its component and major), a status or error
code by name or text, an undefined symbol inside an NVIDIA library, and the version macros a build check prints."""

from __future__ import annotations

import re

from ..versions import CudaVersion, VersionError, parse_cuda_tag
from .decoded import Decoded, fill, plain

TYPE_CHECKING = False
if TYPE_CHECKING:  # the catalog imports the decoders (its rows name these functions), not the other way round
    from .catalog import Catalog, CatalogEntry
    from .vocabulary import Code


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
        # a DLL packs major and minor into one number (cudart64_110.dll); a soname or a dylib spells them as parts
        # (libcudart.so.11.0, libcudart.11.0.dylib), of which a patch (libcudart.so.11.8.89) says no more
        cuda = parse_cuda_tag("cu" + major) if lib.windows and len(major) >= 3 else CudaVersion(lib.version[:2])
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


# Windows' codes (winerror.h) for a DLL that is not there (ERROR_MOD_NOT_FOUND) or lacks a function another imports
# (ERROR_PROC_NOT_FOUND, a copy of another release); other codes (182, 193, 1114) say the file is there but cannot
# run or initialise: nothing is missing
_NOT_LOADED_CODES = frozenset({126, 127})


def dll_loader(m: re.Match[str], entry: CatalogEntry, catalog: Catalog, framework: str) -> Decoded | None:
    """A DLL named by a Windows loader's words (torch's ``[WinError 126] ... Error loading "X.dll" or one of its
    dependencies``): an NVIDIA or PyTorch name decoded as ``library`` does, any other as printed; kind other for a
    code that says the file is there. None for an unknown name the loader's own words do not vouch for (``Error
    loading config.dll``)."""
    code = m.groupdict().get("code")
    decoded = library(m, entry, catalog, framework)
    if decoded is None:
        if not code and not m.groupdict().get("refused") and "one of its dependencies" not in m.group(0):
            return None
        name = re.split(r"[\\/]", m.group("lib").strip().strip("'\"`‘’"))[-1]
        what = "a DLL the framework loads, or one it depends on"
        decoded = Decoded(
            {}, {"library": name}, [("missing", f"{name}: {what}")], {"library": name, "path_var": "PATH", "what": what}
        )
    if code:
        decoded.rows.append(("code", f"WinError {code}"))
    if (code and int(code) not in _NOT_LOADED_CODES) or m.groupdict().get("refused"):
        decoded.kind = "other"
        decoded.rows[0] = ("not loaded", decoded.rows[0][1])
    return decoded


def windows_library(m: re.Match[str], entry: CatalogEntry, catalog: Catalog, framework: str) -> Decoded | None:
    """An NVIDIA DLL a loader names with Windows' code (cuDNN's "Could not load library cudnn_cnn_infer64_8.dll.
    Error code 193"): decoded as ``library`` decodes it, kind other where the code says the file is there but
    cannot be loaded (193, 1114, ...), as torch's DLL loader is read."""
    decoded = library(m, entry, catalog, framework)
    code = m.groupdict().get("code")
    if decoded is not None and code:
        decoded.rows.append(("code", f"Windows error {code}"))
        if int(code) not in _NOT_LOADED_CODES:
            decoded.kind = "other"
            decoded.rows[0] = ("not loaded", decoded.rows[0][1])
    return decoded


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


# The CUDA runtime's error numbers before CUDA 10.1 renumbered them, where they differ from the vocabulary's (CUDA 11
# and later headers): NVIDIA's driver_types.h of those releases (a copy: https://github.com/Devdevdavid/Galaxeirb/blob/
# 988657f5505170c1fe0f2a26135478fe1cd0daaf/include/driver_types.h), cudaErrorX written X. A number both eras define
# differently names no code alone; one only the old header defines is read by its name there.
_CUDART_BEFORE_10_1 = (
    "1 MissingConfiguration 4 LaunchFailure 5 PriorLaunchFailure 6 LaunchTimeout 7 LaunchOutOfResources "
    "8 InvalidDeviceFunction 10 InvalidDevice 11 InvalidValue 14 MapBufferObjectFailed 15 UnmapBufferObjectFailed "
    "29 CudartUnloading 30 Unknown 33 InvalidResourceHandle 34 NotReady 36 SetOnActiveProcess 38 NoDevice "
    "39 ECCUncorrectable 40 SharedObjectSymbolNotFound 41 SharedObjectInitFailed 42 UnsupportedLimit "
    "47 InvalidKernelImage 48 NoKernelImageForDevice 50 PeerAccessAlreadyEnabled 51 PeerAccessNotEnabled "
    "54 DeviceAlreadyInUse 55 ProfilerDisabled 56 ProfilerNotInitialized 57 ProfilerAlreadyStarted "
    "58 ProfilerAlreadyStopped 59 Assert 60 TooManyPeers 61 HostMemoryAlreadyRegistered 62 HostMemoryNotRegistered "
    "63 OperatingSystem 64 PeerAccessUnsupported 70 NotPermitted 71 NotSupported"
)


def status_number(m: re.Match[str], entry: CatalogEntry, catalog: Catalog, framework: str) -> Decoded | None:
    """A CUDA runtime error by its number alone (PyTorch's old ``cuda runtime error (35)``, TensorRT's "CUDA
    initialization failure with error 35"): the cudaError_t code the vocabulary numbers so, or the one the headers
    before CUDA 10.1 did. A number the two eras give two meanings, or neither defines, names no code: the entry's
    own reading stands where its words say more than the number (TensorRT could not start CUDA), else nothing."""
    from .vocabulary import load_vocabulary

    vocabulary = load_vocabulary()
    number = int(m.group("number"))
    now = vocabulary.by_value("cudaError_t", number)
    words = _CUDART_BEFORE_10_1.split()
    then = dict(zip(map(int, words[::2]), words[1::2])).get(number)
    codes: list[Code] = []
    if not (then and now):
        codes = now or ([c for c in vocabulary.code("cudaError" + then) if c.type == "cudaError_t"] if then else [])
    decoded = _code_decoded(codes, catalog)
    if decoded is None:
        return plain(m, entry, catalog, framework) if entry.kind != "other" else None
    era = "the CUDA 10.0 and older numbering" if then and not now else "its number in every CUDA release's header"
    decoded.rows.insert(0, ("number", f"{number}: {codes[-1].name}, by {era}"))
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


_SYMBOL_KIND = {
    "cudnn": "cudnn_version_mismatch",
    "cuda": "cuda_version_mismatch",
    "cuda_math": "cuda_version_mismatch",
    "nccl": "missing_library",
    "driver": "driver_too_old",
    "tensorrt": "other",  # no kind names TensorRT (as for its engine versions)
}
_SYMBOL_OWNER = (  # a symbol's own name, when no library version names its owner
    (re.compile(r"cudnn", re.IGNORECASE), "cudnn", "cuDNN"),
    (re.compile(r"^(?:_Z\w*?)?cublas", re.IGNORECASE), "cuda", "cuBLAS"),
    (re.compile(r"^nccl", re.IGNORECASE), "nccl", "NCCL"),
    (re.compile(r"^(?:cufft|cusparse|cusolver|curand|_*nvJitLink)", re.IGNORECASE), "cuda_math", "a CUDA math library"),
    # the CUDA runtime's API (cuda_runtime_api.h: every function is cudaXxx), versioned with the toolkit
    (re.compile(r"^cuda[A-Z]"), "cuda", "the CUDA runtime"),
    # the driver API (cuda.h: cuInit, cuDevicePrimaryCtxRelease_v2, cuMemAllocAsync), in the driver's libcuda
    (re.compile(r"^cu[A-Z]"), "driver", "the NVIDIA driver (libcuda)"),
)
_SYMBOL_WHY = {
    "cudnn": "two cuDNN releases are loaded together: one sub-library calls a function another release lacks",
    "cuda": "cuBLAS and cuBLASLt (or another CUDA library) of two CUDA releases are loaded together",
    "cuda_math": "CUDA libraries of two releases are loaded together",
    "nccl": "the framework was built against a newer NCCL than the one loaded",
    "driver": "the program calls a driver API function that the installed driver's libcuda does not have yet",
    "tensorrt": "libraries of two TensorRT releases are loaded together",
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
    if component.lower() == "cuda":  # the CUDA runtime itself: its number is the CUDA release (12010 = 12.1)
        return _cuda_versions(m, decoded)
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


def _cuda_versions(m: re.Match[str], decoded: Decoded) -> Decoded:
    """JAX's check of the CUDA runtime ("Outdated CUDA installation found ... Minimum supported: 12010 Installed
    version: 12000"): the CUDA installed, and the release it must be at least (the minimum, else the build's)."""
    g = m.groupdict()
    installed, need_text = _encoded_cuda(g.get("installed")), g.get("minimum") or g.get("built")
    need = _encoded_cuda(need_text)
    decoded.rows = [("library", "the CUDA runtime")]
    if installed is not None:
        decoded.found = {"cuda": str(installed)}
        decoded.facts["found_cuda"] = str(installed)
        decoded.rows.append(("installed", f"CUDA {installed}  ({g['installed']} = major*1000 + minor*10)"))
    if need is not None:
        decoded.expected = {"cuda": str(need)}
        decoded.facts["want_cuda"] = str(need)
        decoded.rows.append(("at least", f"CUDA {need}  ({need_text} = major*1000 + minor*10)"))
    return decoded


def _encoded_cuda(text: str | None) -> CudaVersion | None:
    try:
        return CudaVersion.from_encoded(text) if text else None
    except VersionError:  # not CUDA's encoding (a number cut short in a title)
        return None
