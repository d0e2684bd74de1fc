"""The `update` command's output, and the one-line note that says which matrix a command read."""

from __future__ import annotations

import sys

from .console import emit_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..matrix_source import MatrixSource
    from ..remote import UpdateResult


def emit(result: UpdateResult, as_json: bool) -> None:
    if as_json:
        emit_json(result.record())
        return
    rows = ", ".join(f"{n} {k}" for k, n in result.rows.items() if n)
    if result.status == "current":
        lines = [f"already current: {result.url} holds the matrix packaged with this dnnresolve; nothing cached"]
        if result.removed_cache:
            lines.append("removed the older cached update; commands use the packaged matrix again")
    elif result.status == "unchanged":
        lines = [f"already up to date: the cached matrix is the one at {result.url}", f"  cached at {result.path}"]
    else:
        lines = [
            f"updated the compatibility matrix from {result.url}",
            f"  sha256   {result.sha256} (verified)",
            f"  rows     {rows}",
            f"  cached   {result.path}",
        ]
    sys.stdout.write("\n".join(lines) + "\n")


def note_matrix_source(source: MatrixSource, debug: bool = False) -> None:
    """One line on stderr when a command reads a cached update, sets one aside, or --debug asks."""
    if source.origin == "cache" or debug:
        sys.stderr.write(f"dnnresolve: matrix: {source.description}\n")
    if source.note:
        sys.stderr.write(f"dnnresolve: note: {source.note}\n")
