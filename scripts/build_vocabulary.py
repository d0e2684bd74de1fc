#!/usr/bin/env python3
"""Build data/nvidia_vocabulary.toml from NVIDIA's own headers and wheels.

Reads, from each header tree given (a CUDA toolkit's include directory, or the headers inside an nvidia-* wheel
from PyPI):
- every enumerator of the status / error types NVIDIA's libraries define (CUresult, cudaError_t, cublasStatus_t,
  cudnnStatus_t, cufftResult, cusolverStatus_t, cusparseStatus_t, curandStatus_t, ncclResult_t, nvmlReturn_t,
  nvrtcResult, nvJitLinkResult), by name and number, with the header's comment as its meaning;
- each library's version encoding (``#define CUSPARSE_VERSION (CUSPARSE_VER_MAJOR * 1000 + ...)``);
and, from each wheel's file list, the shared libraries it ships (``libcublasLt.so.12``) and what their number is:
the CUDA major (cuBLAS 12 in a cu12 wheel) or the library's own major (cuFFT 11 in a cu12 wheel).

Each fact records the header or wheel and the package version it came from. A code's kind (what dnnresolve makes
of it) follows from its name by the rules in ``KIND_RULES``.

    scripts/build_vocabulary.py --fetch                      # pip download the wheels in PACKAGES into a temp dir
    scripts/build_vocabulary.py --headers DIR=LABEL ...      # header trees already on disk (tests use this)
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "data" / "nvidia_vocabulary.toml"

# (type, its first enumerator, library as people name it, the header it is defined in)
TYPES = (
    ("CUresult", "CUDA_SUCCESS", "CUDA driver API", "cuda.h"),
    ("cudaError_t", "cudaSuccess", "CUDA runtime", "driver_types.h"),
    ("cublasStatus_t", "CUBLAS_STATUS_SUCCESS", "cuBLAS", "cublas_api.h"),
    ("cudnnStatus_t", "CUDNN_STATUS_SUCCESS", "cuDNN", "cudnn_graph.h cudnn_ops_infer.h cudnn.h"),
    ("cufftResult", "CUFFT_SUCCESS", "cuFFT", "cufft.h"),
    ("cusolverStatus_t", "CUSOLVER_STATUS_SUCCESS", "cuSOLVER", "cusolver_common.h"),
    ("cusparseStatus_t", "CUSPARSE_STATUS_SUCCESS", "cuSPARSE", "cusparse.h"),
    ("curandStatus_t", "CURAND_STATUS_SUCCESS", "cuRAND", "curand.h"),
    ("ncclResult_t", "ncclSuccess", "NCCL", "nccl.h"),
    ("nvmlReturn_t", "NVML_SUCCESS", "NVML", "nvml.h"),
    ("nvrtcResult", "NVRTC_SUCCESS", "NVRTC", "nvrtc.h"),
    ("nvJitLinkResult", "NVJITLINK_SUCCESS", "nvJitLink", "nvJitLink.h"),
)

# What a code means for dnnresolve, by its name (upper case, CamelCase split: cudaErrorNoDevice -> NO_DEVICE).
# First match wins; "ok" marks success codes, which are no error. Each rule restates what the header says of the
# codes it covers (their comments are in the generated file's `meaning`).
KIND_RULES: tuple[tuple[str, str], ...] = (
    ("ok", r"(?:^|_)SUCCESS$|^NCCL_IN_PROGRESS$|^NCCL_NUM_RESULTS$"),
    (
        "driver_too_old",
        r"INSUFFICIENT_DRIVER|UNSUPPORTED_PTX_VERSION|COMPAT_NOT_SUPPORTED_ON_DEVICE"
        r"|CALL_REQUIRES_NEWER_DRIVER",
    ),
    ("arch_unsupported", r"NO_BINARY_FOR_GPU|NO_KERNEL_IMAGE_FOR_DEVICE|ARCH_MISMATCH"),
    ("cudnn_version_mismatch", r"^CUDNN_STATUS_(?:SUBLIBRARY_)?VERSION_MISMATCH$"),
    ("cuda_version_mismatch", r"^CURAND_STATUS_VERSION_MISMATCH$"),
    ("missing_library", r"LIBRARY_NOT_FOUND|SUBLIBRARY_LOADING_FAILED|JIT_COMPILER_NOT_FOUND|STUB_LIBRARY"),
    (
        "init_failure",
        r"NOT_INITIALIZED|UNINITIALIZED|(?:^|_)NO_DEVICE$|INITIALIZATION_(?:ERROR|FAILED)"
        r"|DRIVER_NOT_LOADED|LIB_RM_VERSION_MISMATCH|SYSTEM_NOT_READY|SYSTEM_DRIVER_MISMATCH|DEVICES_UNAVAILABLE"
        r"|^CUFFT_SETUP_FAILED$|^CUDA_ERROR_INVALID_DEVICE$|^INVALID_DEVICE$",
    ),
    ("other", r""),
)

# The wheels read by --fetch: each is pip-downloaded (no dependencies) and its headers and file list read.
PACKAGES = (
    "nvidia-cuda-runtime-cu11==11.8.89",
    "nvidia-cuda-runtime-cu12==12.9.79",
    "nvidia-cublas-cu11==11.11.3.6",
    "nvidia-cublas-cu12==12.9.3.13",
    "nvidia-cudnn-cu11==8.5.0.96",
    "nvidia-cudnn-cu11==8.9.6.50",
    "nvidia-cudnn-cu12==9.28.0.42",
    "nvidia-cufft-cu12==11.4.1.4",
    "nvidia-curand-cu12==10.3.10.19",
    "nvidia-cusolver-cu12==11.7.5.82",
    "nvidia-cusparse-cu12==12.5.10.65",
    "nvidia-nccl-cu12==2.32.3",
    "nvidia-nvml-dev-cu12==12.9.79",
    "nvidia-cuda-nvrtc-cu12==12.9.86",
    "nvidia-nvjitlink-cu12==12.9.86",
)
PIP_TIMEOUT = 600


def snake(name: str) -> str:
    """A code's name as the kind rules read it: ``cudaErrorNoKernelImageForDevice`` -> ``NO_KERNEL_IMAGE_FOR_DEVICE``,
    ``ncclSystemError`` -> ``NCCL_SYSTEM_ERROR``; an UPPER_SNAKE name as it is."""
    if name.isupper() or "_" in name:
        return name.upper()
    body = re.sub(r"^cudaError", "", name)
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", body).upper()


def kind_of(name: str) -> str:
    s = snake(name)
    for kind, pattern in KIND_RULES:
        if re.search(pattern, s):
            return kind
    return "other"


# ---------------------------------------------------------------- reading C headers

_TOKEN = re.compile(r"/\*.*?\*/|//[^\n]*|\n|,|[^,/\n]+|/", re.S)


def _clean_comment(text: str) -> str:
    s = re.sub(r"^/\*+!?<?|\*/$|^//[/!]?<?", "", text.strip())
    lines = [re.sub(r"^\s*\*+ ?", "", ln).strip() for ln in s.splitlines()]
    s = " ".join(ln for ln in lines if ln)
    s = re.sub(r"\\(?:brief|ref|p)\s+|@since[^.]*\.?|\\deprecated", "", s).strip()
    return re.sub(r"\s+", " ", s)


def _first_sentence(text: str, limit: int = 240) -> str:
    m = re.match(r"(.+?\.)(?:\s|$)", text)
    s = m.group(1) if m else text
    return s if len(s) <= limit else s[: limit - 1].rsplit(" ", 1)[0] + "…"


def _evaluate(expr: str, known: dict[str, int]) -> int | None:
    text = re.sub(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\b", r"\1", expr.strip())
    text = re.sub(r"\b[A-Za-z_]\w*\b", lambda m: str(known[m.group(0)]) if m.group(0) in known else "?", text)
    if "?" in text:
        return None
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return None
    allowed = (
        ast.Expression,
        ast.BinOp,
        ast.UnaryOp,
        ast.Constant,
        ast.Add,
        ast.Sub,
        ast.Mult,
        ast.USub,
        ast.LShift,
        ast.BitOr,
    )
    if not all(isinstance(n, allowed) for n in ast.walk(tree)):
        return None
    value = eval(compile(tree, "<enum>", "eval"), {"__builtins__": {}})  # only numbers and operators (checked)
    return int(value)


def parse_enum(body: str) -> list[tuple[str, int, str]]:
    """(name, value, meaning) of each enumerator of a C enum's body, its value computed as C would."""
    items: list[dict[str, Any]] = []
    pending: list[str] = []
    current: dict[str, Any] | None = None
    newline_since = True
    for m in _TOKEN.finditer(body):
        tok = m.group(0)
        if tok.startswith(("/*", "//")):
            trailing = re.match(r"(/\*\*<|//!<|///<|/\*!<)", tok) is not None
            target = current if current is not None else (items[-1] if items else None)
            if target is not None and (trailing or not newline_since):
                target["after"].append(tok)
            else:
                pending.append(tok)
        elif tok == "\n":
            newline_since = True
        elif tok == ",":
            if current is not None:
                items.append(current)
                current = None
            newline_since = False
        else:
            text = tok.strip()
            if not text or text.startswith("#"):
                continue
            nm = re.match(r"([A-Za-z_]\w*)\s*(?:=\s*(.+))?$", text, re.S)
            if nm is None:
                continue
            if current is not None and current["expr"] is None and nm.group(2) is None:
                continue
            current = {"name": nm.group(1), "expr": nm.group(2), "before": pending, "after": []}
            pending = []
    if current is not None:
        items.append(current)
    out: list[tuple[str, int, str]] = []
    known: dict[str, int] = {}
    nxt = 0
    for it in items:
        value = nxt if it["expr"] is None else _evaluate(it["expr"], known)
        if value is None:
            continue
        known[it["name"]] = value
        nxt = value + 1
        comments = it["after"] or it["before"][-1:]
        meaning = _first_sentence(_clean_comment(" ".join(comments))) if comments else ""
        out.append((it["name"], value, meaning))
    return out


_ENUM = re.compile(r"\benum\b[\s\w]*\{(?P<body>[^{}]*)\}\s*(\w*)\s*;", re.S)


def enums_in(text: str, first: str) -> list[tuple[str, int, str]]:
    """The enumerators of the enum in ``text`` that defines ``first``."""
    for m in _ENUM.finditer(text):
        if re.search(rf"(?<!\w){re.escape(first)}\s*[=,}}]", m.group("body")):
            return parse_enum(m.group("body"))
    return []


_ENCODING = re.compile(
    r"#\s*define\s+(?P<macro>(?P<lib>[A-Z]+)_VERSION)\s+\\?\s*\(?\s*\(?(?P<a>\w+)\s*\*\s*(?P<ma>\d+)\s*\+\s*\\?\s*"
    r"(?P<b>\w+)\s*\*\s*(?P<mb>\d+)\s*\+\s*\\?\s*(?P<c>\w+)\s*\)?"
)


def encodings_in(text: str, version: str = "") -> list[dict[str, Any]]:
    """Version encodings a header defines: ``CUSPARSE_VERSION = MAJOR * 1000 + MINOR * 100 + PATCH``; or, for a
    plain number (``#define CUFFT_VERSION 11401``), the scales that make the package's ``version`` (11.4.1.4) of
    it."""
    out = []
    parts = [int(p) for p in version.split(".")[:3]] if re.fullmatch(r"\d+(\.\d+){2,}", version) else []
    for m in re.finditer(r"#\s*define\s+(?P<macro>CU[A-Z]+_VERSION)\s+(?P<n>\d{4,6})\s*$", text, re.M):
        for major in (1000, 10000):
            if parts and parts[0] * major + parts[1] * 100 + parts[2] == int(m.group("n")):
                out.append({"macro": m.group("macro"), "major": major, "minor": 100, "patch": 1})
    for m in _ENCODING.finditer(text):
        if not re.search(r"MAJOR", m.group("a")):
            continue
        out.append({"macro": m.group("macro"), "major": int(m.group("ma")), "minor": int(m.group("mb")), "patch": 1})
    nccl = re.search(
        r"#define NCCL_VERSION\(X,Y,Z\)\s*\(\(\(X\) <= (\d+) && \(Y\) <= (\d+)\) \? \(X\) \* (\d+) \+ "
        r"\(Y\) \* (\d+) \+ \(Z\) : \(X\) \* (\d+) \+ \(Y\) \* (\d+) \+ \(Z\)\)",
        text,
    )
    if nccl:
        g = [int(x) for x in nccl.groups()]
        out.append(
            {
                "macro": "NCCL_VERSION_CODE",
                "major": g[2],
                "minor": g[3],
                "patch": 1,
                "until": f"{g[0]}.{g[1]}",
                "then_major": g[4],
                "then_minor": g[5],
            }
        )
    return out


# ---------------------------------------------------------------- the runtime's own texts


def runtime_texts(cudart: Path) -> dict[int, str]:
    """What ``cudaGetErrorString`` returns for each cudaError_t value, asked of the CUDA runtime library itself
    (``libcudart.so``, which answers without a GPU or a driver): the texts programs print for the codes, so that a
    message quoting only the text ("no kernel image is available for execution on the device") reads as its code.
    A value the library does not know reads "unrecognized error code" and is left out."""
    import ctypes

    lib = ctypes.CDLL(str(cudart))
    get = lib.cudaGetErrorString
    get.restype, get.argtypes = ctypes.c_char_p, [ctypes.c_int]
    name = lib.cudaGetErrorName
    name.restype, name.argtypes = ctypes.c_char_p, [ctypes.c_int]
    out = {}
    for value in range(0, 1000):
        text = (get(value) or b"").decode("utf-8", "replace").strip()
        if text and not (name(value) or b"").startswith(b"unrecognized") and value != 0:
            out[value] = text
    return out


def add_texts(data: dict[str, Any], cudart: Path, label: str) -> int:
    """Give each cudaError_t row the runtime's text for its value (``text``, ``text_from``); the count given."""
    texts = runtime_texts(cudart)
    n = 0
    for row in data["codes"]:
        if row["type"] == "cudaError_t" and row["value"] in texts:
            row["text"] = texts[row["value"]]
            row["text_from"] = f"{label}: {cudart.name} cudaGetErrorString"
            n += 1
    return n


def read_back(path: Path) -> dict[str, Any]:
    """A vocabulary file this script wrote, as ``build`` returns it (to add the runtime's texts to it)."""
    import tomllib

    doc = tomllib.loads(path.read_text(encoding="utf-8"))
    return {
        "sources": doc.get("source", []),
        "codes": doc.get("code", []),
        "encodings": doc.get("encoding", []),
        "libraries": doc.get("library", []),
    }


# ---------------------------------------------------------------- sources


class Source:
    """A header tree and the package version it came from (``nvidia-cublas-cu12==12.9.3.13``, or a toolkit)."""

    def __init__(self, label: str, root: Path, url: str, files: Sequence[str] = ()) -> None:
        self.label, self.root, self.url, self.files = label, root, url, tuple(files)

    def headers(self) -> Iterable[Path]:
        return sorted(p for p in self.root.rglob("*.h") if p.is_file())


def pypi_url(label: str) -> str:
    name, _, version = label.partition("==")
    return f"https://pypi.org/project/{name}/{version}/"


def fetch(packages: Sequence[str], into: Path) -> list[Source]:
    sources = []
    for spec in packages:
        where = into / spec.replace("==", "-")
        listing = where / "files.txt"
        if listing.is_file():  # fetched by an earlier run into the same --work directory
            sources.append(Source(spec, where / "x", pypi_url(spec), listing.read_text().splitlines()))
            continue
        where.mkdir(parents=True, exist_ok=True)
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--only-binary=:all:",
            "--platform",
            "manylinux2014_x86_64",
            "--platform",
            "manylinux_2_27_x86_64",
            "--platform",
            "manylinux_2_28_x86_64",
            "--platform",
            "manylinux1_x86_64",
            "--python-version",
            "3.11",
            spec,
            "-d",
            str(where),
        ]
        subprocess.run(cmd, check=True, timeout=PIP_TIMEOUT)
        files: list[str] = []
        for wheel in where.glob("*.whl"):
            with zipfile.ZipFile(wheel) as z:
                for info in z.infolist():
                    files.append(info.filename)
                    if info.filename.endswith(".h"):
                        z.extract(info, where / "x")
            wheel.unlink()  # hundreds of MB each: only the headers and the names are kept
        listing.write_text("\n".join(files))
        sources.append(Source(spec, where / "x", pypi_url(spec), files))
    return sources


def toolkit(path: Path) -> Source | None:
    cuda_h = path / "cuda.h"
    if not cuda_h.is_file():
        return None
    m = re.search(r"#define CUDA_VERSION (\d+)", cuda_h.read_text(errors="replace"))
    version = f"{int(m.group(1)) // 1000}.{int(m.group(1)) % 1000 // 10}" if m else "unknown"
    url = "https://developer.nvidia.com/cuda-toolkit-archive"
    return Source(f"cuda-toolkit=={version}", path, url)


# ---------------------------------------------------------------- building


def _soname_facts(source: Source) -> list[dict[str, Any]]:
    """The shared libraries a wheel ships, and whether their number is the CUDA major (the wheel's -cuNN) or the
    library's own (its version's major)."""
    name, _, version = source.label.partition("==")
    cu = re.search(r"-cu(\d+)$", name)
    out = []
    for f in source.files:
        m = re.search(r"/lib(?P<stem>\w+)\.so\.(?P<n>\d+)$", f)
        if not m or not version:
            continue
        n = int(m.group("n"))
        own = int(version.split(".")[0])
        # a library numbered as its wheel's CUDA (cuBLAS 12 in -cu12) is versioned with the toolkit
        number = "cuda_major" if cu and n == int(cu.group(1)) else "own_major" if n == own else "other"
        out.append(
            {"stem": m.group("stem"), "soname": f"lib{m.group('stem')}.so.{n}", "number": number, "from": source.label}
        )
    return out


def build(sources: Sequence[Source]) -> dict[str, Any]:
    codes: dict[tuple[str, str, int], dict[str, Any]] = {}
    encodings: dict[tuple[str, int, int], dict[str, Any]] = {}
    libraries: dict[tuple[str, str], dict[str, Any]] = {}
    for source in sources:
        texts = {p: p.read_text(errors="replace") for p in source.headers()}
        for type_name, first, library, _headers in TYPES:
            for path, text in texts.items():
                if first not in text:
                    continue
                for name, value, meaning in enums_in(text, first):
                    key = (type_name, name, value)
                    row = codes.setdefault(
                        key,
                        {
                            "type": type_name,
                            "library": library,
                            "name": name,
                            "value": value,
                            "kind": kind_of(name),
                            "meaning": "",
                            "from": [],
                        },
                    )
                    if meaning and not row["meaning"]:
                        row["meaning"] = meaning
                    where = f"{source.label}: {path.name}"
                    if where not in row["from"]:
                        row["from"].append(where)
        for path, text in texts.items():
            for enc in encodings_in(text, source.label.partition("==")[2]):
                key = (enc["macro"], enc["major"], enc["minor"])
                row = encodings.setdefault(key, {**enc, "from": []})
                row["from"].append(f"{source.label}: {path.name}")
        for lib in _soname_facts(source):
            row = libraries.setdefault(
                (lib["stem"], lib["number"]), {"stem": lib["stem"], "number": lib["number"], "seen": []}
            )
            row["seen"].append(f"{lib['soname']} ({source.label})")
    return {
        "sources": [{"label": s.label, "url": s.url} for s in sources],
        "codes": sorted(codes.values(), key=lambda r: ([t[0] for t in TYPES].index(r["type"]), r["value"], r["name"])),
        "encodings": sorted(encodings.values(), key=lambda r: (r["macro"], r["major"])),
        "libraries": sorted(libraries.values(), key=lambda r: (r["stem"].lower(), r["number"])),
    }


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(data: dict[str, Any]) -> str:
    lines = [
        "# NVIDIA's vocabulary: status codes, version encodings and library file names, read from NVIDIA's headers",
        "# and wheels. GENERATED by scripts/build_vocabulary.py: do not edit by hand, run it again.",
        '# [[code]] kind: what dnnresolve makes of a code (the rules: KIND_RULES in the script); "ok" is success.',
        "# `from` names the package (and version) and header each fact was read from; [[source]] gives their pages.",
        "",
    ]
    for s in data["sources"]:
        lines += ["[[source]]", f"label = {_q(s['label'])}", f"url = {_q(s['url'])}", ""]
    for c in data["codes"]:
        lines += [
            "[[code]]",
            f"type = {_q(c['type'])}",
            f"library = {_q(c['library'])}",
            f"name = {_q(c['name'])}",
            f"value = {c['value']}",
            f"kind = {_q(c['kind'])}",
            f"meaning = {_q(c['meaning'])}",
            "from = [" + ", ".join(_q(f) for f in c["from"]) + "]",
        ]
        if c.get("text"):
            lines += [f"text = {_q(c['text'])}", f"text_from = {_q(c['text_from'])}"]
        lines.append("")
    for e in data["encodings"]:
        lines += [
            "[[encoding]]",
            f"macro = {_q(e['macro'])}",
            f"major = {e['major']}",
            f"minor = {e['minor']}",
            f"patch = {e['patch']}",
        ]
        if "until" in e:
            lines += [f"until = {_q(e['until'])}", f"then_major = {e['then_major']}", f"then_minor = {e['then_minor']}"]
        lines += ["from = [" + ", ".join(_q(f) for f in e["from"]) + "]", ""]
    for lib in data["libraries"]:
        lines += [
            "[[library]]",
            f"stem = {_q(lib['stem'])}",
            f"number = {_q(lib['number'])}",
            "seen = [" + ", ".join(_q(f) for f in lib["seen"]) + "]",
            "",
        ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fetch", action="store_true", help="pip download the wheels in PACKAGES (network)")
    ap.add_argument("--headers", nargs="*", default=[], metavar="DIR=LABEL", help="header trees on disk")
    ap.add_argument("--toolkit", default="/usr/local/cuda/include", help="a CUDA toolkit's include directory")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--work", help="keep the fetched headers here (and reuse them on the next run)")
    ap.add_argument("--cudart", default="/usr/local/cuda/lib64/libcudart.so", help="the runtime asked for its texts")
    ap.add_argument("--texts-only", action="store_true", help="add the runtime's texts to the --out file as it is")
    args = ap.parse_args(argv)
    cudart = Path(args.cudart)
    tk = toolkit(Path(args.toolkit))
    if args.texts_only:
        data = read_back(Path(args.out))
        n = add_texts(data, cudart, tk.label if tk else "cuda-toolkit") if cudart.exists() else 0
        Path(args.out).write_text(render(data), encoding="utf-8")
        print(f"{args.out}: {n} texts from {cudart}")
        return 0
    sources: list[Source] = []
    if tk is not None:
        sources.append(tk)
    for spec in args.headers:
        directory, _, label = spec.partition("=")
        sources.append(Source(label or directory, Path(directory), pypi_url(label) if "==" in label else ""))
    with tempfile.TemporaryDirectory(prefix="nvvocab-") as tmp:
        if args.fetch:
            sources += fetch(PACKAGES, Path(args.work or tmp))
        if not sources:
            print("no headers: give --fetch, --headers or --toolkit", file=sys.stderr)
            return 2
        data = build(sources)
    if cudart.exists():
        add_texts(data, cudart, tk.label if tk else "cuda-toolkit")
    Path(args.out).write_text(render(data), encoding="utf-8")
    print(
        f"{args.out}: {len(data['codes'])} codes, {len(data['encodings'])} encodings, "
        f"{len(data['libraries'])} libraries from {len(sources)} sources"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
