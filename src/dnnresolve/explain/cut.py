"""A catalog sentence cut short in a line (an issue title, a truncated log line): the entry's ``cut`` pattern, held
to its anchors. Apart from ``loose`` so that a first question does not import the loose reading's machinery."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..lazyre import lazy_compile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .catalog import CatalogEntry

_SPACE = lazy_compile(r"\s+")
# Text no sentence starts in: a start pattern that matches before its end matches (nearly) anywhere, and the
# regex engine's own search is the faster way through a line
_PROBE = "~~~~~~~~ ~~~~~~~~"
_TRIES = 64  # starts tried one by one in a text, before the rest is left to the engine's search
_STARTS: dict[str, re.Pattern[str] | None] = {}


def cut_match(entry: CatalogEntry, text: str, first: int, min_start: int, wrapped: bool) -> re.Match[str] | None:
    """The entry's sentence cut short in ``text``, starting on its first line (``first`` characters) and holding
    one of the entry's anchors (its distinctive words), or None."""
    pattern = entry.cut
    if pattern is None:
        return None
    for m in _matches(pattern, _start(entry.pattern_text), text, first):
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


def _matches(pattern: re.Pattern[str], start: re.Pattern[str] | None, text: str, first: int) -> Iterator[re.Match[str]]:
    """What ``pattern.finditer(text)`` finds, up to the first match that starts at ``first`` or later (or its end).

    A reading of a message is its first line and the lines after it, and only a match that starts on the first
    line counts; yet a search goes on to the end, trying the sentence where it starts again on every later line (a
    log repeats its lines), each try as long as what the sentence reads there (a 300-digit version). So the
    pattern is tried only where ``start`` (what every match of it starts with) finds a start before ``first``.
    An empty match, or many starts, are left to the engine's search from there: the same matches, in order."""
    if start is None:
        yield from pattern.finditer(text)
        return
    pos = 0
    for _ in range(_TRIES):
        at = start.search(text, pos)
        if at is None or at.start() >= first:
            return
        m = pattern.match(text, at.start())
        if m is None:
            pos = at.start() + 1
        elif m.end() == m.start():
            break
        else:
            yield m
            pos = m.end()
    yield from pattern.finditer(text, pos)


def _start(pattern_text: str) -> re.Pattern[str] | None:
    """The compiled ``datafile.cut_start_pattern`` of a catalog regex; None where it would match nearly anywhere."""
    if pattern_text not in _STARTS:
        from .datafile import compile_pattern, cut_start_pattern

        try:
            start: re.Pattern[str] | None = compile_pattern(cut_start_pattern(pattern_text))
        except (ValueError, re.error):
            start = None
        if start is not None and (found := start.search(_PROBE)) is not None and found.start() < len(_PROBE):
            start = None
        _STARTS[pattern_text] = start
    return _STARTS[pattern_text]
