"""pip's configuration on a machine: the package indexes its configuration files and ``PIP_*`` variables name.

pip reads, in this order, each later one overriding an earlier one's value of the same key: the global files
(``$XDG_CONFIG_DIRS``/pip/pip.conf, default /etc/xdg/pip/pip.conf, then /etc/pip.conf), the user's
(~/.pip/pip.conf, then ``$XDG_CONFIG_HOME``/pip/pip.conf, default ~/.config/pip/pip.conf; skipped when
``PIP_CONFIG_FILE`` names a file that exists), the environment's own (``sys.prefix``/pip.conf: the active virtual
or conda environment's), then ``PIP_CONFIG_FILE``; ``PIP_CONFIG_FILE=/dev/null`` loads no file at all. Within the
files ``[install]`` overrides ``[global]``, and ``PIP_INDEX_URL``, ``PIP_EXTRA_INDEX_URL``, ``PIP_FIND_LINKS`` and
``PIP_NO_INDEX`` override both (pip's ``configuration.py`` and ``cli/parser.py``). Lists are whitespace-separated.

``detect`` records it in the profile, so that a check for another machine reads that machine's configuration.
"""

from __future__ import annotations

import os

from ..indexes import IndexContext, PipContext

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

_KEYS = ("index-url", "extra-index-url", "find-links", "no-index")
_LIMIT = 1 << 20  # a pip.conf is a few lines; a larger file is not read whole


def config_files(environ: Mapping[str, str], root: str | None = None) -> list[str]:
    """pip's configuration files on this machine (or the copy of one under ``root``), in the order pip loads them
    (a later one overrides). Paths are text: detect's start-up does without pathlib."""

    def here(path: str) -> str:
        return os.path.join(root, path.lstrip(os.sep)) if root is not None and os.path.isabs(path) else path

    env_file = environ.get("PIP_CONFIG_FILE")
    if env_file == os.devnull:
        return []
    home = environ.get("HOME") or os.path.expanduser("~")
    xdg_dirs = [d for d in (environ.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(os.pathsep) if d]
    files = [os.path.join(d, "pip", "pip.conf") for d in xdg_dirs] + ["/etc/pip.conf"]
    if not (env_file and os.path.exists(here(env_file))):
        xdg_home = environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        files += [os.path.join(home, ".pip", "pip.conf"), os.path.join(xdg_home, "pip", "pip.conf")]
    prefix = environ.get("VIRTUAL_ENV") or environ.get("CONDA_PREFIX")
    if prefix:
        files.append(os.path.join(prefix, "pip.conf"))
    if env_file:
        files.append(env_file)
    return [here(f) for f in files]


def pip_context(environ: Mapping[str, str] | None = None, root: str | None = None) -> PipContext:
    """The index context of pip's configuration (files and ``PIP_*`` variables) for ``pip install``; ``root``: the
    files of the machine copied under it."""
    env = os.environ if environ is None else environ
    values: dict[str, tuple[str, str]] = {}  # key -> (value, where)
    for path in config_files(env, root):
        for key, value in _read(path).items():
            values[key] = (value, path)
    for key in _KEYS:
        value = env.get("PIP_" + key.upper().replace("-", "_"), "")
        if value.strip():
            values[key] = (value, "PIP_" + key.upper().replace("-", "_"))
    index_url = values.get("index-url", ("", ""))[0].strip()
    extra = tuple(values.get("extra-index-url", ("", ""))[0].split())
    links = tuple(values.get("find-links", ("", ""))[0].split())
    no_index = values.get("no-index", ("", ""))[0].strip().lower() in ("1", "true", "yes", "on")
    origins = tuple((key, where) for key, (value, where) in values.items() if value.strip())
    return PipContext(IndexContext(index_url, extra, links, no_index), origins)


def _read(path: str) -> dict[str, str]:
    """The index keys of one file, ``[install]`` over ``[global]``; {} for a file that is missing or not INI (pip
    itself stops on a file it cannot parse; a check goes on without it)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read(_LIMIT)
    except OSError:
        return {}
    import configparser  # (only where a file is there: plain plan runs stay lean)

    parser = configparser.RawConfigParser()
    try:
        parser.read_string(text, path)
    except configparser.Error:
        return {}
    out: dict[str, str] = {}
    for section in ("global", "install"):
        if parser.has_section(section):
            for key, value in parser.items(section):
                name = key.lower().replace("_", "-")
                if name in _KEYS and value:
                    out[name] = value
    return out
