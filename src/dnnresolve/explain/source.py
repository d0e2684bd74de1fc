"""Where the text to explain comes from: the command line, a log file (or "-"), or standard input.

Files are read lazily, line by line, so a log of any size takes constant memory. A log written by Windows
PowerShell (UTF-16 with a byte-order mark) is read as such; bytes that are not UTF-8 are replaced.
"""

from __future__ import annotations

import codecs
import io
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..errors import UserError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

    from .scanner import ScanResult

__all__ = ["open_input", "scan_log_file"]


PROGRESS_EVERY = 65536  # lines between progress reports


@contextmanager
def open_input(
    text: list[str] | None,
    file: str | None,
    stdin: TextIO | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> Iterator[tuple[str, Iterator[str]]]:
    """Yield (a name for messages, the lines). Raises UserError for input that cannot be read.

    ``on_progress`` is told how many bytes of a log file have been read, now and then."""
    stdin = stdin if stdin is not None else sys.stdin
    if text and file:
        raise UserError("give the error text or --file, not both")
    if text:
        joined = " ".join(text)
        if not joined.strip():
            raise UserError("the error text is empty")
        yield "the text given", iter(joined.splitlines() or [joined])
        return
    if file and file != "-":
        stream = _open_file(file)
        try:
            yield file, _lines(stream, file, on_progress)
        finally:
            stream.close()
        return
    if stdin.isatty() and not file:
        raise UserError("give the error text, --file LOG, or pipe it on standard input")
    buffer = getattr(stdin, "buffer", None)
    stream = io.TextIOWrapper(buffer, encoding="utf-8", errors="replace") if buffer is not None else stdin
    yield "standard input", _lines(stream, "standard input")


def scan_log_file(path: str, on_progress: Callable[[int], None] | None = None) -> ScanResult | None:
    """A UTF-8 log file scanned as bytes (the fast path for big logs); None for a UTF-16 log, which is read
    as text by ``open_input``. Raises UserError for a file that cannot be read or is not a log."""
    from .scanner import scan_file
    from .segments import LogProblem

    stream = _open_file(path)  # the same errors as a text-mode read: no such file, a directory...
    try:
        if stream.encoding == "utf-16":
            return None
    finally:
        stream.close()
    try:
        return scan_file(path, on_progress=on_progress)
    except LogProblem as exc:
        raise UserError(str(exc), path, exc.line) from exc
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror or exc}", path) from exc


def _open_file(path: str) -> TextIO:
    try:
        with open(path, "rb") as raw:
            head = raw.read(4)
        encoding = "utf-16" if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) else "utf-8-sig"
        return open(path, encoding=encoding, errors="replace", newline=None)
    except IsADirectoryError as exc:
        raise UserError("is a directory, not a log file", path) from exc
    except FileNotFoundError as exc:
        raise UserError("no such file", path) from exc
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror or exc}", path) from exc


MAX_LINE_CHARS = 16_000_000  # no log line is this long; reading on would take memory without bound


def _lines(stream: TextIO, name: str, on_progress: Callable[[int], None] | None = None) -> Iterator[str]:
    raw = getattr(stream, "buffer", None)
    try:
        number = 0
        while True:
            line = stream.readline(MAX_LINE_CHARS + 1)
            if not line:
                return
            number += 1
            if on_progress is not None and raw is not None and number % PROGRESS_EVERY == 0:
                on_progress(raw.tell())
            if number == 1 and "\x00" in line:
                raise UserError("not a text file (it holds NUL bytes)", name, 1)
            if len(line) > MAX_LINE_CHARS:
                raise UserError("line longer than 16 million characters: not a log", name, number)
            yield line
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror or exc}", name) from exc
