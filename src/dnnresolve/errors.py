"""Errors a user can cause and fix: shown as one line, exit status 2, no traceback (unless --debug)."""

from __future__ import annotations


class UserError(Exception):
    """Bad input: names the file and line where it can, and says what is wrong."""

    exit_status = 2

    def __init__(self, message: str, file: str | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = f"{self.file}:{self.line}: " if self.line else f"{self.file}: "
        return f"{where}{self.message}"


class MatrixError(UserError):
    """The compatibility matrix file is malformed."""
