"""Module-level regexes compiled when first used: compiling one costs 0.1-0.5 ms, and a first question (one message
explained, one requirement planned) uses few of those its modules define."""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class _Lazy:
    """A ``re.Pattern``'s duck: its attributes are the pattern's, compiled on the first one asked for, and kept
    on the instance (later uses pay no more than the attribute lookup)."""

    def __init__(self, pattern: str, flags: int) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:  # only for what the instance does not hold yet
        compiled = re.compile(*self.__dict__["_source"])
        value = getattr(compiled, name)
        self.__dict__[name] = value
        return value

    def __repr__(self) -> str:
        return f"lazy({self._source[0]!r})"


def lazy_compile(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)`` on first use. Use its methods and attributes only: it is not a Pattern to
    ``isinstance`` or to the ``re`` module's functions."""
    return _Lazy(pattern, flags)  # type: ignore[return-value]
