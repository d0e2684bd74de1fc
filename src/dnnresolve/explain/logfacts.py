"""What the lines around a message say of the machine and the installed frameworks, for ``planned``. No I/O.

Logs people paste print versions: pip's ``Successfully installed torch-2.1.0``, ``name==version`` pins,
PyTorch's ``collect_env`` (``PyTorch version: 2.1.0+cu121``, ``Nvidia driver version: 535.104.05``,
``GPU 0: Tesla K80``), ``jax.print_environment_info()`` (``jaxlib: 0.4.30``), nvidia-smi's header
(``Driver Version: 535.104.05``) and the interpreter in a traceback's path (``python3.7/site-packages``).
Each fact keeps the line it was read from. nvidia-smi's ``CUDA Version`` is the driver's, not a toolkit's: it
is not read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..pkgname import canonicalize_name
from ..records import field, record

# Each pattern with a word its line must hold (lower case): a pattern is compiled (through re's cache) only for
# a line that holds its word, so the one-message question compiles none of those its message cannot match.
_INSTALLED = (r"Successfully installed (?P<list>.+)", re.IGNORECASE, "successfully installed")
_DIST = r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*?)-(?P<version>\d[\w.+!]*)$"
_PIN = (r"(?<![\w.-])(?P<name>[A-Za-z][A-Za-z0-9._-]*)==(?P<version>\d[\w.+!]*)", 0, "==")
_RELEASES = (
    ((r"PyTorch version: (?P<version>\d[\w.+]*)", 0, "pytorch version: "), "torch"),
    ((r"TensorFlow version: (?P<version>\d[\w.+]*)", re.IGNORECASE, "tensorflow version: "), "tensorflow"),
    ((r"^\s*jaxlib:\s+(?P<version>\d[\w.+]*)\s*$", 0, "jaxlib:"), "jaxlib"),
    ((r"^\s*jax:\s+(?P<version>\d[\w.+]*)\s*$", 0, "jax:"), "jax"),
)
_MACHINE = (
    ("driver", (r"(?:Nvidia )?driver version:\s*(?P<value>\d{3}\.\d+(?:\.\d+)?)", re.IGNORECASE, "driver version:")),
    ("gpu", (r"\bGPU 0: (?P<value>[^(\n]+?)\s*(?:\(UUID.*)?$", 0, "gpu 0: ")),
    ("python", (r"^\s*Python version: (?P<value>3\.\d+)", 0, "python version: ")),
    ("python", (r"^\s*python: (?P<value>3\.\d+)\.\d+", 0, "python: ")),
    ("python", (r"[/\\]python(?P<value>3\.\d+)[/\\](?:site|dist)-packages[/\\]", re.IGNORECASE, "-packages")),
    ("cuda", (r"CUDA runtime version: (?P<value>\d+\.\d+)", 0, "cuda runtime version: ")),
)


def _search(rule: tuple[str, int, str], line: str, low: str) -> re.Match[str] | None:
    pattern, flags, word = rule
    return re.search(pattern, line, flags) if word in low else None


@record
class LogFacts:
    """Versions the log names: releases of known packages, and parts of the machine, each with its line."""

    releases: dict[str, tuple[str, int]] = field(default_factory=dict)  # distribution -> (version, line)
    machine: dict[str, tuple[str, int]] = field(default_factory=dict)  # driver, gpu, python, cuda -> (value, line)


def read_facts(lines: Sequence[str], first: int) -> LogFacts:
    """The facts in ``lines`` (``first``: the number of the first), the last saying of each one winning (a log
    that upgrades a package names the new release after the old)."""
    facts = LogFacts()
    for at, line in enumerate(lines, first):
        low = line.lower()
        for name, version in _releases(line, low):
            facts.releases[canonicalize_name(name)] = (version, at)
        for key, rule in _MACHINE:
            m = _search(rule, line, low)
            if m:
                facts.machine[key] = (m.group("value").strip(), at)
    return facts


def _releases(line: str, low: str) -> list[tuple[str, str]]:
    out = []
    m = _search(_INSTALLED, line, low)
    if m:
        out += [(d.group("name"), d.group("version")) for w in m.group("list").split() if (d := re.match(_DIST, w))]
    if _PIN[2] in low:
        out += [(p.group("name"), p.group("version")) for p in re.finditer(_PIN[0], line)]
    out += [(name, r.group("version")) for rule, name in _RELEASES if (r := _search(rule, line, low))]
    return out
