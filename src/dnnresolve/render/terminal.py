"""Text output on a terminal, drawn by rich: hints become rich styles, tables rich tables.

Spans become ``rich.text.Text`` directly, never markup, so text that looks like a tag prints as written.
This module imports rich; only ``render.console.writer`` imports it, and only for a terminal.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from . import layout
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
    """Prints lines and tables through a rich console, at its width."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.width = console.width

    def line(self, *pieces: Piece, hang: int | None = None, wrap: bool = True) -> None:
        # the lines are broken here, as the plain writer breaks them: rich would fold a URL, and a command that
        # is to be pasted whole is left to the terminal to show
        for line in layout.wrap(pieces, self.width, hang) if wrap else [list(pieces)]:
            self.console.print(text(line), soft_wrap=True)

    def table(self, table: Table) -> None:
        t = RichTable(
            # a Text title is drawn as given: the style rich gives a string title is asked for by name
            title=Text(table.title, style="table.title") if table.title else None,
            title_justify="left",
            show_header=table.show_header,
            box=box.HEAVY_HEAD if table.frame == "box" else box.ROUNDED,
        )
        fitted = layout.column_widths(table, self.width)
        widths: list[int | None] = list(fitted) if fitted else [None] * len(table.columns)
        for c, w in zip(table.columns, widths):
            t.add_column(
                Text(c.header), style=STYLES[c.hint] if c.hint else "", no_wrap=c.no_wrap, overflow="fold", width=w
            )
        for row in table.rows:
            t.add_row(*(text(cell) for cell in row))
        self.console.print(t)
