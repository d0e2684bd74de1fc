"""Reading a requirement file's bytes as text, with errors that name the file and line."""

from __future__ import annotations

from ..errors import UserError


def decode(data: bytes, file: str) -> str:
    """UTF-8 text (a BOM is allowed); binary data or invalid UTF-8 is a UserError at its line."""
    nul = data.find(b"\x00")
    if nul >= 0:
        raise UserError("binary data, not a text file", file, data.count(b"\n", 0, nul) + 1)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UserError(f"not valid UTF-8 (byte 0x{data[exc.start]:02x})", file, line) from exc


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def first_line(exc: Exception) -> str:
    """An exception's message without the caret diagrams some parsers add on further lines."""
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


MAX_NESTING = 100  # brackets deeper than this are no requirement file (and would exhaust a parser's recursion)


def too_deep_line(text: str, limit: int = MAX_NESTING) -> int | None:
    """The first line where ``[``/``{`` (YAML's ``- `` too) nest deeper than ``limit``, outside quoted strings;
    None when they never do. Used to name the line when a parser runs out of recursion."""
    depth, line, quote = 0, 1, ""
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
        elif quote:
            if ch == "\\" and quote == '"':
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return line
        elif ch in "]}":
            depth = max(0, depth - 1)
        i += 1
    return None
