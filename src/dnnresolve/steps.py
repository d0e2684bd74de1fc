"""One step of a plan, as the planner produces it and `install` carries it out. No I/O.

``argv`` is the command as a user types it, one argument per item, never a shell string to split:
a pip step starts with ``pip`` (``install`` runs it as ``<this python> -m pip ...``); a conda step with
``conda`` (or ``mamba``); a module step with ``module``; a manual step may have no argv at all.
``shell`` is the same command quoted for a POSIX shell (``shlex.join``), for display and scripts.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

STEP_KINDS = ("pip", "conda", "module", "manual")


@dataclass(frozen=True)
class Step:
    kind: str  # one of STEP_KINDS
    argv: list[str] = field(default_factory=list)
    shell: str = ""
    needs_root: bool = False
    description: str = ""

    def __post_init__(self) -> None:
        if self.kind not in STEP_KINDS:
            raise ValueError(f"unknown step kind {self.kind!r}; expected one of {', '.join(STEP_KINDS)}")
        if not self.shell and self.argv:
            object.__setattr__(self, "shell", shlex.join(self.argv))

    @classmethod
    def pip_install(cls, *args: str, description: str = "") -> Step:
        """``pip install ARGS...``: requirements and options as separate items."""
        return cls("pip", ["pip", "install", *args], description=description)

    def pip_args(self) -> list[str]:
        """The arguments after ``pip``, whether argv starts ``pip`` or ``python -m pip``."""
        argv = list(self.argv)
        if argv[:1] and argv[0] in ("pip", "pip3"):
            return argv[1:]
        if len(argv) >= 3 and argv[0].startswith("python") and argv[1:3] == ["-m", "pip"]:
            return argv[3:]
        raise ValueError(f"not a pip command: {self.shell or argv!r}")
