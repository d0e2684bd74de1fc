"""Reading a requirement file's bytes as text, with errors that name the file and line."""

from __future__ import annotations

from pathlib import Path

from ..errors import UserError

MAX_LINE_BYTES = 2**20  # requirement lines are short; a megabyte is no requirement
MAX_SOURCE_BYTES = 16 * 2**20  # nor is a file of more than this


def read_source(path: Path, shown: str, what: str = "a requirement file") -> str:
    """A small text file, read with bounds: at most MAX_SOURCE_BYTES, no line over MAX_LINE_BYTES. A FIFO or a
    device is refused, never waited on."""
    from ..readfile import NotRegular, read_regular

    try:
        data = read_regular(path, MAX_SOURCE_BYTES + 1)
    except FileNotFoundError as exc:
        raise UserError("no such file", shown) from exc
    except NotRegular as exc:
        raise UserError("is a directory" if exc.kind == "directory" else str(exc), shown) from None
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror or exc}", shown) from exc
    long_line = _overlong_line(data)  # before the size: a huge line says where it is
    if long_line:
        raise UserError(f"line longer than {MAX_LINE_BYTES // 2**20} MiB: not {what}", shown, long_line)
    if len(data) > MAX_SOURCE_BYTES:
        raise UserError(f"larger than {MAX_SOURCE_BYTES // 2**20} MiB: not {what}", shown)
    return decode(data, shown)


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


def _overlong_line(data: bytes) -> int:
    """The number of the first line longer than MAX_LINE_BYTES, or 0."""
    if len(data) <= MAX_LINE_BYTES:
        return 0
    start, number = 0, 1
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        if end - start > MAX_LINE_BYTES:
            return number
        start, number = end + 1, number + 1
    return 0


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
