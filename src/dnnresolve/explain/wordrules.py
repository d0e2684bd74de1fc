"""NVIDIA's words in a title in any order, where no sentence reads it (the loose reading's last rules, #22): a
library file name and words that say it is not loaded, before or after it, or that a symbol in it is undefined
("not defined", "undefined symbol"); a DLL on a WinError 126/127 line; one architecture (``sm_120``) and words of
support (or an arch number, "cuda arch 8.6", "CUDA 8.7+PTX"); ONNX Runtime's GPU provider and words of its absence;
torchvision or torchaudio, CUDA and a word of conflict; cuDNN, or jax and jaxlib, with a word of conflict; a CUDA
library's failed version check. Each is read by a catalog row (its summary, fixes and decoder): the loader's words for
a library, torch's DLL loader, the undefined-symbol rows, PyTorch's arch check for an architecture, ONNX Runtime's
provider check, the torch companion's check for a CUDA mismatch, jax's pair check, JAX's library checks."""

from __future__ import annotations

import re
from collections.abc import Iterator

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .catalog import Catalog, CatalogEntry

__all__ = ["word_rules"]

# A library file name as a title spells it, and the words that say it failed to load, before or after it
# ("libcudnn_cnn_infer.so.8 not found", "missing cublas64_11.dll", "Can't find libcudart.so.12"), Windows' codes
# for a module or a procedure not found (126, 127), and a few languages' words for "not found" or "missing"
# (ASCII letters only around it: a Chinese or Japanese title writes its words against the name, "cudart64_110.dll缺失";
# a comma typed for the soname's dot, "libcudart,so.11.0", is still the name)
_FILE_NAME = re.compile(
    r"(?<![\w.+-])(?:lib)?[A-Za-z][\w+-]*?(?:[.,]so(?:\.\d+)*|\.dll|(?:\.\d+)*\.dylib)(?![\w-])", re.I | re.A
)
_NOT_LOADED = re.compile(
    r"\b(?:not (?:be )?(?:found|load(?:ed)?|locat(?:e|ed)|find|open(?:ed)?|exists?|present|available|installed)"
    r"|missing|no such file|does ?n[o']?t exist|error (?:loading|opening)"
    r"|load(?:ing)? (?:\w+ )?(?:error|fail(?:ed|ure)?)"
    r"|make sure|load(?:ing)? (?:dynamic |shared )?librar(?:y|ies)"
    r"|WinError 12[67]|(?:error|code) 12[67]\b|specified (?:module|procedure) could not be found"
    r"|(?:cannot|can'?t|could ?n[o']?t|unable to|fail(?:ed|s)? to) (?:load|find|open|locate)"
    r"|fail(?:ed|s|ure)?|error (?:in |while )?loading|los[et]|where is)\b"
    # words of trouble ("cudnn_ops_infer64_8.dll issues", "problem with cudart64_90.dll"), not where denied
    r"|(?<!\bno )(?<!\bwithout )(?<!\bany )\b(?:problems?|issues?|trouble)\b"
    r"|找不到|缺少|缺失|无法加载|无法找到|加载失败|未找到|报错|出错|не найден|introuvable|見つかりません|ありません",
    re.I,
)
# Windows' codes for a module or a procedure not found: any DLL on such a line was not loaded (torch's own,
# nvfuser_codegen.dll, as much as NVIDIA's)
_WIN_NOT_FOUND = re.compile(r"\bWinError (?P<code>12[67])\b", re.I)
# glibc's "symbol X version Y not defined in file" or the loader's "undefined symbol" cut to the library's name
# ("libcublasLt.so.11 not defined"): two releases of NVIDIA's libraries mixed
_NOT_DEFINED = re.compile(r"\b(?:undefined (?:symbol|reference)|symbol lookup error|not defined)\b", re.I)
# torchvision or torchaudio, CUDA, and a word of conflict ("torchvision CUDA mismatch", "torch and torchaudio have
# different CUDA versions"): the companion built for another CUDA than torch
_COMPANION = re.compile(r"(?<![\w-])(?P<companion>torchvision|torchaudio)(?![\w-])", re.I)
_CONFLICT = re.compile(
    r"\b(?:mismatch\w*|different|incompatib\w*|not compatible|does ?n[o']?t match|vs|versus)\b", re.I
)
_CUDA = re.compile(r"\b(?:cuda|cu\d{2,3})\b", re.I)
# cuDNN and the words its checks print (torch's "cuDNN version incompatibility", "mismatch"): a cuDNN of another
# release than the build's
_CUDNN = re.compile(r"(?<![\w-])cudnn(?![\w-])", re.I)
_CUDNN_CONFLICT = re.compile(r"\b(?:mismatch\w*|incompatib\w*|not compatible|does ?n[o']?t match)\b", re.I)
# jax and jaxlib, each with its version, and a word of conflict ("Version different between jaxlib (0.4.12) and jax
# (0.4.11)"): read by jax's own check of the pair (jax/_src/lib/__init__.py)
_JAXLIB = re.compile(r"(?<![\w-])jaxlib\W{1,3}v?(?P<v>\d+(?:\.\d+)+)", re.I)
_JAX = re.compile(r"(?<![\w-])jax(?![\w-])\W{1,3}v?(?P<v>\d+(?:\.\d+)+)", re.I)
# A CUDA library's version check failing ("CuBLAS version checks to fail"): JAX's checks of the libraries it loads
# (jaxlib/cuda/versions_helpers.cc, jax_plugins/cuda/__init__.py); no other framework checks them by name
_LIB_CHECK = re.compile(
    r"(?<![\w-])(?P<component>cuBLAS|cuSPARSE|cuSOLVER|cuFFT|cuPTI|nvJitLink)\W{1,3}version checks?\b"
    r"[^\n]*?\bfail",
    re.I,
)
# One architecture and words of support ("CUDA capability sm_120", "sm_120 not compatible with current PyTorch",
# "Pytorch2.7.1---sm_120"): a GPU the build carries no code for, read by PyTorch's arch check. A line naming
# several is a list (an arch list, a build's flags), not a GPU refused
_ARCH = re.compile(r"(?<![A-Za-z0-9])(?:sm|compute)_(?P<cc>\d{2,3})[af]?(?![A-Za-z0-9])", re.I)
_OWN_ARCH = re.compile(
    r"[^\n]*?\bcapability:? (?P<cc>sm_\d{2,3})[af]?(?![A-Za-z0-9])"
    r"(?:[^\n]*?capabilities:? (?P<supported>(?:(?:sm|compute)_\d+[a-z]? ?)+))?[^\n]*",
    re.I,
)
# An architecture as torch's arch lists spell it (TORCH_CUDA_ARCH_LIST="8.6;8.7+PTX", cpp_extension's "Unknown CUDA
# arch (8.7+PTX)"): a number after "arch", or after "CUDA" only with its +PTX (else "CUDA 9.0" is a release)
_ARCH_NUMBER = re.compile(
    r"(?:(?<![\w-])arch(?:itecture)?s?:? \(?(?P<cc>\d{1,2}\.\d)(?:\+PTX)?|(?<![\w-])CUDA (?P<ptx>\d{1,2}\.\d)\+PTX)"
    r"(?![\w.]*\d)",
    re.I,
)
_SUPPORT = re.compile(r"capabilit|compatib|support|(?<![A-Za-z_])(?:py)?torch(?![A-Za-z_])|不支持", re.I)
# ONNX Runtime's GPU providers and words that say the session does not have one ("CUDAExecutionProvider not
# available", "Cuda provider not showing up", "only CPUExecutionProvider"): the CPU package (its provider check).
# A line that says something failed to load is the provider's library, not the package (the loader's words)
_PROVIDER = re.compile(r"\b(?:CUDA|Tensorrt)(?:ExecutionProvider\b| ?(?:execution )?provider\b)", re.I)
_ABSENT = re.compile(
    r"\b(?:not (?:in |be |being )?(?:available|listed|detected|see[ns]?|show(?:n|s|ing)?|found|recogni[sz]ed|present"
    r"|appear\w*)|n[o']?t (?:see|show|list|find|detect)\w*|missing|unavailable)\b",
    re.I,
)
_ONLY_CPU = re.compile(r"\bonly\W+(?:\w+\W+){0,3}?(?P<provider>CPUExecutionProvider)\b", re.I)
_LOAD_FAILED = re.compile(r"\bload|cannot open|\b12[67]\b", re.I)


def word_rules(catalog: Catalog, line: str) -> Iterator[tuple[CatalogEntry, re.Match[str], re.Match[str]]]:
    """A line read by NVIDIA's vocabulary whatever its sentence: a library file name and words that say it is
    not loaded (read by the catalog's row for a loader's words), torchvision or torchaudio with CUDA and a word of
    conflict."""
    from .vocabulary import read_library_name

    undefined = _NOT_DEFINED.search(line)
    if undefined:
        for name in _FILE_NAME.finditer(line):
            if read_library_name(name.group(0)) is None:
                continue
            entry_id = (
                "nvidia-symbol-not-defined"
                if undefined.group(0).lower() == "not defined"
                else "nvidia-undefined-symbol"
            )
            m = re.match(rf"(?a)[^\n]*?(?<![\w.+-])(?P<lib>{re.escape(name.group(0))})(?![\w-])[^\n]*", line)
            entry = _entry(catalog, entry_id)
            if m is not None and entry is not None:
                yield entry, m, m
    win = _WIN_NOT_FOUND.search(line)
    if win:
        for name in _FILE_NAME.finditer(line):
            if not name.group(0).lower().endswith(".dll"):
                continue
            m = re.match(
                rf"(?a)(?=[^\n]*?\bWinError (?P<code>12[67])\b)[^\n]*?(?<![\w.+-])(?P<lib>{re.escape(name.group(0))})"
                r"(?![\w-])[^\n]*",
                line,
                re.I,
            )
            entry = _entry(catalog, "torch-dll-load-error")
            if m is not None and entry is not None:
                yield entry, m, m
    if _NOT_LOADED.search(line) and not undefined:
        for name in _FILE_NAME.finditer(line):
            if read_library_name(name.group(0)) is None and catalog.library(name.group(0)) is None:
                continue
            m = re.match(rf"(?a)[^\n]*?(?<![\w.+-])(?P<lib>{re.escape(name.group(0))})(?![\w-])[^\n]*", line)
            entry = _entry(catalog, "nvidia-library-not-loaded")
            if m is not None and entry is not None:
                yield entry, m, m
    archs = {a.group("cc") for a in _ARCH.finditer(line)}
    own = _OWN_ARCH.match(line)  # "CUDA capability sm_86 ... supports CUDA capabilities sm_37 sm_50 ...": the first
    if (own or len(archs) == 1) and _SUPPORT.search(line):
        m = own or re.match(rf"[^\n]*?{_ARCH.pattern}[^\n]*", line, re.I)
        entry = _entry(catalog, "torch-arch-not-compatible")
        if m is not None and entry is not None:
            yield entry, m, m
    gpu, cpu = _PROVIDER.search(line), _ONLY_CPU.search(line)
    provider = gpu.group(0) if gpu and _ABSENT.search(line) else cpu.group("provider") if cpu else ""
    if provider and not _LOAD_FAILED.search(line):
        m = re.match(rf"[^\n]*?(?P<provider>{re.escape(provider)})[^\n]*", line)
        entry = _entry(catalog, "ort-provider-not-available")
        if m is not None and entry is not None:
            yield entry, m, m
    # (a number wrapped after its point is rejoined with a space: "8. 7+PTX")
    text = re.sub(r"(?<=\d\.) (?=\d\+PTX)", "", line, flags=re.I)
    numbers = {a.group("cc") or a.group("ptx") for a in _ARCH_NUMBER.finditer(text)}
    if not archs and not own and len(numbers) == 1 and _SUPPORT.search(text):
        m = re.match(
            rf"[^\n]*?(?<![\w-])(?:arch(?:itecture)?s?:? \(?|CUDA )(?P<cc>{re.escape(numbers.pop())})"
            r"(?![\w.]*\d)[^\n]*",
            text,
            re.I,
        )
        entry = _entry(catalog, "torch-arch-not-compatible")
        if m is not None and entry is not None:
            yield entry, m, m
    yield from _framework_words(catalog, line)
    yield from _title_words(catalog, line)
    if _CONFLICT.search(line) and _CUDA.search(line):
        m = re.match(rf"[^\n]*?{_COMPANION.pattern}[^\n]*", line, re.I)
        entry = _entry(catalog, "torch-companion-cuda-mismatch")
        if m is not None and entry is not None:
            yield entry, m, m


def _framework_words(catalog: Catalog, line: str) -> Iterator[tuple[CatalogEntry, re.Match[str], re.Match[str]]]:
    """The frameworks' checks in a title's words: a CUDA library's version check failing (JAX's), jax and jaxlib
    of two versions with a word of conflict, cuDNN with a word of conflict."""
    check = _LIB_CHECK.search(line)
    entry = _entry(catalog, "jax-cuda-lib-too-old")
    if check is not None and entry is not None:
        m = re.match(rf"[^\n]*?{_LIB_CHECK.pattern}[^\n]*", line, re.I)
        if m is not None:
            yield entry, m, m
    jaxlib, jax = _JAXLIB.search(line), _JAX.search(line)
    if jaxlib and jax and _CONFLICT.search(line):
        from packaging.version import InvalidVersion, Version

        try:
            newer = Version(jaxlib.group("v")) > Version(jax.group("v"))
        except InvalidVersion:
            newer = False
        entry = _entry(catalog, "jaxlib-newer-than-jax" if newer else "jaxlib-too-old-for-jax")
        other = "jax" if newer else "needs"
        m = re.match(
            rf"(?=[^\n]*?{_JAXLIB.pattern.replace('?P<v>', '?P<jaxlib>')})"
            rf"(?=[^\n]*?{_JAX.pattern.replace('?P<v>', f'?P<{other}>')})[^\n]*",
            line,
            re.I,
        )
        if m is not None and entry is not None:
            yield entry, m, m
    if _CUDNN.search(line) and _CUDNN_CONFLICT.search(line) and not _FILE_NAME.search(line):
        entry = _entry(catalog, "cudnn-version-words")
        m = re.match(r"[^\n]*", line)
        if m is not None and entry is not None:
            yield entry, m, m


def _entry(catalog: Catalog, entry_id: str) -> CatalogEntry | None:
    try:
        return catalog.entry(entry_id)
    except KeyError:  # a catalog of one's own without it
        return None


# A library name a title spells with a space for its underscore ("cudnn ops64_9.dll"): the name read whole again
# wherever the joined name is one of NVIDIA's
_SPACED_NAME = re.compile(
    r"(?<![\w.+-])(?P<stem>cudnn|cublas|nvinfer|nvrtc|cusolver|cusparse|cufft|curand) (?=[a-z])", re.I
)
# An import that failed, naming a library on the same line ("Import Error ... with cudnn64_7.dll"): the library did not
# load (Python's ImportError for an extension module whose DLL or soname the loader could not open)
_IMPORT_FAILED = re.compile(r"\bimport ?error\b", re.I)
# An NVIDIA library's file name with words of another script written against it ("cudnn_ops64_9.dll识别不到": Chinese
# and Japanese titles put no space around a name), or a title that is the name and nothing else: the name alone is
# what went wrong, whatever those words say
_OTHER_SCRIPT = re.compile(r"[^\W\d_A-Za-z\u00c0-\u024f]")
# TensorRT (or a serialized engine) and words of a version conflict ("tensorRT version mismatch", "Deserializing
# Engine Version Mismatch"): read by TensorRT's engine check, which refuses a plan of another TensorRT release
_TRT = re.compile(
    r"(?<![\w-])(?:tensorrt|trt)(?![\w-])|\b(?:de)?seriali[sz]\w*\b[^\n]*\bengine\b|\bengine\b[^\n]*\bseriali[sz]",
    re.I,
)
_VERSION_CONFLICT = re.compile(
    r"\bversions?\b[^\n]*?\b(?:mismatch\w*|incompatib\w*|not compatible|does ?n[o']?t match)\b"
    r"|\b(?:mismatch\w*|incompatib\w*)\b[^\n]*?\bversions?\b",
    re.I,
)


def _title_words(catalog: Catalog, line: str) -> Iterator[tuple[CatalogEntry, re.Match[str], re.Match[str]]]:
    """A title's own ways of naming a library that did not load (a name spelt with a space, the name alone beside
    words in another script, an import error naming it) and TensorRT's engine check in words."""
    from .vocabulary import read_library_name

    entry = _entry(catalog, "nvidia-library-not-loaded")
    undefined = _NOT_DEFINED.search(line)
    joined = _SPACED_NAME.sub(lambda s: s.group("stem") + "_", line)
    for name in _FILE_NAME.finditer(joined) if entry is not None and not undefined else ():
        lib = name.group(0)
        if read_library_name(lib) is None and catalog.library(lib) is None:
            continue
        # (a name the loader's words already read is the word rule's above; one spelt with a space only here)
        said = _NOT_LOADED.search(line) is not None
        touching = joined[name.start() - 1 : name.start()] + joined[name.end() : name.end() + 1]
        alone = bool(_OTHER_SCRIPT.search(touching)) or not joined.replace(lib, "").strip(" \t'\"`.,:;!?()[]")
        if (lib not in line and said) or (not said and (alone or _IMPORT_FAILED.search(line))):
            m = re.match(rf"(?a)[^\n]*?(?<![\w.+-])(?P<lib>{re.escape(lib)})(?![\w-])[^\n]*", joined)
            if m is not None and entry is not None:
                yield entry, m, m
    engine = _entry(catalog, "tensorrt-engine-plan-version")
    if engine is not None and _TRT.search(line) and _VERSION_CONFLICT.search(line):
        m = re.match(r"[^\n]*", line)
        if m is not None:
            yield engine, m, m
