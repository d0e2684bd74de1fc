"""The real messages of tests/data/explain_messages.toml, by the page each was copied from."""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MESSAGES = Path(__file__).resolve().parent / "data" / "explain_messages.toml"


def real_message(source: str) -> str:
    """The text of the message copied from ``source``."""
    data = tomllib.loads(MESSAGES.read_text(encoding="utf-8"))
    return next(str(m["text"]) for m in data["message"] if m["source"] == source)
