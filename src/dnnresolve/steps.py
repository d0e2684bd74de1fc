"""A step of a plan: one copy-pasteable command, or a manual action described in words. No I/O.

``argv`` is the command as a user types it, one argument per item, never a shell string to split: a
pip step is ``python -m pip ...``; a conda step starts with ``conda``; a module step with ``module``;
a manual step has no argv. ``shell`` is the same command quoted for a POSIX shell, for display and
scripts. ``install`` runs pip steps itself and leaves the others to the user's own shell.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from .records import field, record

STEP_KINDS = ("pip", "conda", "module", "shell", "manual")


@record(frozen=True)
class Step:
    kind: str  # one of STEP_KINDS
    description: str
    argv: tuple[str, ...] = ()
    needs_root: bool = False
    env: tuple[tuple[str, str], ...] = field(default=())  # variables to export (our own path templates)
    # argv is our own template (``tar -xf cudnn-*.tar.xz -C $HOME/cudnn``): $HOME and the like expand and a file
    # pattern globs, as a user would type it; never set for argv that holds what a machine or an input said
    template: bool = False

    def __post_init__(self) -> None:
        if self.kind not in STEP_KINDS:
            raise ValueError(f"unknown step kind {self.kind!r}; expected one of {', '.join(STEP_KINDS)}")

    @classmethod
    def pip_install(cls, *args: str, description: str = "") -> Step:
        """``python -m pip install ARGS...``: requirements and options as separate items."""
        return cls("pip", description or f"install {' '.join(args)}", ("python", "-m", "pip", "install", *args))

    @property
    def shell(self) -> str:
        """The command as one shell-quoted line (a comment for a manual step)."""
        exports = " ".join(f"{k}={_quote_value(v)}" for k, v in self.env)
        if not self.argv:
            return f"export {exports}" if exports else f"# {self.description}"
        line = " ".join(_quote_template(a) for a in self.argv) if self.template else shlex.join(self.argv)
        return f"export {exports} && {line}" if exports else line

    def pip_args(self) -> list[str]:
        """The arguments after ``pip``, whether argv starts ``pip`` or ``python -m pip``."""
        argv = list(self.argv)
        if argv[:1] and argv[0] in ("pip", "pip3"):
            return argv[1:]
        if len(argv) >= 3 and argv[0].startswith("python") and argv[1:3] == ["-m", "pip"]:
            return argv[3:]
        raise ValueError(f"not a pip command: {self.shell!r}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "description": self.description,
            "command": self.shell if self.argv or self.env else None,
            "argv": list(self.argv),
            "needs_root": self.needs_root,
        }


_OUR_VARIABLES = re.compile(r"(\$(?:HOME|LD_LIBRARY_PATH|PATH|CUDA_HOME))(?![A-Za-z0-9_])")
_PLAIN = re.compile(r"[A-Za-z0-9_/:.,+@%=-]+")


_PATTERN = re.compile(r"[A-Za-z0-9_.+-]*\*[A-Za-z0-9_.+*-]*")


def _quote_template(arg: str) -> str:
    """An argument of our own template: a file pattern as it is (the shell globs it), else ``_quote_value``."""
    if _PATTERN.fullmatch(arg):
        return arg
    return _quote_value(arg) if _OUR_VARIABLES.search(arg) else shlex.quote(arg)


def _quote_value(value: str) -> str:
    """Shell-quote a variable's value. Only our own templates' variables ($HOME, $LD_LIBRARY_PATH...) expand,
    in double quotes; everything else (a path from a profile may hold ``$(...)``) is quoted literally."""
    out, run = [], ""
    for piece in _OUR_VARIABLES.split(value):
        if _OUR_VARIABLES.fullmatch(piece) or _PLAIN.fullmatch(piece):
            run += piece
        elif piece:
            if run:
                out.append(f'"{run}"')
                run = ""
            out.append(shlex.quote(piece))
    if run:
        out.append(f'"{run}"')
    return "".join(out) or "''"
