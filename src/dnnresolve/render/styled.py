"""What a renderer hands a writer: lines of text spans with style hints, and tables of them.

Text here is only ever text: a ``[bold]`` in a path or a requirement's extras is printed as written. A hint
says what a span is (``"missing"``, ``"dim"``); the plain writer (``render.plain``) drops hints, the terminal
writer (``render.terminal``) turns them into rich styles. Which writer a run gets: ``render.console.writer``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple, Protocol, Union

__all__ = ["Cell", "Column", "Hint", "Piece", "Table", "Writer", "text_of"]

Hint = Literal[
    "ok",  # a check that passes
    "missing",  # a check that fails: something the machine lacks
    "warn",  # works with a caveat; a note worth reading
    "error",  # cannot work: a conflict, a framework that cannot run
    "heading",  # what a block of lines is about
    "dim",  # detail: reasons, sources, notes
    "manual",  # a step done by hand, not a command
]
Piece = Union[str, tuple[str, Hint]]  # a bare string has no hint
Cell = Union[str, Sequence[Piece]]  # a table cell; it may hold newlines


class Column(NamedTuple):
    """A table column. A long cell wraps, a word too long for the column (a URL, a path) folds across lines;
    ``no_wrap`` keeps every cell on one line."""

    header: str
    hint: Hint | None = None
    no_wrap: bool = False


class Table(NamedTuple):
    """Rows of cells under columns. ``frame``: ``"box"`` is drawn with box lines everywhere; ``"open"`` is
    boxed on a terminal and separated by spaces when piped, for grep and cut."""

    columns: Sequence[Column]
    rows: Sequence[Sequence[Cell]]
    title: str = ""
    show_header: bool = True
    frame: Literal["box", "open"] = "open"


class Writer(Protocol):
    """Where renderers send text output: a line of pieces, or a table, fitted to ``width`` columns.

    A line wraps at spaces, continuation lines ``hang`` columns in (default: its indent plus 2); a line given
    ``wrap=False`` (a shell command, to be pasted whole) is written as it is, however wide."""

    width: int

    def line(self, *pieces: Piece, hang: int | None = None, wrap: bool = True) -> None: ...

    def table(self, table: Table) -> None: ...


def text_of(pieces: Cell) -> str:
    """The characters of a cell or line, hints dropped."""
    if isinstance(pieces, str):
        return pieces
    return "".join(p if isinstance(p, str) else p[0] for p in pieces)
