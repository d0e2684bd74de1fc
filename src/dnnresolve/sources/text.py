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
