"""Fitting text output to a width, for both writers: lines broken at spaces with a hanging indent, a table's
column widths when it fits, fields packed into blocks where it does not, and sources as footnotes.

Nothing here imports rich: the plain writer uses it for piped output.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .styled import Cell, Hint, Piece, Table, text_of

__all__ = ["MIN_WRAP", "Footnotes", "cell_width", "column_widths", "pack", "wrap"]

MIN_WRAP = 20  # a column that wraps its cells is never cut narrower than this (or its natural width)

Run = tuple[str, "Hint | None"]
Line = list[Piece]

_SPACES = re.compile(r"( +)")


def cell_width(text: str) -> int:
    """Columns ``text`` takes on a terminal: East Asian wide characters two, combining marks none."""
    if text.isascii():
        return len(text)
    import unicodedata

    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def wrap(pieces: Sequence[Piece], width: int, hang: int | None = None) -> list[Line]:
    """``pieces`` as lines at most ``width`` columns wide, broken only at spaces: a URL, a path or a command's
    argument is never cut. Continuation lines start with ``hang`` spaces (default: the first line's indent
    plus 2); a word wider than any line stays whole, overflowing. A newline in the text starts a new
    continuation line; runs of spaces inside a line (columns of a row) are kept."""
    runs: list[Run] = [(p, None) if isinstance(p, str) else p for p in pieces]
    text = "".join(t for t, _ in runs)
    indent = len(text) - len(text.lstrip(" "))
    hang = indent + 2 if hang is None else hang
    hang = max(0, min(hang, width // 2))
    out: list[list[Run]] = []
    for n, para in enumerate(_split(runs, "\n")):
        lead = indent if n == 0 else hang
        line: list[Run] = [(" " * lead, None)] if lead else []
        used, fresh = lead, True
        for space, word in _words(para, skip=indent if n == 0 else 0):
            size = _width(word)
            # a word wider than any line (a long URL) stays on a line no fuller than a continuation line: one
            # of its own would not make it fit
            if fresh or used + cell_width(space[0]) + size <= width or (hang + size > width and used <= hang):
                if not fresh:
                    line.append(space)
                    used += cell_width(space[0])
                line.extend(word)
                used += size
                fresh = False
                continue
            out.append(line)
            line, used = [(" " * hang, None), *word], hang + size
        out.append(line)
    return [_merge(line) for line in out]


def _split(runs: list[Run], sep: str) -> list[list[Run]]:
    parts: list[list[Run]] = [[]]
    for text, hint in runs:
        for i, chunk in enumerate(text.split(sep)):
            if i:
                parts.append([])
            if chunk:
                parts[-1].append((chunk, hint))
    return parts


def _words(runs: list[Run], skip: int) -> list[tuple[Run, list[Run]]]:
    """(the spaces before it, the word) for each word of ``runs``, a word being what lies between spaces; the
    first ``skip`` leading spaces are the line's indent, written already."""
    out: list[tuple[Run, list[Run]]] = []
    space: Run = ("", None)
    word: list[Run] = []
    for text, hint in runs:
        for chunk in _SPACES.split(text):
            if not chunk:
                continue
            if chunk[0] != " ":
                word.append((chunk, hint))
                continue
            if word:
                out.append((space, word))
                word, space = [], (chunk, hint)
            elif not out:  # leading spaces: the indent
                space = (chunk[skip:], hint) if len(chunk) > skip else ("", None)
                skip = max(0, skip - len(chunk))
            else:
                space = (space[0] + chunk, hint)
    if word:
        out.append((space, word))
    return _quoted(out)


def _quoted(words: list[tuple[Run, list[Run]]]) -> list[tuple[Run, list[Run]]]:
    """The words of a command quoted in backticks (`module load cudnn/8`) joined into one, never broken."""
    out: list[tuple[Run, list[Run]]] = []
    for space, word in words:
        if out and sum(t.count("`") for t, _ in out[-1][1]) % 2:
            out[-1] = (out[-1][0], [*out[-1][1], space, *word])
        else:
            out.append((space, word))
    return out


def _width(runs: Sequence[Run]) -> int:
    return sum(cell_width(t) for t, _ in runs)


def _merge(runs: list[Run]) -> Line:
    out: Line = []
    for text, hint in runs:
        last = out[-1] if out else None
        last_hint = None if last is None or isinstance(last, str) else last[1]
        if last is not None and last_hint == hint:
            out[-1] = (text_of([last]) + text) if hint is None else (text_of([last]) + text, hint)
        else:
            out.append(text if hint is None else (text, hint))
    return out


def pack(fields: Sequence[Sequence[Piece]], width: int, indent: int = 2, sep: str = "  ") -> list[Line]:
    """Short fields side by side, ``sep`` between them, on as few lines as ``width`` allows; a field that does
    not fit on a line of its own is wrapped there (``wrap``, hanging 2 more)."""
    out: list[Line] = []
    line: Line = []
    used = 0
    for field in fields:
        size = cell_width(text_of(field))
        if line and used + len(sep) + size <= width:
            line += [sep, *field]
            used += len(sep) + size
            continue
        if line:
            out.append(line)
        if indent + size <= width:
            line, used = [" " * indent, *field], indent + size
        else:
            out.extend(wrap([" " * indent, *field], width, indent + 2))
            line, used = [], 0
    if line:
        out.append(line)
    return out


def column_widths(table: Table, width: int) -> list[int] | None:
    """Widths for ``table``'s columns that make it at most ``width`` columns wide with no word cut: the widest
    wrapping columns give way first, none below ``MIN_WRAP`` (or its natural width) or its longest word, a
    no-wrap column never. None when it cannot fit so: its rows are better written as blocks."""
    cells = _cells(table)
    natural = [max((cell_width(s) for s in col), default=0) for col in cells]
    floor = [
        n if c.no_wrap else max(min(n, MIN_WRAP), max((cell_width(w) for s in col for w in s.split()), default=0))
        for c, n, col in zip(table.columns, natural, cells)
    ]
    room = width - 3 * len(natural) - 1
    if sum(floor) > room:
        return None
    widths = list(natural)
    excess = sum(widths) - room
    while excess > 0:  # one column at a time, the widest that can still give way
        i = max((i for i in range(len(widths)) if widths[i] > floor[i]), key=lambda i: widths[i])
        widths[i] -= 1
        excess -= 1
    return widths


def _cells(table: Table) -> list[list[str]]:
    """Each column's lines of text, the header's included when shown."""
    cols: list[list[str]] = [[c.header] if table.show_header else [] for c in table.columns]
    for row in table.rows:
        for i, cell in enumerate(row):
            cols[i].extend(text_of(cell).split("\n"))
    return cols


class Footnotes:
    """Sources as numbered notes: ``mark`` gives a source its number (the same source, the same number), and
    ``lines`` lists them, for the end of the output."""

    def __init__(self) -> None:
        self.numbers: dict[str, int] = {}

    def mark(self, source: str) -> str:
        if not source:
            return ""
        return f"[{self.numbers.setdefault(source, len(self.numbers) + 1)}]"

    def lines(self) -> list[Line]:
        if not self.numbers:
            return []
        notes: list[Line] = [[f"[{n}] ", (s, "dim")] for s, n in self.numbers.items()]
        return [["Sources:"], *notes]


def cell(pieces: Cell) -> list[Piece]:
    """A cell as a list of pieces."""
    return [pieces] if isinstance(pieces, str) else list(pieces)
