"""pip's configured indexes put under a requirements file's own index lines (``detect.pipconf`` reads them).

A requirements file's own ``--index-url`` lines still win over this context (``IndexContext.merged``).
"""

from __future__ import annotations

from ..indexes import IndexContext, PipContext
from .interface import SourceFile


def apply(sources: list[SourceFile], ctx: PipContext) -> None:
    """Put pip's configured indexes under the index lines of each requirements file (what ``pip install -r``
    reads with this machine's pip); other formats name their own tools' indexes (uv, poetry, pipenv, a
    Dockerfile's image)."""
    if ctx.index == IndexContext():
        return
    for sf in sources:  # (merged under each line's own index where the line is judged: check._artifact)
        if sf.kind == "requirements":
            sf.pip_index = ctx.index
