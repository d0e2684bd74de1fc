"""Finding every known error in a text or a whole log, streamed line by line in constant memory.

Lines are examined in batches: each catalog anchor is searched (str.find) in the lower-cased batch joined
into one string, at C speed, and only lines it hits are tried against the detailed patterns of the entries
whose anchors they hold. A message may wrap over up to ``LOOKAHEAD`` more lines, so a little context is kept
before and after each batch.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable
from itertools import accumulate

from ..records import record
from .catalog import Catalog, CatalogEntry, load_catalog
from .cut import cut_match
from .decoders import Decoded, decode
from .diagnosis import Diagnosis, rank
from .reading import QUERY_MARKS, flagged, join_broken_name, normalise
from .rejoin import CONTINUATION, anchor_needles, best_reading, continuation, glue_points, score

LOOKAHEAD = 8  # more lines a wrapped message may take (a terminal 40 columns wide wraps a long one over 8)
LOOKBEHIND = 6  # lines before a message read for framework markers
BATCH = 4096  # lines per prefilter pass
MAX_DISTINCT = 500  # distinct diagnoses kept; a log cannot grow memory without bound
UNREAD_KEPT = 64  # messages remembered as reading nothing: those of the last few lines, tried again from the next
UNREAD_CHARS = 1 << 16  # (a message of longer lines is not remembered: memory stays bounded)
# a text this short is a title or a fragment (``loose``): read loosely when nothing else reads (the corpus's longest
# text has 17 lines)
LOOSE_MAX_LINES = 40
_SPACE = re.compile(r"\s+")
# What a line with encoded text holds (lower-cased): a URL escape of a printable character or a line break, an
# escaped backslash or quote, or a search link's query (spaces as "+", no escape needed)
_ESCAPE_MARKS = (*(f"%{d}" for d in "234567"), "%0a", "%0d", "%09", "\\\\", '\\"', "\\'", *QUERY_MARKS)

__all__ = ["ScanResult", "diagnose", "scan", "scan_file"]


@record
class ScanResult:
    diagnoses: list[Diagnosis]
    lines_read: int
    truncated: bool = False  # more distinct problems than MAX_DISTINCT


def diagnose(lines: Iterable[str], catalog: Catalog | None = None) -> list[Diagnosis]:
    """Every known error in ``lines``, root causes first, each with generic fixes. No I/O but the catalog."""
    return scan(lines, catalog).diagnoses


def scan(lines: Iterable[str], catalog: Catalog | None = None) -> ScanResult:
    scanner = _Scanner(catalog or load_catalog())
    buf: list[str] = []  # held lines: LOOKBEHIND before the next one to examine, the batch, LOOKAHEAD after
    base = 1  # line number of buf[0]
    nxt = 0  # index in buf of the next line to examine
    total = 0
    for raw in lines:
        buf.append(raw.rstrip("\r\n"))
        total += 1
        if len(buf) - nxt >= BATCH + LOOKAHEAD:
            nxt = scanner.examine(buf, base, nxt, len(buf) - LOOKAHEAD)
            drop = max(0, nxt - LOOKBEHIND)
            del buf[:drop]
            base += drop
            nxt -= drop
    scanner.examine(buf, base, nxt, len(buf))
    if not scanner.found and total <= LOOSE_MAX_LINES:  # a title or a fragment: read as users quote messages
        scanner.read_loosely(buf, base)
    elif scanner.cut_unread and total <= LOOSE_MAX_LINES:  # a title's values elsewhere than its sentence says
        from .cutvalues import fill_cut

        fill_cut(scanner, scanner.cut_unread)
    return ScanResult(scanner.result(), total, scanner.truncated)


def scan_file(
    path: str,
    catalog: Catalog | None = None,
    on_progress: Callable[[int], None] | None = None,
    **search: int,
) -> ScanResult:
    """``scan`` of a log file, searched as bytes (``segments``): only the lines around an anchor are decoded.

    Raises LogProblem for a file that is not a log, OSError when it cannot be read. ``search`` tunes
    ``segments.search_file`` (range_bytes, block_bytes, jobs)."""
    from .segments import Needles, read_window, search_file

    scanner = _Scanner(catalog or load_catalog())
    hits = search_file(path, Needles.of(scanner.catalog.anchors), on_progress, **search)
    try:
        with open(path, "rb") as f:
            while True:
                try:
                    line_no, offset = next(hits)
                except StopIteration as done:
                    total: int = done.value
                    break
                window, at = read_window(f, offset, LOOKBEHIND, LOOKAHEAD)
                scanner.look_at(window, line_no - at, at)
    finally:
        hits.close()  # stops the search's workers now, not when the traceback of a Ctrl-C is let go
    if not scanner.found and total <= LOOSE_MAX_LINES:  # a saved title or fragment: read as ``scan`` reads it
        with open(path, encoding="utf-8-sig", errors="replace") as f:
            scanner.read_loosely(f.read().splitlines(), 1)
    return ScanResult(scanner.result(), total, scanner.truncated)


def _norm(line: str) -> str:
    return _SPACE.sub(" ", normalise(line) if flagged(line) else line).strip()


def _with_next(first: str, following: list[str]) -> str:
    """``first`` and the lines after it read as one (lower case), both as words apart and joined where a wrap may
    have broken a word: what a line's entries are chosen by."""
    low = first.lower()
    if not following or first.endswith(" "):
        return low
    rest = [continuation(_norm(raw), first).lower() for raw in following]
    return f"{low} {' '.join(rest)}\n{low}{''.join(rest)}"


class _Read:
    """An entry's match in one reading of a message, decoded."""

    __slots__ = ("context", "decoded", "entry", "framework", "match")

    def __init__(
        self, entry: CatalogEntry, match: re.Match[str], decoded: Decoded, framework: str, context: str
    ) -> None:
        self.entry, self.match, self.decoded, self.framework, self.context = entry, match, decoded, framework, context


class _Scanner:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.found: dict[tuple[object, ...], Diagnosis] = {}
        self.truncated = False
        self.consumed_line = 0  # a match that ran into later lines: text before (line, col) is taken
        self.consumed_col = 0
        self.consumed_from = 0  # the line that match started on
        # messages tried that read nothing, by all that their reading depends on: a line is tried again from each of
        # the next few (a message a fixed-width terminal wrapped may start on it), each time the same way
        self.unread: dict[tuple[object, ...], None] = {}
        self.cut_unread: list[_Read] = []  # sentences read cut short with a value unread (``cutvalues``)

    def examine(self, buf: list[str], base: int, start: int, stop: int) -> int:
        """Try the lines buf[start:stop]; return ``stop``."""
        if start >= stop:
            return stop
        # str.find over the lower-cased batch runs at memory speed; a regex alternation of every anchor,
        # or re.IGNORECASE, is tens of times slower. lower() keeps the newlines, so rows count right.
        text = "\n".join(buf[start:stop]).lower()
        # anchors are searched with the line breaks read as spaces (same offsets), so that an anchor a wrapped
        # message breaks over two lines ("Could not load dynamic" / "library ...") is still found on its first
        flat = text.replace("\n", " ")
        hits: list[int] = []
        for anchor in self.catalog.anchors:
            at = flat.find(anchor)
            while at != -1:
                hits.append(at)
                at = flat.find(anchor, at + 1)
        hits.extend(self._decoded_hits(text))
        hits.extend(self._broken_hits(buf[start:stop]))
        hits.sort()
        rows: list[int] = []
        row, pos = start, 0
        for at in hits:
            row += text.count("\n", pos, at)
            pos = at
            if not rows or rows[-1] != row:
                rows.append(row)
        for i in rows:
            self._try_line(buf, base, i)
        return stop

    def _decoded_hits(self, text: str) -> list[int]:
        """Where lines of ``text`` (a lower-cased batch) start that hold an anchor only once decoded (URL-encoded
        or escaped text). The marks of a real escape are searched with str.find, like the anchors: a progress
        bar's "45%|" or a raw Windows path holds none, so a log full of them costs a few passes at C speed."""
        starts: set[int] = set()
        for mark in _ESCAPE_MARKS:
            at = text.find(mark)
            while at != -1:
                start = text.rfind("\n", 0, at) + 1
                end = text.find("\n", at)
                end = len(text) if end == -1 else end
                starts.add(start)
                at = text.find(mark, end)
        out: list[int] = []
        for start in starts:
            end = text.find("\n", start)
            line = text[start : len(text) if end == -1 else end]
            decoded = normalise(line)
            if decoded != line and any(a in decoded for a in self.catalog.anchors):
                out.append(start)
        return out

    def _broken_hits(self, lines: list[str]) -> list[int]:
        """Where lines of the batch ``lines`` start that hold the first part of an anchor a wrap broke, mid-word
        ("no kernel image is avail" / "able for execution") or between words behind a continuation's logger prefix
        or indentation. The lines are searched joined, each without that prefix, and with no spaces (so a break
        reads the same whether it fell on a space or inside a word), for the few needles that cover every anchor
        spelt so (``rejoin.anchor_needles``); a needle's hit counts where an anchor around it runs over a line
        end."""
        if len(lines) < 2:
            return []
        parts = [lines[0].replace(" ", "")]
        parts.extend(CONTINUATION.sub("", line.lstrip()).replace(" ", "") for line in lines[1:])
        glued = "".join(parts).lower()
        starts = [0, *accumulate(map(len, parts))]
        rows: set[int] = set()
        for needle, holders in anchor_needles(self.catalog):
            at = glued.find(needle)
            while at != -1:
                for anchor, offset in holders:
                    q = at - offset
                    if q >= 0 and glued.startswith(anchor, q):
                        k = bisect_right(starts, q) - 1
                        if q + len(anchor) > starts[k + 1]:
                            rows.add(k)
                at = glued.find(needle, at + 1)
        if not rows:
            return []
        line_starts = [0, *accumulate(len(line) + 1 for line in lines)]
        return [line_starts[k] for k in rows]

    def look_at(self, buf: list[str], base: int, i: int) -> None:
        """Try line ``buf[i]`` (line number ``base + i``), a line known to hold an anchor."""
        self._try_line(buf, base, i)

    def _try_line(self, buf: list[str], base: int, i: int, entries: list[CatalogEntry] | None = None) -> None:
        """Try the message that starts on ``buf[i]``: with the entries whose anchors it holds, or ``entries``
        (those of the next line, for a message wrapped before its anchor: "Error loading" / "...\\x.dll")."""
        line_no = base + i
        if line_no < self.consumed_line:
            return
        first = _norm(buf[i])
        wrapped = entries is not None
        if entries is None:
            low = _with_next(first, buf[i + 1 : i + 1 + LOOKAHEAD])
            entries = [e for e in self.catalog.entries if any(a in low for a in e.anchors)]
            # the message may start on the line before, with an anchor broken over the two ("libx.so.9:" /
            # "cannot open shared object file"), or a few lines before where a terminal wrapped it at a fixed
            # width (lines as long as the one before this): its entries are those of the lines read as one
            back = 1
            while back < LOOKAHEAD and i - back > 0 and len(buf[i - back - 1]) == len(buf[i - 1]) > 0:
                back += 1
            for j in range(max(0, i - back), i):
                if not entries or line_no < self.consumed_line:
                    break
                if base + j < self.consumed_line:
                    continue
                both = _with_next(_norm(buf[j]), buf[j + 1 : i + 2])
                before_entries = [e for e in self.catalog.entries if any(a in both for a in e.anchors)]
                self._try_line(buf, base, j, before_entries)
            if line_no < self.consumed_line:
                return
        if not entries:
            return
        rows, cut = [first], [0]  # cut: characters of logger prefix removed from each continuation line
        open_ends = [not buf[i][-1:].isspace()]
        for raw in buf[i + 1 : i + 1 + LOOKAHEAD]:
            line = _norm(raw)
            rest = continuation(line, first)
            rows[-1], rest = join_broken_name(rows[-1], rest)
            rows.append(rest)
            cut.append(len(line) - len(rest))
            open_ends.append(not raw[-1:].isspace())
        before = buf[max(0, i - LOOKBEHIND) : i]
        near = (*before, *rows)
        context = "\n".join(near).lower()
        min_start = self.consumed_col if line_no == self.consumed_line else 0
        # (a reading depends on the entries' frameworks, not on the rest of the lines before)
        frameworks = tuple((e.id, self._framework(e, context)) for e in entries)
        key = (tuple(rows), tuple(open_ends), min_start, wrapped, frameworks)
        if key in self.unread:
            return
        points = glue_points(rows, open_ends, self.catalog) if len(rows) > 1 else []

        def evaluate(text: str) -> tuple[tuple[int, int], list[_Read]]:
            reads = self._reads(entries, text, len(rows[0]), min_start, wrapped, context)
            values = sum(len(r.decoded.found) + len(r.decoded.expected) for r in reads)
            return score([(r.match.start(), r.match.end()) for r in reads], values, text), reads

        _, starts, reads = best_reading(rows, points, evaluate)
        if not reads and sum(map(len, rows)) <= UNREAD_CHARS:
            if len(self.unread) >= UNREAD_KEPT:
                del self.unread[next(iter(self.unread))]
            self.unread[key] = None
        # a message that goes on where the one before ended is the same wrapped line's: it is told at that
        # line, as it is when the line is not wrapped
        told = self.consumed_from if line_no == self.consumed_line else line_no
        for r in reads:
            self._keep(r, told, near, line_no - len(before))
        if reads:
            end = max(r.match.end() for r in reads)
            row = bisect_right(starts, end) - 1
            if row:
                self.consumed_line = line_no + row
                self.consumed_col = end - starts[row] + cut[row]
                self.consumed_from = told

    def _reads(
        self, entries: list[CatalogEntry], text: str, first: int, min_start: int, wrapped: bool, context: str
    ) -> list[_Read]:
        """What ``entries`` read in ``text`` (one reading of a message whose first line is ``first`` long): each
        sentence that reads whole, or else the first cut short (a title) that still reads up to where it ends."""
        reads: list[_Read] = []
        # a message starts on the first line, or on a line joined to it (the same line, wrapped); one tried from
        # the line before its anchor's starts on that line
        starts_before = first if wrapped else text.find("\n", first)
        starts_before = len(text) if starts_before == -1 else starts_before
        for entry in entries:
            if entry.decoder == "status_code" and reads:
                continue  # a sentence took this message: the code in it is no second diagnosis
            for m in entry.pattern.finditer(text):
                if m.start() >= starts_before:
                    break
                if wrapped and m.end() <= first:
                    continue  # a match of the line before alone: not this wrapped message
                if m.start() < min_start or any(m.start() < r.match.end() and r.match.start() < m.end() for r in reads):
                    continue
                read = self._read(entry, m, context)
                if read is not None:
                    reads.append(read)
        # no sentence reads whole: one cut short (a title) still reads up to where it ends; a status code is no
        # sentence, and a sentence cut short may end where the code after it on the line starts
        if all(r.entry.decoder == "status_code" for r in reads):
            head = text[: min((r.match.start() for r in reads), default=len(text))].rstrip()
            for entry in entries:
                shortened = cut_match(entry, head, min(first, len(head)), min_start, wrapped)
                read = self._read(entry, shortened, context, cut=True) if shortened else None
                if read and shortened and None in shortened.groupdict().values() and len(self.cut_unread) < 8:
                    self.cut_unread.append(read)  # (a value its sentence reads after its cut may stand before it)
                if read is not None:
                    reads.insert(0, read)
                    break
        return reads

    def _read(self, entry: CatalogEntry, m: re.Match[str], context: str, cut: bool = False) -> _Read | None:
        framework = self._framework(entry, context)
        decoded = decode(m, entry, self.catalog, framework, cut)
        if decoded is None:
            return None
        return _Read(entry, m, decoded, framework, context)

    def _keep(self, read: _Read, line_no: int, near: tuple[str, ...], first: int) -> None:
        entry, m, decoded, framework = read.entry, read.match, read.decoded, read.framework
        kind = decoded.kind or entry.kind
        source = decoded.source or entry.source
        if decoded.advice:  # a catalog entry advises on this status code: its words, steps and source
            entry = self.catalog.entry(decoded.advice)
            framework = self._framework(entry, read.context)
            source = entry.source
        key = (
            entry.id,
            framework,
            tuple(sorted(decoded.found.items())),
            tuple(sorted(decoded.expected.items())),
        )
        if key in self.found:
            self.found[key].seen_again(line_no)
            return
        if len(self.found) >= MAX_DISTINCT:
            self.truncated = True
            return
        self.found[key] = Diagnosis(
            id=entry.id,
            kind=kind,
            framework=framework or None,
            framework_name=self.catalog.framework_name(framework),
            found=decoded.found,
            expected=decoded.expected,
            summary=entry.summary,
            explanation=entry.explanation,
            source=source,
            line=line_no,
            text=m.group(0).replace("\n", " "),
            rows=decoded.rows,
            rule=decoded.rule,
            facts=decoded.facts,
            lines=[line_no],
            consequence_of=entry.consequence_of,
            nearby=near,
            nearby_from=first,
        )

    def _framework(self, entry: CatalogEntry, context: str) -> str:
        for marker in self.catalog.markers:
            applies = not entry.framework or (marker.replaces and marker.replaces == entry.framework)
            if applies and marker.contains in context:
                return marker.framework
        return entry.framework

    def read_loosely(self, buf: list[str], base: int) -> None:
        """Each line of ``buf`` (line ``base`` first) read as users quote messages (``loose``: a piece of a sentence,
        its punctuation dropped), at most one diagnosis a line; a few lines are first read as one, which stands
        where the message it reads runs over lines (a title or a message a terminal wrapped)."""
        from .rejoin import unwrapped

        rows = [_norm(raw) for raw in buf]
        if 1 < len(buf) <= 2 * LOOKAHEAD:
            self._loosely(buf, base, 0, unwrapped(buf, self.catalog))
            if any(d.text in row for d in self.found.values() for row in rows):
                self.found.clear()  # a message on one line: each line is read on its own, as below
        for i in range(0 if self.found else len(buf)):
            self._loosely(buf, base, i, rows[i])

    def _loosely(self, buf: list[str], base: int, i: int, line: str) -> None:
        from .loose import pieces

        before = buf[max(0, i - LOOKBEHIND) : i]
        context = "\n".join((*before, line)).lower()
        for entry, decoded_from, shown in pieces(self.catalog, line):
            read = self._read(entry, decoded_from, context, cut=True)
            if read is not None:
                read.match = shown
                self._keep(read, base + i, (*before, line), base + i - len(before))
                return

    def result(self) -> list[Diagnosis]:
        from .fixes import generic_fixes

        # on one line (a wrapped one read in parts too), in the catalog's order, as one reading of it finds them
        order = {e.id: n for n, e in enumerate(self.catalog.entries)}
        diagnoses = rank(sorted(self.found.values(), key=lambda d: (d.line, order.get(d.id, 0))))
        for d in diagnoses:
            d.fixes = generic_fixes(d, self.catalog)
        return diagnoses
