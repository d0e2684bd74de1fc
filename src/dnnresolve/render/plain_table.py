"""A table as lines of plain text: columns as wide as their widest cell, one space of padding either side.

The lines are the ones rich draws without colour (the same box characters; an ``"open"`` table has spaces
where a boxed one has lines), so piped output keeps its shape. A table wider than its width limit wraps its
widest columns (``layout.column_widths``), with the standard ``textwrap``; one that cannot fit so has its
widest columns cut to one common width, folding words too long for them.
"""

from __future__ import annotations

from collections.abc import Sequence

from .layout import cell_width, column_widths, wrap
from .plain import clean
from .styled import Table, text_of

__all__ = ["cell_width", "draw"]

# Per part of a table: left edge, fill, column divider, right edge.
_HEADED_BOX = {"top": "┏━┳┓", "head": "┃ ┃┃", "under_head": "┡━╇┩", "row": "│ ││", "bottom": "└─┴┘"}
_BOX = {"top": "┌─┬┐", "row": "│ ││", "bottom": "└─┴┘"}
_OPEN = {"top": "    ", "head": "    ", "under_head": " ── ", "row": "    ", "bottom": "    "}

Lines = list[str]


def draw(table: Table, width: int) -> Lines:
    """``table`` as text lines, at most ``width`` columns wide where its no-wrap columns allow."""
    head = [[clean(c.header)] for c in table.columns] if table.show_header else []
    rows = [[clean(text_of(cell)).split("\n") for cell in row] for row in table.rows]
    widths = _natural(head, rows, len(table.columns))
    cut = column_widths(table, width) or _cut(widths, [c.no_wrap for c in table.columns], width - 3 * len(widths) - 1)
    if cut != widths:
        head, *rows = [[_wrap(c, w) if w < n else c for c, w, n in zip(r, cut, widths)] for r in (head, *rows)]
        widths = cut
    box = _OPEN if table.frame == "open" else _HEADED_BOX if table.show_header else _BOX
    out = [text_of(line).rstrip() for line in wrap([clean(table.title)], width)] if table.title else []
    out.append(_rule(box["top"], widths))
    if table.show_header:
        out.extend(_row(box["head"], widths, head))
        out.append(_rule(box["under_head"], widths))
    for r in rows:
        out.extend(_row(box["row"], widths, r))
    out.append(_rule(box["bottom"], widths))
    return out


def _natural(head: Sequence[Lines], rows: Sequence[Sequence[Lines]], n: int) -> list[int]:
    return [max((cell_width(s) for r in (head, *rows) if r for s in r[i]), default=0) for i in range(n)]


def _cut(widths: Sequence[int], fixed: Sequence[bool], room: int) -> list[int]:
    """Column widths that fit in ``room``: the wrappable columns wider than a common level are cut to it (the
    columns left of the others get the level's remainder, one each); ``widths`` when they fit already."""
    if sum(widths) <= room:
        return list(widths)
    room -= sum(w for w, f in zip(widths, fixed) if f)
    free = sorted(w for w, f in zip(widths, fixed) if not f)
    for k, w in enumerate(free):  # the columns from the k-th narrowest on are cut; those before it keep theirs
        level, spare = divmod(room - sum(free[:k]), len(free) - k)
        if level < w:
            break
    else:
        return list(widths)
    out = []
    for width, f in zip(widths, fixed):
        if f or width <= level:
            out.append(width)
        else:
            out.append(max(level + (spare > 0), 1))
            spare -= 1
    return out


def _wrap(lines: Lines, width: int) -> Lines:
    import textwrap

    out: Lines = []
    for line in lines:
        for part in textwrap.wrap(line, width, break_on_hyphens=False) or [""]:
            out.extend(_fold(part, width) if not part.isascii() else [part])
    return out


def _fold(line: str, width: int) -> Lines:
    """``line`` cut into pieces ``width`` terminal columns wide (textwrap counts a wide character as one)."""
    out, piece = [], ""
    for c in line:
        if piece and cell_width(piece + c) > width:
            out.append(piece)
            piece = ""
        piece += c
    return [*out, piece]


def _rule(chars: str, widths: Sequence[int]) -> str:
    left, fill, divider, right = chars[0], chars[1], chars[2], chars[3]
    return left + divider.join(fill * (w + 2) for w in widths) + right


def _row(chars: str, widths: Sequence[int], cells: Sequence[Lines]) -> Lines:
    left, divider, right = chars[0], chars[2], chars[3]
    height = max((len(c) for c in cells), default=1)
    out = []
    for i in range(height):
        parts = []
        for lines, w in zip(cells, widths):
            text = lines[i] if i < len(lines) else ""
            parts.append(" " + text + " " * (w - cell_width(text)) + " ")
        out.append(left + divider.join(parts) + right)
    return out
