"""A step of a plan: one copy-pasteable command, or a manual action described in words."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Step:
    kind: str  # "pip", "conda", "module", "shell", "manual"
    description: str
    argv: tuple[str, ...] = ()
    needs_root: bool = False
    env: tuple[tuple[str, str], ...] = field(default=())  # variables to export before/with the command

    @property
    def shell(self) -> str:
        """The command as one shell-quoted line (a comment for a manual step)."""
        exports = " ".join(f"{k}={_quote_value(v)}" for k, v in self.env)
        if not self.argv:
            return f"export {exports}" if exports else f"# {self.description}"
        line = shlex.join(self.argv)
        return f"export {exports} && {line}" if exports else line

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "description": self.description,
            "command": self.shell if self.argv or self.env else None,
            "argv": list(self.argv),
            "needs_root": self.needs_root,
        }


def _quote_value(value: str) -> str:
    """Shell-quote a variable's value; our own path templates keep ``$VAR`` expansion in double quotes."""
    if re.fullmatch(r"[A-Za-z0-9_/$:.{}+-]+", value):
        return f'"{value}"'
    return shlex.quote(value)
