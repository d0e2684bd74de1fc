"""Credentials never reach the screen: standard output and standard error pass through ``credentials.redact``.

Every command's output, errors and notes go through one choke point instead of each render remembering to
redact: ``https://user:token@host`` in a requirements file, a log or a profile is shown as ``https://***@host``.
Text is redacted a whole line at a time, so a URL written in pieces is still caught.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from ..credentials import redact

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO


class RedactingStream:
    """A text stream that redacts credentials in URLs before passing text on to ``inner``."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        if "\n" in self._pending:
            done, _, self._pending = self._pending.rpartition("\n")
            self.inner.write(redact(done + "\n"))
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self.inner.write(redact(self._pending))
            self._pending = ""
        self.inner.flush()

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding...: the real stream's
        return getattr(self.inner, name)


@contextmanager
def redacted_output() -> Iterator[None]:
    """Redact sys.stdout and sys.stderr while the block runs; restore them after."""
    saved = sys.stdout, sys.stderr
    out, err = RedactingStream(saved[0]), RedactingStream(saved[1])
    sys.stdout, sys.stderr = out, err  # (typeshed types them TextIO | Any)
    try:
        yield
    finally:
        for stream in (out, err):
            with suppress(OSError, ValueError):  # the reader went away (a closed pipe): nothing more to say
                stream.flush()
        if sys.stdout is out:  # the BrokenPipe handler may have put devnull there
            sys.stdout = saved[0]
        sys.stderr = saved[1]
