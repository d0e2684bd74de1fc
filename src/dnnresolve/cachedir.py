"""Where dnnresolve keeps its caches: ``$DNNRESOLVE_CACHE_DIR``, else the platform's user cache directory.

On Linux this is what platformdirs answers (``$XDG_CACHE_HOME`` or ``~/.cache``, then ``/dnnresolve``),
computed with ``os.path`` alone: the launcher needs it before it may import pathlib or platformdirs.
"""

from __future__ import annotations

import os
import sys

CACHE_DIR_ENV = "DNNRESOLVE_CACHE_DIR"


def user_cache_path() -> str:
    env = os.environ.get(CACHE_DIR_ENV)
    if env:
        return env
    if sys.platform.startswith("linux"):
        xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
        base = xdg if xdg and os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
        return os.path.join(base, "dnnresolve")
    import platformdirs

    return str(platformdirs.user_cache_dir("dnnresolve"))
