"""The index context pip itself is configured with on this machine: its configuration files and ``PIP_*`` variables.

pip reads, in this order, each later one overriding an earlier one's value of the same key: the global files
(``$XDG_CONFIG_DIRS``/pip/pip.conf, default /etc/xdg/pip/pip.conf, then /etc/pip.conf), the user's
(~/.pip/pip.conf, then ``$XDG_CONFIG_HOME``/pip/pip.conf, default ~/.config/pip/pip.conf; skipped when
``PIP_CONFIG_FILE`` names a file that exists), the environment's own (``sys.prefix``/pip.conf: the active virtual
or conda environment's), then ``PIP_CONFIG_FILE``; ``PIP_CONFIG_FILE=/dev/null`` loads no file at all. Within the
files ``[install]`` overrides ``[global]``, and ``PIP_INDEX_URL``, ``PIP_EXTRA_INDEX_URL``, ``PIP_FIND_LINKS`` and
``PIP_NO_INDEX`` override both (pip's ``configuration.py`` and ``cli/parser.py``). Lists are whitespace-separated.

A requirements file's own ``--index-url`` lines still win over this context (``IndexContext.merged``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ..records import record
from .interface import IndexContext, SourceFile

_KEYS = ("index-url", "extra-index-url", "find-links", "no-index")
_LIMIT = 1 << 20  # a pip.conf is a few lines; a larger file is not read whole


@record(frozen=True)
class PipContext:
    """The index context pip's configuration gives, and where each part of it was read (for notes)."""

    index: IndexContext = IndexContext()
    origins: tuple[tuple[str, str], ...] = ()  # (key, file path or variable name)

    def said(self) -> str:
        """``index-url from PIP_INDEX_URL; find-links from /etc/pip.conf``, or "" when pip's configuration names
        no index."""
        return "; ".join(f"{key} from {where}" for key, where in self.origins)


def config_files(environ: Mapping[str, str]) -> list[Path]:
    """pip's configuration files on this machine, in the order pip loads them (a later one overrides)."""
    env_file = environ.get("PIP_CONFIG_FILE")
    if env_file == os.devnull:
        return []
    home = Path(environ.get("HOME") or Path.home())
    xdg_dirs = [d for d in (environ.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(os.pathsep) if d]
    files = [Path(d) / "pip" / "pip.conf" for d in xdg_dirs] + [Path("/etc/pip.conf")]
    if not (env_file and os.path.exists(env_file)):
        xdg_home = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
        files += [home / ".pip" / "pip.conf", xdg_home / "pip" / "pip.conf"]
    prefix = environ.get("VIRTUAL_ENV") or environ.get("CONDA_PREFIX")
    if prefix:
        files.append(Path(prefix) / "pip.conf")
    if env_file:
        files.append(Path(env_file))
    return files


def pip_context(environ: Mapping[str, str] | None = None) -> PipContext:
    """The index context of pip's configuration (files and ``PIP_*`` variables) for ``pip install``."""
    env = os.environ if environ is None else environ
    values: dict[str, tuple[str, str]] = {}  # key -> (value, where)
    for path in config_files(env):
        for key, value in _read(path).items():
            values[key] = (value, str(path))
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


def _read(path: Path) -> dict[str, str]:
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
        parser.read_string(text, str(path))
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


def apply(sources: list[SourceFile], ctx: PipContext) -> None:
    """Put pip's configured indexes under the index lines of each requirements file (what ``pip install -r``
    reads with this machine's pip); other formats name their own tools' indexes (uv, poetry, pipenv, a
    Dockerfile's image)."""
    if ctx.index == IndexContext():
        return
    for sf in sources:  # (merged under each line's own index where the line is judged: check._artifact)
        if sf.kind == "requirements":
            sf.pip_index = ctx.index
