"""Wheel build step: ship the matrix and the error catalog compiled (``dnnresolve.compiled``) in place of their
TOML, so that an installation's first command parses, hashes and writes nothing. A matrix or catalog that fails
validation fails the build. The TOML stays the source: in the repository and the sdist."""

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
            from dnnresolve.compiled import compile_shipped
        finally:
            sys.path.pop(0)
        self._out = Path(tempfile.mkdtemp(prefix="dnnresolve-compiled-"))
        for made in compile_shipped(root / "data", self._out):
            build_data["force_include"][str(made)] = f"dnnresolve/data/{made.name}"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        out = getattr(self, "_out", None)
        if out is not None:
            shutil.rmtree(out, ignore_errors=True)
