"""Text output on a terminal, drawn by rich: hints become rich styles, tables rich tables.

Spans become ``rich.text.Text`` directly, never markup, so text that looks like a tag prints as written.
This module imports rich; only ``render.console.writer`` imports it, and only for a terminal.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from .styled import Cell, Hint, Piece, Table

__all__ = ["STYLES", "RichWriter"]

STYLES: dict[Hint, str] = {
    "ok": "green",
    "missing": "red",
    "warn": "yellow",
    "error": "bold red",
    "heading": "bold",
    "dim": "dim",
    "manual": "italic",
}


def text(pieces: Cell) -> Text:
    if isinstance(pieces, str):
        return Text(pieces)
    return Text.assemble(*((p, "") if isinstance(p, str) else (p[0], STYLES[p[1]]) for p in pieces))


class RichWriter:
    """Prints lines and tables through a rich console."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def line(self, *pieces: Piece) -> None:
        self.console.print(text(pieces))

    def table(self, table: Table) -> None:
        t = RichTable(
            # a Text title is drawn as given: the style rich gives a string title is asked for by name
            title=Text(table.title, style="table.title") if table.title else None,
            title_justify="left",
            show_header=table.show_header,
            box=box.HEAVY_HEAD if table.frame == "box" else box.ROUNDED,
        )
        for c in table.columns:
            t.add_column(Text(c.header), style=STYLES[c.hint] if c.hint else "", no_wrap=c.no_wrap, overflow="fold")
        for row in table.rows:
            t.add_row(*(text(cell) for cell in row))
        self.console.print(t)
