"""What the command handlers share: the exit statuses, the matrix a command uses, and writing a result file."""

from __future__ import annotations

import contextlib
import os
import sys

from ..errors import UserError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from ..matrix import Matrix

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2
EXIT_INTERNAL = 70  # EX_SOFTWARE: a bug of dnnresolve's own


def matrix_for(args: argparse.Namespace) -> Matrix:
    """The newest valid matrix (see matrix_source): --matrix, else a cached update unless --offline, else packaged.
    ``args.matrix_source`` keeps where it came from, for renders that add ``"matrix": source.record()``."""
    from ..matrix import load_matrix
    from ..matrix_source import resolve_source
    from ..render.update import note_matrix_source

    source = resolve_source(offline=bool(getattr(args, "offline", False)), explicit=getattr(args, "matrix", None))
    args.matrix_source = source
    note_matrix_source(source, debug=bool(getattr(args, "debug", False)))
    return load_matrix(source.path)


def write_output(text: str, path: str | None) -> None:
    """``text`` to standard output, or to the file the user named (replaced whole, or left as it was)."""
    if path is None:
        sys.stdout.write(text)
        return
    import tempfile

    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".dnnresolve-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        umask = os.umask(0o022)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # a file as any other program would write it, not mkstemp's 0600
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError, UnboundLocalError):
            os.unlink(tmp)
        raise UserError(f"{path}: cannot write ({exc.strerror or exc})") from exc
