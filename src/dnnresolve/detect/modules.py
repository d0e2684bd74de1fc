"""Environment modules (Lmod or Tcl): loaded and available, each parsed into name and version.

Loaded modules come from the environment (``LOADEDMODULES``, with their files in ``_LMFILES_``).
Available ones come first from the files: each ``MODULEPATH`` directory holds ``NAME/VERSION`` or
``NAME/VERSION.lua`` modulefiles. Then from the module tool itself, which also knows hidden and
virtual modules: Lmod's ``$LMOD_CMD bash -t avail`` or the Tcl ``modulecmd bash -t avail`` (both print
the list on stderr; stdout carries shell code that is never run). The absolute paths a modulefile
mentions tell where its software lives, so the cuda and cudnn probes can look there.
"""

from __future__ import annotations

import os
import re

from ..machine import Module
from ..records import field, record
from .context import ProbeContext

_SKIP_FILES = (".version", ".modulerc", ".modulerc.lua")
_MARKERS = r"\s*(\([A-Za-z:,]+\)|<[A-Za-z:,]+>)\s*$"  # (compiled on first use, by re's cache)
_PATH_LITERAL = r"""(?<![\w$])(/[A-Za-z0-9_.+\-/]+)"""


@record
class ModulesReport:
    tool: str = ""  # "lmod", "tcl" or ""
    modules: list[Module] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # "cudnn/5.1" -> its modulefile (target path)
    mentioned: list[tuple[str, str]] = field(default_factory=list)  # (module, a directory its file names)

    def prefixes(self, name: str) -> list[tuple[str, str]]:
        """(module, directory) for each absolute directory the modulefiles of ``name`` mention."""
        return [(full, d) for full, d in self.mentioned if split_module(full)[0].lower() == name.lower()]


def split_module(text: str) -> tuple[str, str]:
    """``cudnn/5.1-cuda8.0`` -> ("cudnn", "5.1-cuda8.0"); ``cuda`` -> ("cuda", "");
    ``apps/cudnn/5.1`` (a nested name) -> ("apps/cudnn", "5.1")."""
    s = re.sub(_MARKERS, "", text.strip())
    if s.endswith((".lua", ".tcl")):
        s = s.rsplit(".", 1)[0]
    name, sep, version = s.rpartition("/")
    return (name, version) if sep else (s, "")


def _tool_argv(ctx: ProbeContext) -> tuple[str, list[str]] | None:
    lmod = ctx.env.get("LMOD_CMD", "")
    if lmod.startswith("/") and ctx.is_file(lmod):
        return "lmod", [lmod, "bash", "-t", "avail"]
    tcl = ctx.env.get("MODULES_CMD", "")
    if tcl.startswith("/") and ctx.is_file(tcl):
        return "tcl", [tcl, "bash", "-t", "avail"]
    home = ctx.env.get("MODULESHOME", "")
    modulecmd = ctx.which("modulecmd", [f"{home}/bin"] if home.startswith("/") else [])
    if modulecmd:
        return "tcl", [modulecmd, "bash", "-t", "avail"]
    return None


def start(ctx: ProbeContext) -> None:
    tool = _tool_argv(ctx)
    if tool and ctx.run_programs and ctx.env.get("MODULEPATH"):
        ctx.start(tool[1])


def probe(ctx: ProbeContext) -> ModulesReport:
    report = ModulesReport()
    loaded = [m for m in ctx.env.get("LOADEDMODULES", "").split(":") if m]
    lmfiles = [f for f in ctx.env.get("_LMFILES_", "").split(":") if f]
    seen: dict[str, Module] = {}
    for i, full in enumerate(loaded):
        name, version = split_module(full)
        seen[full] = Module(name, version, loaded=True)
        if i < len(lmfiles) and len(lmfiles) == len(loaded):
            report.files[full] = lmfiles[i]
    for full, path in _walk_modulepath(ctx):
        report.files.setdefault(full, path)
        if full not in seen:
            name, version = split_module(full)
            seen[full] = Module(name, version)
    tool = _tool_argv(ctx)
    if tool and ctx.env.get("MODULEPATH"):
        report.tool = tool[0]
        if ctx.run_programs:
            result = ctx.run(tool[1])
            if result.error or (result.returncode not in (0, None)):
                ctx.note(f"module avail ({tool[0]}): {result.why_not()}")
            else:
                for full in parse_avail(result.stderr):
                    if full not in seen:
                        name, version = split_module(full)
                        seen[full] = Module(name, version)
    report.modules = sorted(seen.values(), key=lambda m: (m.name.lower(), m.version))
    for full, path in report.files.items():
        # only CUDA-ish modulefiles are read: a site may have thousands, on a slow shared filesystem
        if not split_module(full)[0].rsplit("/", 1)[-1].lower().startswith("cud"):
            continue
        for d in _mentioned_dirs(ctx, path):
            report.mentioned.append((full, d))
    return report


def parse_avail(text: str) -> list[str]:
    """``module -t avail`` output: "DIR:" headers, "name/" group lines, then "name/version" lines."""
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.endswith(":") or line.endswith("/"):
            continue
        if " " in re.sub(_MARKERS, "", line):  # a message, not a module
            continue
        full = re.sub(_MARKERS, "", line)
        if full not in out:
            out.append(full)
    return out


def _walk_modulepath(ctx: ProbeContext) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for top in ctx.env_paths("MODULEPATH"):
        host_top = ctx.host(top)
        for dirpath, dirnames, filenames in ctx.walk(top):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            rel_dir = os.path.relpath(dirpath, host_top)
            if rel_dir == ".":
                continue  # modulefiles directly in a MODULEPATH directory are rare; a name needs a version
            for fname in sorted(filenames):
                if fname.startswith(".") or fname in _SKIP_FILES or fname.endswith("~"):
                    continue
                full = f"{rel_dir}/{fname}"
                if full.endswith(".lua"):
                    full = full[: -len(".lua")]
                found.append((full, ctx.target(os.path.join(dirpath, fname))))
            if rel_dir.count(os.sep) >= 3:
                dirnames[:] = []
    return found


def _mentioned_dirs(ctx: ProbeContext, modulefile: str) -> list[str]:
    text = ctx.read_text(modulefile) or ""
    dirs: list[str] = []
    for m in re.finditer(_PATH_LITERAL, text):
        path = m.group(1).rstrip("/")
        if path.count("/") >= 2 and ctx.is_dir(path) and path not in dirs:
            dirs.append(path)
    return dirs
