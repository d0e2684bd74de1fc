"""Reading a line as it was meant: URL-encoded or JSON-escaped text decoded, a library name broken over two lines
joined again. The line scanner and the byte search's confirmation (``segments``) both read lines through here,
so they agree on which lines hold an anchor.

Decoding is for the few lines a cheap check flags (``flagged``: a ``%`` or a backslash): the rest are left as
they are, so a plain log costs nothing more.
"""

from __future__ import annotations

import re

__all__ = ["flagged", "join_broken_name", "normalise"]

# %XX of a printable ASCII character or a line break: "100%|" or "50% done" are no escapes
_PERCENT = r"%(?:[2-7][0-9A-Fa-f]|0[AaDd9])"
# %XX of one UTF-8 character beyond ASCII (a typographic quote: %C2%B4, %E2%80%98)
_PERCENT_UTF8 = r"%[C-Fc-f][0-9A-Fa-f](?:%[89ABab][0-9A-Fa-f]){1,3}"
# One escape of a JSON string or a Python repr: \\ \" \' \n \r \t \/ \uXXXX
_ESCAPE = r"\\([\\\"'nrt/]|u[0-9A-Fa-f]{4})"
# What says a line is escaped text, not a raw Windows path: an escaped backslash or quote, or a JSON string (a log
# shipped as JSON lines: {"log": "...\n..."}) whose only escapes are line breaks or \uXXXX
_ESCAPED_TEXT = r"\\[\\\"']|(?:^\s*[\[{]\s*\"|\"\s*:\s*\")[^\n]*\\(?:n|u[0-9A-Fa-f]{4})"
_UNESCAPE = {"\\": "\\", '"': '"', "'": "'", "/": "/", "n": "\n", "r": "\n", "t": " "}
_PASSES = 4  # text escaped again each time it was embedded (a docker error quoting a hook's stderr)


# A URL's query that holds text (a search link, a prefilled issue): its "+" are spaces (form encoding)
QUERY_MARKS = ("?q=", "&q=", "?query=", "&query=", "?title=", "&title=", "?body=", "&body=", "?text=", "&text=")
_QUERY = r"(?i)([?&](?:q|query|title|body|text)=)([^\s&#]+)"


def flagged(line: str) -> bool:
    """Whether ``line`` may hold encoded text (a cheap check: most log lines hold neither character)."""
    return "%" in line or "\\" in line or ("=" in line and any(m in line.lower() for m in QUERY_MARKS))


def normalise(line: str) -> str:
    """``line`` with URL escapes (``%20``, ``%3A``, a query's ``+``) and JSON or repr escapes (``\\n``, ``\\"``,
    ``\\\\``) decoded; an escaped line break becomes a real one (a caller's whitespace folding makes it a space).
    A raw Windows path (single backslashes, ``C:\\new\\lib``) is left alone: only a line that also holds an escaped
    backslash or quote is unescaped, once per level of escaping."""
    if "=" in line and re.search(_QUERY, line):  # a query's "+" is a space; its own "+" was sent as %2B
        line = re.sub(_QUERY, lambda m: m.group(1) + m.group(2).replace("+", " "), line)
    if "%" in line and re.search(_PERCENT, line):
        line = re.sub(_PERCENT, lambda m: chr(int(m.group(0)[1:], 16)), line)
        line = re.sub(_PERCENT_UTF8, _utf8, line)
    for _ in range(_PASSES):
        if "\\" not in line or not re.search(_ESCAPED_TEXT, line):
            break
        line = re.sub(_ESCAPE, _unescape, line)
    return line


def _unescape(m: re.Match[str]) -> str:
    code = m.group(1)
    return chr(int(code[1:], 16)) if len(code) == 5 else _UNESCAPE[code]


def _utf8(m: re.Match[str]) -> str:
    try:
        return bytes.fromhex(m.group(0).replace("%", "")).decode("utf-8")
    except UnicodeDecodeError:
        return m.group(0)


# A path or library name cut at the line's end ("...\torch\lib\cudnn_cnn_in"), and the rest of the name that
# opens the next line ("fer64_8.dll", "nfer.so.8"): the name is whole again only when both hold.
_CUT_TAIL = r"(?i)(?:[\\/][\w.+-]*|\b(?:lib)?(?:cu|nv)\w*)$"
_WHOLE_NAME = r"(?i)\.(?:dll|so)(?:\.\d+)*$"
_NAME_REST = r"(?i)^[\w+-]*(?:\.\d+)*\.(?:dll|so)(?:\.\d+)*\b"


def join_broken_name(line: str, following: str) -> tuple[str, str]:
    """``line`` and ``following`` with a library name broken between them joined on ``line``; as they are
    when no name is broken there."""
    if not line or line[-1].isspace() or not re.search(_CUT_TAIL, line) or re.search(_WHOLE_NAME, line):
        return line, following
    m = re.match(_NAME_REST, following)
    if m is None:
        return line, following
    return line + m.group(0), following[m.end() :].lstrip()
