"""A log file searched as bytes, in parallel: which lines hold a catalog anchor, and their line numbers.

A multi-gigabyte log is mostly noise. Decoding it line by line in Python costs more than finding the few
lines that matter, so a file is cut into byte ranges at line ends; each range is read in blocks, reduced to
its lower-cased ASCII letters (as every anchor is searched) and searched with ``bytes.find`` for a few
needles that together cover every anchor; a log repeats itself, so a block whose lines are mostly the same
letters (a training step's line without its numbers) is searched one distinct line at a time
(``_scan_block``). A line a needle hits is kept only if it holds a whole anchor.
When there is more than one range and more than one CPU, the ranges are shared with worker processes
(``python -m dnnresolve.explain.segments``); the caller gets the hits in file order with their line
numbers, and reads and decodes only the lines around each (``read_window``).

Lines end as Python's universal newlines end them: ``\\n``, ``\\r\\n`` or a lone ``\\r`` (a progress bar's
redraw), so line numbers agree with a text-mode read of the same file.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Generator, Iterator, Sequence
from itertools import accumulate
from typing import BinaryIO, NamedTuple

BLOCK = 256 << 10  # bytes read at a time by one searcher: small enough that its passes stay in the CPU cache
RANGE = 16 << 20  # bytes per unit of parallel work
MAX_WORKERS = 8
_RETRY = 16  # a block whose lines are mostly distinct: this many are searched whole before cutting again
MAX_LINE = 16_000_000  # no log line is this long; reading on would take memory without bound


class LogProblem(Exception):
    """The file is not a log: NUL bytes in its first line, or a line longer than ``MAX_LINE``."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


class RangeResult(NamedTuple):
    lines: int  # lines that start in the range
    hits: list[tuple[int, int]]  # (line index in the range, byte offset of the line)
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
    (or a whole shorter anchor), that between them occur in every anchor: greedy set cover. Each round
    takes the ``shortest``-long substring shared by most anchors not yet covered (no longer one is shared
    by more), then lengthens it while every one of those anchors still holds it, since a longer needle is
    searched faster. Each needle is one pass over the text, so fewer is faster."""
    left = sorted({letters(a) if strip else a.lower().encode() for a in anchors})
    chosen: list[bytes] = []
    while left:
        shared: dict[bytes, list[bytes]] = {}
        for a in left:
            size = min(shortest, len(a))
            for i in range(len(a) - size + 1):
                holders = shared.setdefault(a[i : i + size], [])
                if not holders or holders[-1] is not a:
                    holders.append(a)
        best = max(sorted(shared), key=lambda s: len(shared[s]))
        holders = shared[best]
        grown = True
        while grown:
            grown = False
            for longer in _one_more(best, holders[0]):
                if all(longer in h for h in holders):
                    best, grown = longer, True
                    break
        chosen.append(best)
        left = [a for a in left if best not in a]
    return tuple(chosen)


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

    @classmethod
    def of(cls, anchors: Sequence[str]) -> Needles:
        return cls(needles_for(anchors), needles_for(anchors, strip=False), tuple(a.lower().encode() for a in anchors))


def _search_block(block: bytes, needles: Needles) -> list[tuple[int, int]]:
    """(line index, offset) in ``block`` of each line that holds an anchor, in order.

    Dropping bytes could join a lone ``\r`` and a later ``\n`` into one line end, so a block holding a
    ``\r`` is searched lower-cased with every byte kept (anchors as needles); others by their letters."""
    if b"\r" in block:
        return _search_text(block, block.translate(_LOWER), needles.lowered, needles)
    return _search_text(block, block.translate(_LOWER, _NOT_LETTERS), needles.letters, needles)


def _search_text(block: bytes, text: bytes, search: Sequence[bytes], needles: Needles) -> list[tuple[int, int]]:
    """``_search_block`` once ``block`` is reduced to ``text``, which is searched for ``search``."""
    starts: set[int] = set()
    for needle in search:
        at = text.find(needle)
        while at != -1:
            start, end = _line_bounds(text, at)
            starts.add(start)
            at = text.find(needle, end)
    if not starts:
        return []
    lines = block.splitlines(keepends=True)  # only for a block with a hit: most blocks have none
    offsets = [0, *accumulate(map(len, lines))]
    out = []
    index, prev = 0, 0
    for start in sorted(starts):
        index += _terminators(text, prev, start)
        prev = start
        line = lines[index].lower()
        if any(a in line for a in needles.anchors):
            out.append((index, offsets[index]))
    return out


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
    hits: list[tuple[int, int]] = []
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
                    return RangeResult(lines, hits, too_long, lines)
                block += f.read(min(block_bytes, end - pos - len(block)))
            if pos + len(block) < end:
                block = block[: _last_end(block)]
            if pos == 0:
                first_end = min(e for e in (block.find(b"\n"), block.find(b"\r"), len(block)) if e != -1)
                if b"\x00" in block[:first_end]:
                    return RangeResult(0, hits, "not a text file (it holds NUL bytes)", 0)
            if len(block) > MAX_LINE and _longest_line(block) > MAX_LINE:
                return RangeResult(lines, hits, too_long, lines)
            found, ends, paid = _scan_block(block, needles, by_lines=retry == 0)
            retry = max(0, retry - 1) if paid or retry else _RETRY
            hits.extend((lines + index, pos + offset) for index, offset in found)
            lines += ends + (0 if block.endswith((b"\n", b"\r")) else 1)
            pos += len(block)
    return RangeResult(lines, hits, "", 0)


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


def workers() -> int:
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, usable))


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
    The generator's value (``StopIteration.value``) is the number of lines read."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        ranges = split_ranges(f, size, range_bytes)
    jobs = min(workers() if jobs is None else jobs, len(ranges))
    if jobs > 1:
        results = _in_parallel(path, ranges, needles, jobs, block_bytes)
    else:
        results = _in_turn(path, ranges, needles, block_bytes)
    first_line = 1
    for (_, end), result in zip(ranges, results):
        if result.problem:
            raise LogProblem(result.problem, first_line + result.problem_line)
        for index, offset in result.hits:
            yield first_line + index, offset
        first_line += result.lines
        if on_progress is not None:
            on_progress(end)
    return first_line - 1


def _in_turn(path: str, ranges: list[tuple[int, int]], needles: Needles, block_bytes: int) -> Iterator[RangeResult]:
    for start, end in ranges:
        yield search_range(path, start, end, needles, block_bytes)


def _in_parallel(
    path: str, ranges: list[tuple[int, int]], needles: Needles, jobs: int, block_bytes: int
) -> Iterator[RangeResult]:
    """Results in file order. The ranges are dealt into ``jobs`` contiguous shares: this process searches
    the first while worker processes (``python -m dnnresolve.explain.segments``) search the others and
    write one JSON line per range. A worker that fails leaves its share to this process."""
    shares = [ranges[i * len(ranges) // jobs : (i + 1) * len(ranges) // jobs] for i in range(jobs)]
    procs = [_start_worker(path, share, needles, block_bytes) for share in shares[1:]]
    try:
        yield from _in_turn(path, shares[0], needles, block_bytes)
        for share, proc in zip(shares[1:], procs):
            yield from _from_worker(proc, path, share, needles, block_bytes)
    finally:
        for proc in procs:
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()


def _start_worker(
    path: str, share: list[tuple[int, int]], needles: Needles, block_bytes: int
) -> subprocess.Popen[bytes] | None:
    import json
    import subprocess
    import sys

    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    job = {
        "path": path,
        "ranges": share,
        "block": block_bytes,
        "letters": [n.hex() for n in needles.letters],
        "lowered": [n.hex() for n in needles.lowered],
        "anchors": [n.hex() for n in needles.anchors],
    }
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", __name__], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
        )
    except OSError:
        return None
    assert proc.stdin is not None
    try:
        proc.stdin.write(json.dumps(job).encode())
        proc.stdin.close()
    except OSError:
        proc.kill()
        proc.wait()
        return None
    return proc


def worker_timeout(share: list[tuple[int, int]]) -> float:
    """How long a worker may take for its share: a minute, and a second per 20 MB (ten times what a slow
    machine needs); past it the worker is stopped and its share searched here."""
    return 60.0 + sum(end - start for start, end in share) / 20e6


def _from_worker(
    proc: subprocess.Popen[bytes] | None,
    path: str,
    share: list[tuple[int, int]],
    needles: Needles,
    block_bytes: int,
    timeout: float | None = None,
) -> Iterator[RangeResult]:
    done = 0
    if proc is not None:
        for result in _worker_lines(proc, worker_timeout(share) if timeout is None else timeout):
            done += 1
            yield result
            if done == len(share):
                break
        if proc.poll() is None:
            proc.kill()
        if proc.stdout is not None:
            proc.stdout.close()
        proc.wait()
    yield from _in_turn(path, share[done:], needles, block_bytes)


def _worker_lines(proc: subprocess.Popen[bytes], timeout: float) -> Iterator[RangeResult]:
    """The worker's results as it writes them, until it ends, writes something else, or runs out of time."""
    import json
    import time

    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + timeout
    pending = b""
    while True:
        if os.name == "posix":
            import select

            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return
        pending += chunk
        while b"\n" in pending:
            raw, pending = pending.split(b"\n", 1)
            try:
                lines, hits, problem, problem_line = json.loads(raw)
                yield RangeResult(int(lines), [(int(i), int(o)) for i, o in hits], str(problem), int(problem_line))
            except (ValueError, TypeError):
                return


def _worker_main() -> int:
    """A worker: the job as JSON on standard input, one JSON line per range on standard output."""
    import json
    import sys

    job = json.loads(sys.stdin.buffer.read())
    needles = Needles(
        tuple(bytes.fromhex(n) for n in job["letters"]),
        tuple(bytes.fromhex(n) for n in job["lowered"]),
        tuple(bytes.fromhex(n) for n in job["anchors"]),
    )
    out = sys.stdout.buffer
    for start, end in job["ranges"]:
        result = search_range(job["path"], int(start), int(end), needles, int(job["block"]))
        out.write(json.dumps([result.lines, result.hits, result.problem, result.problem_line]).encode() + b"\n")
        out.flush()
        if result.problem:
            break
    return 0


def read_window(f: BinaryIO, offset: int, before: int, after: int) -> tuple[list[str], int]:
    """The ``before`` lines ahead of the line at ``offset``, that line and ``after`` more, decoded as a text-mode
    read decodes them (UTF-8, bad bytes replaced, a leading byte-order mark dropped); and the index of the
    line at ``offset`` in that list."""
    back = min(offset, 1 << 16)
    f.seek(offset - back)
    head = f.read(back).splitlines()
    if offset - back > 0 and head:
        head = head[1:]  # the first may be the tail of a longer line
    head = head[-before:] if before else []
    f.seek(offset)
    tail_bytes = f.read(1 << 20)
    while len(tail_bytes) < MAX_LINE and not any(t in tail_bytes for t in (b"\n", b"\r")):
        more = f.read(1 << 20)
        if not more:
            break
        tail_bytes += more
    tail = tail_bytes.splitlines()[: after + 1]
    if offset == 0 and tail and tail[0].startswith(b"\xef\xbb\xbf"):
        tail[0] = tail[0][3:]
    if offset - back == 0 and head and head[0].startswith(b"\xef\xbb\xbf"):
        head[0] = head[0][3:]
    lines = [b.decode("utf-8", "replace") for b in (*head, *tail)]
    return lines, len(head)


if __name__ == "__main__":
    raise SystemExit(_worker_main())
