"""A log file searched as bytes, in parallel: which lines hold a catalog anchor, and their line numbers.

A multi-gigabyte log is mostly noise. Decoding it line by line in Python costs more than finding the few
lines that matter, so a file is cut into byte ranges at line ends; each range is read in blocks, reduced to
its lower-cased ASCII letters (as every anchor is searched) and searched with ``bytes.find`` for a few
needles that together cover every anchor; a log repeats itself, so a block whose lines are mostly the same
letters (a training step's line without its numbers) is searched one distinct line at a time
(``_scan_block``). A line a needle hits is kept only if it holds a whole anchor.
When there is more than one range and more than one CPU, the ranges are shared with a pool of worker
processes (``concurrent.futures``); the caller gets the hits in file order with their line numbers, and
reads and decodes only the lines around each (``read_window``).

Lines end as Python's universal newlines end them: ``\\n``, ``\\r\\n`` or a lone ``\\r`` (a progress bar's
redraw), so line numbers agree with a text-mode read of the same file.
"""

from __future__ import annotations

import os
import re
from array import array
from collections.abc import Callable, Generator, Sequence
from itertools import accumulate
from typing import BinaryIO, NamedTuple

from .pool import in_pool, workers

BLOCK = 256 << 10  # bytes read at a time by one searcher: small enough that its passes stay in the CPU cache
RANGE = 4 << 20  # bytes per unit of parallel work: a Ctrl-C waits for the few being searched
POOL_MIN = 32 << 20  # a smaller file is searched in this process: workers cost ~20 ms, save ~1.3 ms a MB
_RETRY = 16  # a block whose lines are mostly distinct: this many are searched whole before cutting again
MAX_LINE = 16_000_000  # no log line is this long; reading on would take memory without bound


class LogProblem(Exception):
    """The file is not a log: NUL bytes in its first line, or a line longer than ``MAX_LINE``."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


class RangeResult(NamedTuple):
    lines: int  # lines that start in the range
    indices: array[int]  # of each hit line in the range (arrays: a log full of errors has millions of them)
    offsets: array[int]  # byte offset of each hit line
    problem: str  # why the file is not a log ("" when it is)
    problem_line: int  # line index in the range of that problem


# Searching is done on the letters alone, lower-cased: every other byte but the line ends is dropped, so the
# text to search shrinks by a third to a half, and an anchor ("cuda_error_no_device") is searched as its
# letters ("cudaerrornodevice"). A line hit that way is then checked against the real anchors.
_LOWER = bytes((b + 32 if 65 <= b <= 90 else b) for b in range(256))
_NOT_LETTERS = bytes(b for b in range(256) if not (97 <= _LOWER[b] <= 122) and b not in (10, 13))


def letters(text: str) -> bytes:
    """``text`` as the search sees it: lower-case ASCII letters and line ends only."""
    return text.encode("utf-8", "replace").translate(_LOWER, _NOT_LETTERS)


def needles_for(anchors: Sequence[str], shortest: int = 5, strip: bool = True) -> tuple[bytes, ...]:
    """A few substrings of the anchors (of their letters, with ``strip``), each at least ``shortest`` long
    (or a whole shorter piece), that between them occur in every anchor: greedy set cover. Each round
    takes the ``shortest``-long substring shared by most anchors not yet covered (no longer one is shared
    by more), then lengthens it while every one of those anchors still holds it, since a longer needle is
    searched faster. Each needle is one pass over the text, so fewer is faster.

    With ``strip``, a needle never spans an anchor's punctuation: URL-encoded text spells ``:`` as ``%3A``,
    whose letter would stand between the two sides (spaces, ``%20``, leave no letter)."""
    left = sorted({_pieces(a, shortest) if strip else (a.lower().encode(),) for a in anchors})
    chosen: list[bytes] = []
    while left:
        shared: dict[bytes, list[tuple[bytes, ...]]] = {}
        for a in left:
            for piece in a:
                size = min(shortest, len(piece))
                for i in range(len(piece) - size + 1):
                    holders = shared.setdefault(piece[i : i + size], [])
                    if not holders or holders[-1] is not a:
                        holders.append(a)
        best = max(sorted(shared), key=lambda s: len(shared[s]))
        holders = shared[best]
        grown = True
        while grown:
            grown = False
            home = next(p for p in holders[0] if best in p)
            for longer in _one_more(best, home):
                if all(any(longer in p for p in h) for h in holders):
                    best, grown = longer, True
                    break
        chosen.append(best)
        left = [a for a in left if not any(best in p for p in a)]
    return tuple(chosen)


def _pieces(anchor: str, shortest: int) -> tuple[bytes, ...]:
    """The runs of an anchor's letters between its punctuation (spaces do not cut a run); those of at least
    ``shortest`` letters, or the longest when none is that long."""
    runs = [letters(run) for run in re.split(r"[^A-Za-z ]+", anchor)]
    runs = [r for r in runs if r]
    if not runs:
        return (letters(anchor),)
    long = tuple(r for r in runs if len(r) >= shortest)
    return long or (max(runs, key=len),)


def _one_more(needle: bytes, anchor: bytes) -> list[bytes]:
    """``needle`` one byte longer, to the right or to the left, as it stands in ``anchor``."""
    at = anchor.find(needle)
    out = []
    if at + len(needle) < len(anchor):
        out.append(anchor[at : at + len(needle) + 1])
    if at > 0:
        out.append(anchor[at - 1 : at + len(needle)])
    return out


def _terminators(data: bytes, start: int = 0, end: int | None = None) -> int:
    stop = len(data) if end is None else end
    return data.count(b"\n", start, stop) + data.count(b"\r", start, stop) - data.count(b"\r\n", start, stop)


def _line_bounds(text: bytes, at: int) -> tuple[int, int]:
    start = max(text.rfind(b"\n", 0, at), text.rfind(b"\r", 0, at)) + 1
    ends = [e for e in (text.find(b"\n", at), text.find(b"\r", at)) if e != -1]
    return start, min(ends) if ends else len(text)


class Needles(NamedTuple):
    """What a searcher looks for: needles over the letters, needles over the lower-cased text (for a block
    with a lone ``\r``), and the lower-cased anchors that confirm a line."""

    letters: tuple[bytes, ...]
    lowered: tuple[bytes, ...]
    anchors: tuple[bytes, ...]
    # each letters needle: the anchors (as their letters) that hold it, and where (a line's first half may hold it)
    holders: dict[bytes, tuple[tuple[bytes, int], ...]]

    @classmethod
    def of(cls, anchors: Sequence[str]) -> Needles:
        found = needles_for(anchors)
        spelt = sorted({letters(a) for a in anchors})
        holders = {n: tuple((a, at) for a in spelt for at in _finds(a, n)) for n in found}
        return cls(found, needles_for(anchors, strip=False), tuple(a.lower().encode() for a in anchors), holders)


def _finds(text: bytes, needle: bytes) -> list[int]:
    out, at = [], text.find(needle)
    while at != -1:
        out.append(at)
        at = text.find(needle, at + 1)
    return out


def _search_block(block: bytes, needles: Needles) -> list[tuple[int, int]]:
    """(line index, offset) in ``block`` of each line that holds an anchor, in order.

    Dropping bytes could join a lone ``\r`` and a later ``\n`` into one line end, so a block holding a
    ``\r`` is searched lower-cased with every byte kept (anchors as needles); others by their letters."""
    if b"\r" in block:
        return _search_text(block, block.translate(_LOWER), needles.lowered, needles)
    return _search_text(block, block.translate(_LOWER, _NOT_LETTERS), needles.letters, needles)


def _search_text(block: bytes, text: bytes, search: Sequence[bytes], needles: Needles) -> list[tuple[int, int]]:
    """``_search_block`` once ``block`` is reduced to ``text``, which is searched for ``search``."""
    starts: dict[int, list[tuple[bytes, int]]] = {}  # a hit line's start: the needles found in it, and where
    for needle in search:
        at = text.find(needle)
        while at != -1:
            start, end = _line_bounds(text, at)
            starts.setdefault(start, []).append((needle, at))
            at = text.find(needle, end)
    if not starts:
        return []
    lines = block.splitlines(keepends=True)  # only for a block with a hit: most blocks have none
    offsets = [0, *accumulate(map(len, lines))]
    out = set()
    index, prev = 0, 0
    for start in sorted(starts):
        index += _terminators(text, prev, start)
        prev = start
        if _confirmed(lines[index].lower(), needles.anchors):
            out.add(index)
        elif search is needles.letters:  # an anchor a wrap broke over this line and a neighbour ("cannot op" / "en")
            out.update(index + k for k in _broken(text, start, starts[start], needles) if 0 <= index + k < len(lines))
    return [(index, offsets[index]) for index in sorted(out)]


def _broken(text: bytes, start: int, found: list[tuple[bytes, int]], needles: Needles) -> set[int]:
    """Where an anchor starts (0: on this line, -1: on the line before) that runs over this line's start or end in
    ``text`` (a block's letters), judged by the anchors that hold a needle found in the line."""
    end = text.find(b"\n", start)
    end = len(text) if end == -1 else end
    after = text.find(b"\n", end + 1)
    with_next = text[start : len(text) if after == -1 else after].replace(b"\n", b"")
    before = text.rfind(b"\n", 0, max(0, start - 1)) + 1
    with_previous = text[before:end].replace(b"\n", b"") if start else b""
    out = set()
    for needle, at in found:
        for anchor, offset in needles.holders.get(needle, ()):
            q = at - start - offset  # where the anchor would start, from this line's start
            if q >= 0 and q + len(anchor) > end - start and with_next.startswith(anchor, q):
                out.add(0)
            elif q < 0 and start - before - 1 + q >= 0 and with_previous.startswith(anchor, start - before - 1 + q):
                out.add(-1)
    return out


def _confirmed(line: bytes, anchors: Sequence[bytes]) -> bool:
    """Whether a lower-cased line holds an anchor, as it is or, when a cheap check flags it (a ``%`` or a
    backslash), once decoded as the scanner decodes it (``reading.normalise``)."""
    if any(a in line for a in anchors):
        return True
    if b"%" not in line and b"\\" not in line:
        return False
    from .reading import normalise

    decoded = normalise(line.decode("utf-8", "replace")).lower().encode("utf-8", "replace")
    return any(a in decoded for a in anchors)


def _scan_block(block: bytes, needles: Needles, by_lines: bool = True) -> tuple[list[tuple[int, int]], int, bool]:
    """``_search_block``, the number of line ends in ``block``, and whether cutting it into lines paid.

    A log repeats itself: without its digits and punctuation, a training step's line is the same letters as
    the step before. So (``by_lines``) the block's letters are cut into lines and each distinct line searched
    once: a needle holds no line end, so it occurs in some line's letters exactly when it occurs in the
    block's, and a block where none occurs is done. Otherwise, or when most lines differ (cutting did not
    pay, and the caller stops cutting for a while), the block's letters are searched as ``_search_block``
    searches them. A block holding a ``\r`` is left to ``_search_block`` itself."""
    if b"\r" in block:
        return _search_block(block, needles), _terminators(block), False
    text = block.translate(_LOWER, _NOT_LETTERS)
    paid = False
    if by_lines:
        lines = text.split(b"\n")
        distinct = set(lines)
        paid = 2 * len(distinct) <= len(lines)
        if paid:
            haystack = b"\n".join(distinct)
            if not any(needle in haystack for needle in needles.letters):
                return [], len(lines) - 1, True
    return _search_text(block, text, needles.letters, needles), text.count(b"\n"), paid


def _last_end(data: bytes) -> int:
    """Where the last whole line of ``data`` ends (0: none ends in it). A final ``\r`` does not count: its
    ``\n`` may be the next byte."""
    cut = data.rfind(b"\n") + 1
    return cut if cut else data.rfind(b"\r", 0, len(data) - 1) + 1


def search_range(path: str, start: int, end: int, needles: Needles, block_bytes: int = BLOCK) -> RangeResult:
    """The anchor lines of the lines that start in ``[start, end)``; ``start`` is 0 or just after a ``\n``
    and ``end`` is the file's size or just after a ``\n`` (``split_ranges``)."""
    indices, offsets = array("q"), array("q")
    lines = 0
    pos = start
    retry = 0  # blocks to search whole before trying to cut into distinct lines again
    too_long = "line longer than 16 million characters: not a log"
    with open(path, "rb") as f:
        while pos < end:
            f.seek(pos)
            block = f.read(min(block_bytes, end - pos))
            if not block:
                break
            while pos + len(block) < end and not _last_end(block):  # a line longer than a block
                if len(block) > MAX_LINE:
                    return RangeResult(lines, indices, offsets, too_long, lines)
                block += f.read(min(block_bytes, end - pos - len(block)))
            if pos + len(block) < end:
                block = block[: _last_end(block)]
            if pos == 0:
                first_end = min(e for e in (block.find(b"\n"), block.find(b"\r"), len(block)) if e != -1)
                if b"\x00" in block[:first_end]:
                    return RangeResult(0, indices, offsets, "not a text file (it holds NUL bytes)", 0)
            if len(block) > MAX_LINE and _longest_line(block) > MAX_LINE:
                return RangeResult(lines, indices, offsets, too_long, lines)
            found, ends, paid = _scan_block(block, needles, by_lines=retry == 0)
            retry = max(0, retry - 1) if paid or retry else _RETRY
            indices.extend(lines + index for index, _ in found)
            offsets.extend(pos + offset for _, offset in found)
            lines += ends + (0 if block.endswith((b"\n", b"\r")) else 1)
            pos += len(block)
    return RangeResult(lines, indices, offsets, "", 0)


def _longest_line(block: bytes) -> int:
    return max(len(line) for line in block.splitlines())


def split_ranges(f: BinaryIO, size: int, step: int = RANGE) -> list[tuple[int, int]]:
    """``[start, end)`` byte ranges of about ``step`` bytes, each ending just after a ``\\n`` (or at the end)."""
    bounds = [0]
    at = step
    while at < size:
        f.seek(at)
        while True:
            piece = f.read(1 << 16)
            if not piece:
                at = size
                break
            nl = piece.find(b"\n")
            if nl != -1:
                at += nl + 1
                break
            at += len(piece)
        if at >= size:
            break
        bounds.append(at)
        at += step
    bounds.append(size)
    return [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1) if bounds[i] < bounds[i + 1]]


def search_file(
    path: str,
    needles: Needles,
    on_progress: Callable[[int], None] | None = None,
    range_bytes: int = RANGE,
    block_bytes: int = BLOCK,
    jobs: int | None = None,
) -> Generator[tuple[int, int], None, int]:
    """(line number from 1, byte offset) of every line of the file that holds an anchor, in file order.

    Raises LogProblem (with its line number) for a file that is not a log; OSError as reading raises it.
    The generator's value (``StopIteration.value``) is the number of lines read. ``jobs``: worker processes
    (default: one per CPU, up to 8, for a file of ``POOL_MIN`` bytes or more); close the generator (or run it
    to the end) to stop them."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        ranges = split_ranges(f, size, range_bytes)
    if jobs is None:
        jobs = workers() if size >= POOL_MIN else 1
    jobs = min(jobs, len(ranges))
    tasks = [(path, start, end, needles, block_bytes) for start, end in ranges]
    results = in_pool(search_range, tasks, jobs) if jobs > 1 else (search_range(*task) for task in tasks)
    first_line = 1
    try:
        for (_, end), result in zip(ranges, results):
            if result.problem:
                raise LogProblem(result.problem, first_line + result.problem_line)
            for index, offset in zip(result.indices, result.offsets):
                yield first_line + index, offset
            first_line += result.lines
            if on_progress is not None:
                on_progress(end)
    finally:
        results.close()
    return first_line - 1


def read_window(f: BinaryIO, offset: int, before: int, after: int) -> tuple[list[str], int]:
    """The ``before`` lines ahead of the line at ``offset``, that line and ``after`` more, decoded as a text-mode
    read decodes them (UTF-8, bad bytes replaced, a leading byte-order mark dropped); and the index of the
    line at ``offset`` in that list. Lines are looked for within 64 KiB before ``offset`` and 1 MiB after it
    (more for a first line that long), read a few KiB at a time: a log full of errors has one window a hit."""
    head = _lines_before(f, offset, before) if before else []
    tail = _lines_from(f, offset, after + 1)
    if offset == 0 and tail and tail[0].startswith(_BOM):
        tail[0] = tail[0][3:]
    lines = [b.decode("utf-8", "replace") for b in (*head, *tail)]
    return lines, len(head)


_BOM = b"\xef\xbb\xbf"
_SMALL = 1 << 12  # bytes of a first read each side of a hit: a few dozen lines of a log


def _lines_before(f: BinaryIO, offset: int, count: int) -> list[bytes]:
    """The last ``count`` whole lines that end at ``offset`` (a line start), within 64 KiB of it."""
    size = _SMALL
    while True:
        back = min(offset, size)
        f.seek(offset - back)
        lines = f.read(back).splitlines()
        if back == offset:  # from the start of the file
            if lines and lines[0].startswith(_BOM):
                lines[0] = lines[0][3:]
            break
        lines = lines[1:]  # the first may be the tail of a longer line
        if len(lines) >= count or size >= 1 << 16:
            break
        size *= 4
    return lines[-count:]


def _lines_from(f: BinaryIO, offset: int, count: int) -> list[bytes]:
    """The first ``count`` lines from ``offset``, within 1 MiB of it (more for a first line that long)."""
    f.seek(offset)
    data = f.read(_SMALL)
    # enough when ``count`` lines end before the last byte (a last \r may be the start of \r\n)
    while _terminators(data, 0, max(0, len(data) - 1)) < count and len(data) < 1 << 20:
        more = f.read(min(len(data), (1 << 20) - len(data)))
        if not more:
            break
        data += more
    while len(data) < MAX_LINE and b"\n" not in data and b"\r" not in data:
        more = f.read(1 << 20)
        if not more:
            break
        data += more
    return data.splitlines()[:count]
