"""Shared output plumbing: JSON to stdout; the writer for text (rich only on a terminal); rich consoles."""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:  # rich is imported lazily: --json and piped output never pay for it
    from rich.console import Console

    from .styled import Writer


def emit_json(data: Any) -> None:
    """JSON on standard output: indented on a terminal, one line when piped (the C encoder, several times
    faster on a big ``check`` report)."""
    indent = 2 if sys.stdout.isatty() else None
    sys.stdout.write(json.dumps(data, indent=indent, sort_keys=False, default=str))
    sys.stdout.write("\n")


def writer(stderr: bool = False) -> Writer:
    """The writer for text output: rich's on a terminal; plain text when piped or when NO_COLOR is set."""
    stream = sys.stderr if stderr else sys.stdout
    if os.environ.get("NO_COLOR") or not stream.isatty():
        from .plain import PlainWriter

        return PlainWriter(stream)
    from .terminal import RichWriter

    return RichWriter(rich_console(stream, plain=False))


def console(stderr: bool = False) -> Console:
    """A rich console: colour on a terminal; plain when piped or when NO_COLOR is set."""
    stream = sys.stderr if stderr else sys.stdout
    return rich_console(stream, plain=bool(os.environ.get("NO_COLOR")) or not stream.isatty())


def rich_console(stream: TextIO, plain: bool) -> Console:
    from rich.console import Console

    return Console(
        file=stream,
        no_color=plain,
        color_system=None if plain else "auto",
        highlight=False,
        soft_wrap=plain,
        emoji=False,
        width=None if not plain else 200,
    )
