"""Line output without rich where rich would add nothing: text piped to a file, a CI log or another
program, or NO_COLOR set. There rich prints the markup's text and no styles; reading the markup here
gives the same characters for a fraction of rich's import time (``plan`` and ``explain`` in a
pre-commit hook or CI job). Lines rich would change beyond removing markup (tabs, control codes)
are still handed to rich, as is everything on a terminal.

The markup grammar is rich's: a tag is ``[`` + a letter, ``#``, ``/`` or ``@`` + text without ``[`` + ``]``;
backslashes before it escape it in pairs. ``escape`` here marks user text the way ``rich.markup.escape``
does, so one string prints the same through either console (tests compare them).
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING, Any, Protocol, TextIO

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["LineConsole", "PlainConsole", "escape", "line_console", "markup_text"]

_TAG = re.compile(r"(\\*)\[([a-z#/@][^[]*?)]")
_NEEDS_RICH = re.compile(r"[\t\x07\x08\x0b\x0c\r]")


class LineConsole(Protocol):
    """What the line renderers ask of a console: rich's ``print`` for strings."""

    def print(self, *objects: Any, markup: bool | None = None, style: str | None = None) -> None: ...


def escape(text: str) -> str:
    """``text`` with every ``[`` that would start a tag escaped, and a lone trailing backslash doubled."""

    def one(m: re.Match[str]) -> str:
        backslashes = m.group(1)
        return f"{backslashes}{backslashes}\\{m.group(0)[len(backslashes) :]}"

    out = _TAG.sub(one, text)
    if out.endswith("\\") and not out.endswith("\\\\"):
        out += "\\"
    return out


def markup_text(markup: str) -> str:
    """The characters rich prints for ``markup``: tags removed, escapes resolved, and, as rich does, a
    backslash before a ``[`` that starts no tag dropped."""
    if "[" not in markup:
        return markup
    parts: list[str] = []
    position = 0
    for m in _TAG.finditer(markup):
        start, end = m.span()
        parts.append(markup[position:start].replace("\\[", "["))  # rich reads a lone "\[" as "["
        backslashes, escaped = divmod(len(m.group(1)), 2)
        parts.append("\\" * backslashes)
        if escaped:
            parts.append(m.group(0)[len(m.group(1)) :])
        position = end
    parts.append(markup[position:].replace("\\[", "["))
    return "".join(parts)


class PlainConsole:
    """Prints markup's text to a stream; hands a line with tabs or control codes to a plain rich console."""

    no_color = True

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._rich: Console | None = None

    def print(self, *objects: Any, markup: bool | None = None, style: str | None = None) -> None:
        text = " ".join(str(o) for o in objects)
        shown = text if markup is False else markup_text(text)
        if _NEEDS_RICH.search(shown):
            self.rich().print(*objects, markup=markup, style=style)
            return
        self.stream.write(shown + "\n")

    def rich(self) -> Console:
        if self._rich is None:
            from .console import rich_console

            self._rich = rich_console(self.stream, plain=True)
        return self._rich


def line_console(stderr: bool = False) -> LineConsole:
    """The console for line-by-line output: plain here when nothing would be styled, else rich's."""
    import os

    from .console import console

    stream = sys.stderr if stderr else sys.stdout
    if os.environ.get("NO_COLOR") or not stream.isatty():
        return PlainConsole(stream)
    return console(stderr)
