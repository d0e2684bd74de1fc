"""Credentials in URLs hidden from everything dnnresolve prints: ``https://user:token@host`` -> ``https://***@host``.

Its own module, with nothing but ``re``, because every command's output passes through it
(``render.redacting``) and a start-up cannot afford the network module's imports.
"""

from __future__ import annotations

import re

_USERINFO = re.compile(r"(?<=://)[^/?#\s]*@")


def redact(text: str) -> str:
    """``https://user:pass@host/x`` -> ``https://***@host/x``, wherever a URL appears in ``text``."""
    return _USERINFO.sub("***@", text)
