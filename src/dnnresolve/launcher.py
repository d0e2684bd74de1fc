"""The ``dnnresolve`` command: a kept answer that still holds is printed at once (``answer_cache``); otherwise
the command line runs (``cli``) and its answer is kept. Nothing beyond the smallest parts of the standard
library is imported before it is known that the command must run."""

from __future__ import annotations

import sys

from . import answer_cache


def main() -> int:
    argv = sys.argv[1:]
    key = answer_cache.question(argv)
    if key is not None:
        status = answer_cache.replay(key)
        if status is not None:
            return status
    from .cli import main as run

    if key is None:
        return run(argv)
    return answer_cache.run_and_keep(key, run, argv)
