"""Wheel build step: ship the matrix and the error catalog compiled (``dnnresolve.compiled``), so that a fresh
installation's first command reads no TOML. A matrix or catalog that fails validation fails the build."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CompileData(BuildHookInterface):  # type: ignore[misc]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return  # an editable install reads the checkout's data, compiled into the user cache on first use
        root = Path(self.root)
        sys.path.insert(0, str(root / "src"))
        try:
            from dnnresolve.compiled import build, source_key
            from dnnresolve.explain.catalog import compile_catalog
            from dnnresolve.matrix import compile_matrix
        finally:
            sys.path.pop(0)
        out = self._out = Path(tempfile.mkdtemp(prefix="dnnresolve-compiled-"))
        for kind, name, compile_data in (
            ("matrix", "compat_matrix", compile_matrix),
            ("catalog", "error_catalog", compile_catalog),
        ):
            source = root / "data" / f"{name}.toml"
            data = source.read_bytes()
            blobs, meta = compile_data(data, str(source))
            target = out / f"{name}.compiled"
            target.write_bytes(build(kind, source_key(data), blobs, meta))
            build_data["force_include"][str(target)] = f"dnnresolve/data/{name}.compiled"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        out = getattr(self, "_out", None)
        if out is not None:
            shutil.rmtree(out, ignore_errors=True)
