"""A catalog sentence cut short in a line (an issue title, a truncated log line): the entry's ``cut`` pattern, held
to its anchors. Apart from ``loose`` so that a first question does not import the loose reading's machinery."""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .catalog import CatalogEntry

_SPACE = re.compile(r"\s+")


def cut_match(entry: CatalogEntry, text: str, first: int, min_start: int, wrapped: bool) -> re.Match[str] | None:
    """The entry's sentence cut short in ``text``, starting on its first line (``first`` characters) and holding
    one of the entry's anchors (its distinctive words), or None."""
    pattern = entry.cut
    if pattern is None:
        return None
    for m in pattern.finditer(text):
        if m.start() >= first:
            break
        if m.start() < min_start or (wrapped and m.end() <= first):
            continue
        # the anchor in the sentence's own words, not inside a value it reads: a free group before the sentence
        # ("(?P<gpu>[^\n]{0,200}?) with CUDA capability") would hold all of a line cut inside its next word
        own = m.group(0)
        for name in m.groupdict():
            if m.group(name):
                a, b = m.start(name) - m.start(), m.end(name) - m.start()
                own = own[:a] + " " * (b - a) + own[b:]
        low = _SPACE.sub(" ", own).lower()  # (a wrapped match: the anchors' spaces are line breaks here)
        if any(a in low for a in entry.anchors):
            return m
    return None
