"""Line numbers for TOML entries: tomllib gives values, not positions, so we scan the text.

A table's span runs from its ``[header]`` to the next header; within it, a key is a line starting with
the key and ``=``, and an array entry is the quoted string. Searches start after a given line so that
repeated strings in different groups find their own line.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import UserError
from ..schema import toml_loads
from .text import too_deep_line

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")


def load_toml(text: str, file: str) -> dict[str, Any]:
    try:
        return toml_loads(text)
    except RecursionError as exc:
        raise UserError("not valid TOML: nested too deeply", file, too_deep_line(text)) from exc
    except Exception as exc:  # tomllib.TOMLDecodeError: "... (at line N, column M)"
        m = re.search(r"line (\d+)", str(exc))
        raise UserError(f"not valid TOML: {exc}", file, int(m.group(1)) if m else None) from exc


class TomlLines:
    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.headers: list[tuple[int, str]] = []  # (0-based index, dotted name without quotes or spaces)
        for i, line in enumerate(self.lines):
            m = _HEADER.match(line)
            if m and not line.lstrip().startswith("#"):
                name = re.sub(r"\s*\.\s*", ".", m.group(1)).replace('"', "").replace("'", "")
                self.headers.append((i, name))

    def table(self, dotted: str) -> tuple[int, int] | None:
        """0-based [start, end) of the first table with this name (the header line included)."""
        for n, (i, name) in enumerate(self.headers):
            if name == dotted:
                end = self.headers[n + 1][0] if n + 1 < len(self.headers) else len(self.lines)
                return i, end
        return None

    def key_line(self, tables: list[str], key: str, after: int = 0) -> int:
        """1-based line of ``key =`` in the first of ``tables`` that has it, or of the table header, or 0."""
        pattern = re.compile(r"^\s*(?:[\w.-]+\.)?[\"']?" + re.escape(key) + r"[\"']?\s*=", re.IGNORECASE)
        return self._search(tables, pattern, after)

    def string_line(self, tables: list[str], value: str, after: int = 0) -> int:
        pattern = re.compile(r"[\"']" + re.escape(value) + r"[\"']")
        return self._search(tables, pattern, after)

    def _search(self, tables: list[str], pattern: re.Pattern[str], after: int) -> int:
        fallback = 0
        for t in tables:
            span = self.table(t)
            if span is None:
                continue
            start, end = span
            fallback = fallback or start + 1
            for i in range(max(start, after), end):
                if pattern.search(self.lines[i]):
                    return i + 1
        return fallback


def as_list(value: Any) -> list[Any]:
    """A TOML value that should be an array; anything else (a number, a table, a string) counts as none."""
    return value if isinstance(value, list) else []
