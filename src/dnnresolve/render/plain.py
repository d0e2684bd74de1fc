"""Text output without rich, where rich would add nothing: output piped to a file, a CI log or another
program, or NO_COLOR set. The text is written as it is, hints dropped, fitted to the width (``COLUMNS``, else
80); nothing is parsed, so nothing needs escaping. A ``plan`` or ``explain`` in a pre-commit hook or CI job
does not pay for rich's import.
"""

from __future__ import annotations

from typing import TextIO

from .styled import Piece, Table, text_of

__all__ = ["PLAIN_WIDTH", "PlainWriter", "clean"]

PLAIN_WIDTH = 80  # piped output without COLUMNS: what a terminal, a pager or a CI log shows

# Characters that move a terminal's cursor (a carriage return from a log would hide what came before it on
# the line, once the output is read with cat or less) are dropped, as rich drops them on a terminal.
_CURSOR = dict.fromkeys((0x07, 0x08, 0x0B, 0x0C, 0x0D))


def clean(text: str) -> str:
    """``text`` without cursor-moving control characters, its tabs expanded to columns of 8."""
    return text.translate(_CURSOR).expandtabs(8)


class PlainWriter:
    """Writes lines and tables to ``stream`` as plain text, ``width`` columns wide."""

    def __init__(self, stream: TextIO, width: int = PLAIN_WIDTH) -> None:
        self.stream = stream
        self.width = width

    def line(self, *pieces: Piece, hang: int | None = None, wrap: bool = True) -> None:
        text = clean(text_of(pieces))
        if not wrap or (text.isascii() and "\n" not in text and len(text) <= self.width):
            self.stream.write(text + "\n")
            return
        from .layout import wrap as wrap_lines

        self.stream.write("".join(text_of(line).rstrip() + "\n" for line in wrap_lines([text], self.width, hang)))

    def table(self, table: Table) -> None:
        from .plain_table import draw

        self.stream.write("".join(line + "\n" for line in draw(table, self.width)))
