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

_INSTALLED = re.compile(r"Successfully installed (?P<list>.+)", re.IGNORECASE)
_DIST = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*?)-(?P<version>\d[\w.+!]*)$")
_PIN = re.compile(r"(?<![\w.-])(?P<name>[A-Za-z][A-Za-z0-9._-]*)==(?P<version>\d[\w.+!]*)")
_RELEASES = (
    (re.compile(r"PyTorch version: (?P<version>\d[\w.+]*)"), "torch"),
    (re.compile(r"TensorFlow version: (?P<version>\d[\w.+]*)", re.IGNORECASE), "tensorflow"),
    (re.compile(r"^\s*jaxlib:\s+(?P<version>\d[\w.+]*)\s*$"), "jaxlib"),
    (re.compile(r"^\s*jax:\s+(?P<version>\d[\w.+]*)\s*$"), "jax"),
)
_MACHINE = (
    ("driver", re.compile(r"(?:Nvidia )?driver version:\s*(?P<value>\d{3}\.\d+(?:\.\d+)?)", re.IGNORECASE)),
    ("gpu", re.compile(r"\bGPU 0: (?P<value>[^(\n]+?)\s*(?:\(UUID.*)?$")),
    ("python", re.compile(r"^\s*Python version: (?P<value>3\.\d+)")),
    ("python", re.compile(r"^\s*python: (?P<value>3\.\d+)\.\d+")),
    ("python", re.compile(r"[/\\]python(?P<value>3\.\d+)[/\\](?:site|dist)-packages[/\\]", re.IGNORECASE)),
    ("cuda", re.compile(r"CUDA runtime version: (?P<value>\d+\.\d+)")),
)


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
        for name, version in _releases(line):
            facts.releases[canonicalize_name(name)] = (version, at)
        for key, pattern in _MACHINE:
            m = pattern.search(line)
            if m:
                facts.machine[key] = (m.group("value").strip(), at)
    return facts


def _releases(line: str) -> list[tuple[str, str]]:
    out = []
    m = _INSTALLED.search(line)
    if m:
        out += [(d.group("name"), d.group("version")) for w in m.group("list").split() if (d := _DIST.match(w))]
    out += [(p.group("name"), p.group("version")) for p in _PIN.finditer(line)]
    out += [(name, r.group("version")) for pattern, name in _RELEASES if (r := pattern.search(line))]
    return out
