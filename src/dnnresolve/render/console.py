"""Shared output plumbing: JSON to stdout; the writer for text (rich only on a terminal); rich consoles."""

from __future__ import annotations

import json
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # rich is imported lazily: --json and piped output never pay for it
    from typing import Any, TextIO

    from rich.console import Console

    from .styled import Writer


def emit_json(data: Any) -> None:
    """JSON on standard output: indented on a terminal, one line when piped (the C encoder, several times
    faster on a big ``check`` report)."""
    indent = 2 if sys.stdout.isatty() else None
    sys.stdout.write(json.dumps(data, indent=indent, sort_keys=False, default=str))
    sys.stdout.write("\n")


def writer(stderr: bool = False) -> Writer:
    """The writer for text output: rich's on a terminal; plain text when piped or when NO_COLOR is set. Both
    fit their output to ``columns``."""
    stream = sys.stderr if stderr else sys.stdout
    if os.environ.get("NO_COLOR") or not stream.isatty():
        from .plain import PlainWriter

        return PlainWriter(stream, columns(stream))
    from .terminal import RichWriter

    return RichWriter(rich_console(stream, plain=False, width=columns(stream)))


def columns(stream: TextIO) -> int:
    """The width text output fits: ``COLUMNS`` when set (as for argparse and rich), else the terminal's, else
    80 (piped: what a pager or a CI log shows)."""
    try:
        width = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        width = 0
    if width <= 0 and stream.isatty():
        try:
            width = os.get_terminal_size(stream.fileno()).columns
        except (OSError, ValueError):
            width = 0
    return max(width, 20) if width > 0 else 80  # narrower than 20, nothing is readable: lines overflow


def console(stderr: bool = False) -> Console:
    """A rich console: colour on a terminal; plain when piped or when NO_COLOR is set."""
    stream = sys.stderr if stderr else sys.stdout
    return rich_console(stream, plain=bool(os.environ.get("NO_COLOR")) or not stream.isatty())


def rich_console(stream: TextIO, plain: bool, width: int | None = None) -> Console:
    from rich.console import Console

    return Console(
        file=stream,
        no_color=plain,
        color_system=None if plain else "auto",
        highlight=False,
        soft_wrap=plain,
        emoji=False,
        width=width or (200 if plain else None),
    )
