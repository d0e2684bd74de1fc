"""The values of a paraphrased title in any order (#22): a title says a sentence's words but puts its values (a
library file, an architecture, a version) where the sentence does not: first ("libcudart.so.11.0: Could not load
dynamic library", "compute_75: Unsupported gpu architecture"), or with its clauses swapped ("source was compiled
with: 8.1.0 but Loaded runtime CuDNN library: 8.0.5"). The ordered readings (``loose``, ``align``) read the
sentence's words and leave such a value unread.

Each value the reading left unread is looked for anywhere in the line, by its shape (the sentence's named group) and
by the words around it: a value whose neighbours are the sentence's words before or after that group ("compiled
with" before the version the source was built with) is that group's. A value no sentence word stands by is taken
only where nothing else could be meant: the one value of a name's shape (a file name, ``sm_86``) the line holds for
the one group of that shape left, or the last version left for the last group left once the others were read by
their words.

Runs only on a short text (a title, a fragment): what the ordered readings read there (``align.aligned``,
``align.with_values``), the words of a sentence in any order (``bag``), or a sentence the scanner read cut short with
a value unread (``cutvalues``).
"""

from __future__ import annotations

import re

from .alignwords import STOP, Unit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .align import _Aligned

__all__ = ["complete", "empty_match"]

_BEFORE, _AFTER = 3, 2  # the sentence words (and the line's) that stand by a value: before it, after it
_OPEN = "([{'\"`‘“"  # a value's brackets or quotes: the line's value starts after them
_BARE = ("22.04", "2.1", "8600", "11")  # values any number is: a group that reads one is a version's, not a name's


def complete(reading: _Aligned, n: int, line: str, m: re.Match[str]) -> re.Match[str] | None:
    """``m`` (a reading of sentence ``n`` in ``line``) with the values it left unread read anywhere in the line, or
    None where it reads no more."""
    units = reading.units[n]
    values = [(i, u) for i, u in enumerate(units) if u.group is not None and u.name]
    read = {name: m.span(name) for name, v in m.groupdict().items() if v}
    unread = [(i, u) for i, u in values if u.name not in read]
    if not unread:
        return None
    tokens = [(t.group(0).lower(), t.start(), t.end()) for t in _TOKEN.finditer(line)]
    stems = [_stem(w) for w, _, _ in tokens]
    said = [(j, s) for j, s in enumerate(stems) if s and s not in STOP]  # (the words a sentence's units are)
    taken = list(read.values())
    # (score, group, span) of every value of an unread group's shape, outside the values read
    found: list[tuple[float, int, str, tuple[int, int]]] = []
    for i, u in unread:
        assert u.group is not None
        near = _near(reading, units, i)
        # a version's word is the one before it ("version 8.0.5", "compiled with: 8.1.0"); a word after a number is
        # the next thing the line names ("torch 2.0 and torchvision 0.15"). A name ("sm_86 is not") is told either way
        bare = any(_bare(u, x) for x in _BARE)
        for k, (_, start, _) in enumerate(tokens):
            if start and (line[start - 1].isalnum() or line[start - 1] in "_.-"):
                continue  # inside a word ("75" of "compute_75")
            at = start - 1 if start and line[start - 1] in _OPEN else start
            v = u.group.match(line, at) or (u.group.match(line, start) if at != start else None)
            if v is None or not v.group(0).strip():
                continue
            span = _trimmed(line, v.span())
            if any(_overlap(span, s) for s in taken) or line[span[1] : span[1] + 1].isalnum():
                continue
            before = [s for j, s in said if j < k][-_BEFORE:]
            after = [s for j, s in said if tokens[j][1] >= span[1]][:_AFTER]
            # the sentence's word right beside the value is the line's right beside it, and the other words near
            # weigh in ("compiled with" before the version the source was built with; not "torchvision 0.15")
            if (near[0] and before and near[0][-1] == before[-1]) or (
                not bare and near[1] and after and near[1][0] == after[0]
            ):
                score = sum(reading.weight.get(s, 0.0) for s in set(near[0]) & set(before))
                score += sum(reading.weight.get(s, 0.0) for s in set(near[1]) & set(after))
                found.append((score, i, u.name, span))
            else:
                found.append((0.0, i, u.name, span))
    added: dict[str, tuple[int, int]] = {}
    for score, _, name, span in sorted(found, key=lambda f: (-f[0], f[3])):
        if score > 0 and name not in added and not any(_overlap(span, s) for s in [*taken, *added.values()]):
            added[name] = span
    left = [(i, u) for i, u in unread if u.name not in added]
    left = [(i, u) for i, u in left if not u.optional] or left  # (not a group the sentence may leave out)
    if len(left) == 1:
        (i, u), spans = left[0], {f[3] for f in found if f[1] == left[0][0]}
        spans = {s for s in spans if not any(_overlap(s, t) for t in [*taken, *added.values()])}
        bare = any(_bare(u, x) for x in _BARE)
        if len(spans) == 1 and (not bare or (added and len(values) > 1)):
            added[u.name] = spans.pop()
    if not added:
        return None
    return _match(line, m, {**read, **added}, units)


_TOKEN = re.compile(r"[A-Za-z]{2,}|\d+(?:\.\d+)*")


def _stem(word: str) -> str:
    from .alignwords import stem

    return stem(word) if not word[0].isdigit() else ""


def _near(reading: _Aligned, units: list[Unit], i: int) -> tuple[list[str], list[str]]:
    """The stems of the sentence words that stand by its value ``i``: a few before it, a few after it (nearest last,
    nearest first)."""
    before = [u.stem for u in units[:i] if u.stem and u.group is None][-_BEFORE:]
    after = [u.stem for u in units[i + 1 :] if u.stem and u.group is None][:_AFTER]
    return before, after


def _trimmed(line: str, span: tuple[int, int]) -> tuple[int, int]:
    """``span`` without the punctuation a value's loose group reads after it where a title puts the value first
    ("libcudart.so.11.0: Could not load")."""
    start, end = span
    while end - start > 1 and line[end - 1] in _CLOSE:
        end -= 1
    return start, end


_CLOSE = ":;,.)]}'\"`’”"


def _bare(unit: Unit, text: str) -> bool:
    assert unit.group is not None
    return unit.group.fullmatch(text) is not None


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _match(line: str, m: re.Match[str], spans: dict[str, tuple[int, int]], units: list[Unit]) -> re.Match[str]:
    """A match of ``line`` over ``m`` and the values read, whose named groups are those values (in any order: each a
    look-ahead from the match's start), the sentence's other groups unread."""
    start = min(m.start(), *(a for a, _ in spans.values()))
    end = max(m.end(), *(b for _, b in spans.values()))
    return _spanning(line, start, end, spans, units)


def empty_match(line: str, start: int, end: int, units: list[Unit]) -> re.Match[str]:
    """A match of ``line[start:end]`` whose named groups (the sentence's) are all unread."""
    return _spanning(line, start, end, {}, units)


def _spanning(line: str, start: int, end: int, spans: dict[str, tuple[int, int]], units: list[Unit]) -> re.Match[str]:
    """A match of ``line[start:end]`` whose groups named in ``spans`` read those spans, the units' others none."""
    parts = [f"(?=.{{{a - start}}}(?P<{name}>.{{{b - a}}}))" for name, (a, b) in spans.items()]
    parts.append(f".{{{end - start}}}")
    names = set(spans)
    for u in units:
        if u.name and u.name not in names:
            names.add(u.name)
            parts.append(f"(?:(?!)(?P<{u.name}>))?")
    made = re.compile("".join(parts), re.DOTALL).match(line, start)
    assert made is not None  # (the spans are the line's own)
    return made
