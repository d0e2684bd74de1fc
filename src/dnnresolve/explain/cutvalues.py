"""A sentence the scanner read cut short in a short text, with a value unread that the title put elsewhere (#22):
"compute_75: Unsupported gpu architecture" is nvcc's sentence cut before its architecture, which stands first; "8.0.5
but source was compiled with: 8.1.0: Loaded runtime CuDNN library" is TensorFlow's encoded check cut short and its
dotted one whole. The value is read where it stands (``anyorder``), or by the line's loose reading of a sentence of
the same kind; the diagnosis that reads more values is kept.

Runs only after the scanner's pass over a text of a few lines (``scanner.scan``), on the sentences it read cut short
with a value unread.
"""

from __future__ import annotations

import re

from .anyorder import complete

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .catalog import CatalogEntry
    from .scanner import _Read, _Scanner

__all__ = ["fill_cut"]


def fill_cut(scanner: _Scanner, reads: list[_Read]) -> None:
    """Each sentence the scanner read cut short in a short text (``reads``), with a value its cut left unread read
    where the title put it ("compute_75: Unsupported gpu architecture"), or read by another sentence of its kind
    that the line's loose reading finds with more values ("8.0.5 but source was compiled with: 8.1.0: Loaded runtime
    CuDNN library" is TensorFlow's encoded check cut short and its dotted one whole): its diagnosis replaced by one
    with more values."""
    from .align import _ALIGNED, _Aligned
    from .datafile import built_once
    from .loose import loosen, pieces

    reading = built_once(_ALIGNED, loosen(scanner.catalog), _Aligned)
    for read in reads:
        m = read.match
        key = next((k for k, d in scanner.found.items() if d.id == read.entry.id and d.text == _shown(m)), None)
        line = m.string[m.string.rfind("\n", 0, m.start()) + 1 :].split("\n", 1)[0]
        if key is None or len(line) > 1000:
            continue
        n = next((k for k, s in enumerate(reading.sentences) if s.entry is read.entry and not s.text), None)
        more = complete(reading, n, m.string, m) if n is not None else None
        tries = [(read.entry, more)] if more is not None else []
        tries += [(e, d) for e, d, _ in pieces(scanner.catalog, line) if e.kind == read.entry.kind]
        for entry, match in tries:
            if _replaced(scanner, read, key, entry, match):
                break


def _replaced(scanner: _Scanner, read: _Read, key: tuple[object, ...], entry: CatalogEntry, m: re.Match[str]) -> bool:
    """Whether ``m`` (of ``entry``) reads more values than ``read`` (kept under ``key``): then kept in its stead."""
    from .decoders import decode

    framework = scanner._framework(entry, read.context)
    decoded = decode(m, entry, scanner.catalog, framework, cut=True)
    if decoded is None or len(decoded.found) + len(decoded.expected) <= len(read.decoded.found) + len(
        read.decoded.expected
    ):
        return False
    old = scanner.found.pop(key)
    read.entry, read.match, read.decoded, read.framework = entry, m, decoded, framework
    scanner._keep(read, old.line, tuple(old.nearby), old.nearby_from)
    return True


def _shown(m: re.Match[str]) -> str:
    return m.group(0).replace("\n", " ")
