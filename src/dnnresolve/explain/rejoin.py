"""Lines wrapped anywhere read as one again.

A terminal wraps a long line at a fixed width and a web page at any character, so a word, a library file name
(``libcudnn_cnn_in`` / ``fer.so.8``), a version (``12.`` / ``4``), a status code name or an environment variable
may be split over two lines, the continuation sometimes behind a repeated logger prefix or indentation. Nothing
in the text says which line breaks fell inside a token. So a break is a *glue point* only where the two halves
joined make a token the vocabulary or the catalog knows (a library file name, a status code name, a version's
spelling, a word of the catalog's sentences) that neither half is on its own; the scanner then reads the message
both ways, unjoined and joined at each combination of glue points, and keeps the reading that recognises more
(``score``), the unjoined one on a tie, so a message that reads right unjoined reads the same.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from itertools import combinations

from ..lazyre import lazy_compile
from .datafile import built_once

TYPE_CHECKING = False
if TYPE_CHECKING:  # (typing stays out of a start-up: tests/test_startup_imports.py)
    from typing import TypeVar

    from .catalog import Catalog

    T = TypeVar("T")

__all__ = [
    "CONTINUATION",
    "Lexicon",
    "anchor_needles",
    "best_reading",
    "continuation",
    "glue_points",
    "lexicon",
    "score",
    "shared_prefix",
    "unwrapped",
]

# The characters a token of NVIDIA's vocabulary is made of (file names, versions, code names, words); a quote, a
# bracket, a colon or a space ends it.
# (a comma typed for a soname's dot, "libcudart,so.11.0", stays inside the name: the vocabulary reads it so)
# _LEFT starts only where a token starts: searched from every character of a long run (a 300-digit version) it
# would run to the run's end from each, quadratic in the run; the leftmost start is never inside a run anyway
_LEFT = lazy_compile(r"(?<![\w.+@-])(?:[\w.+@-]|,(?=so\b))+$")
_RIGHT = lazy_compile(r"(?:[\w.+@-]|,(?=so\b))+")
# A version as frameworks spell it: 12.4, 8.9.2, v11.8, an encoded 8902 / 12020, cu118, cudnn91, sm_86, compute_89
_VERSION = lazy_compile(r"v?\d+(?:\.\d+)+|\d{3,6}|(?:cu|cuda|cudnn|sm_|compute_)\d+[a-z]?", re.IGNORECASE)
# What is left of a catalog regex once its syntax is dropped: the words of its sentences
_SYNTAX = lazy_compile(r"\(\?P<\w+>|\(\?P=\w+\)|\(\?[aiLmsux-]+\)|\\[A-Za-z]")
_WORD = lazy_compile(r"[A-Za-z]{2,}")
EXHAUSTIVE = 3  # glue points up to which every combination is tried (2**3 readings); more are tried in turn


class Lexicon:
    """What a token must be for a line break inside it to be joined: the catalog's words, NVIDIA's status code
    names and library file names (read by rule), and versions."""

    def __init__(self, catalog: Catalog) -> None:
        from .vocabulary import load_vocabulary

        self.catalog = catalog
        self.vocabulary = load_vocabulary()
        words: set[str] = set()
        for entry in catalog.entries:
            words.update(w.lower() for w in _WORD.findall(_SYNTAX.sub(" ", entry.pattern_text)))
            for anchor in entry.anchors:
                words.update(_WORD.findall(anchor))
        for text in self.vocabulary.texts:
            words.update(_WORD.findall(text))
        self.words = frozenset(words)

    def breaks_inside(self, left: str, right: str, row: str, following: str) -> bool:
        """Whether a break between the tokens ``left`` and ``right`` (ending ``row``, opening ``following``) may
        fall inside one:
        joined they make a token the vocabulary knows, a word of the catalog's sentences, an identifier
        (``cublasLtGetStatusString@libcublasLt.so.11``), or a path goes on; and the left one is not a whole name
        already (a library file name or a status code name that ends a line is not cut, unless digits go on:
        "libcudart.so.1" / "1.0")."""
        if self._name(left.rstrip(".-")) and not left.endswith((".", "_", "-")) and not right[:1].isdigit():
            return False
        joined = left + right
        if self.recognises(joined):
            return True
        if _word(_letters_before(left) + _letters_after(right)) in self.words:
            return True
        if _PATH.search(row) and _PATH_GOES_ON.match(following):
            return True
        return len(joined) >= 6 and any(_IDENTIFIER.search(t) for t in (left, right))

    def _name(self, t: str) -> bool:
        """Whether ``t`` is a status code name or a library file name."""
        from .vocabulary import read_library_name

        if not t or t.isdigit():
            return False
        if ("_" in t or not t.isalpha()) and self.vocabulary.code(t):
            return True
        return "." in t and (read_library_name(t) is not None or self.catalog.library(t) is not None)

    def recognises(self, token: str) -> bool:
        """Whether ``token`` (trailing full stops and dashes aside) is a token of the vocabulary or the catalog."""
        t = token.rstrip(".-")
        if not t:
            return False
        if t.isalpha():
            return t.lower() in self.words or bool(self.vocabulary.code(t))
        return _VERSION.fullmatch(t) is not None or self._name(t)


_LEXICONS: dict[int, tuple[Catalog, Lexicon]] = {}
_NEEDLES: dict[int, tuple[Catalog, list[tuple[str, list[tuple[str, int]]]]]] = {}


def anchor_needles(catalog: Catalog) -> list[tuple[str, list[tuple[str, int]]]]:
    """The few needles that cover the catalog's anchors spelt without their spaces (``segments.needles_for``),
    each with those anchors that hold it and where; built on first use."""
    held = _NEEDLES.get(id(catalog))
    if held is None or held[0] is not catalog:
        from .segments import needles_for

        out = []
        anchors = sorted({a.replace(" ", "") for a in catalog.anchors})
        for needle in needles_for(anchors, strip=False):
            text = needle.decode()
            out.append((text, [(a, at) for a in anchors for at in _finds(a, text)]))
        held = (catalog, out)
        _NEEDLES[id(catalog)] = held
    return held[1]


def _finds(text: str, needle: str) -> list[int]:
    out = []
    at = text.find(needle)
    while at != -1:
        out.append(at)
        at = text.find(needle, at + 1)
    return out


def lexicon(catalog: Catalog) -> Lexicon:
    """The catalog's lexicon, built on first use (most texts break no token over a line)."""
    return built_once(_LEXICONS, catalog, Lexicon)


def glue_points(rows: Sequence[str], open_ends: Sequence[bool], catalog: Catalog) -> list[int]:
    """The breaks (``k``: between ``rows[k]`` and ``rows[k + 1]``) that may fall inside a known token, or between a
    word and the punctuation that follows it ("condition" / ": cuda>=11.0"). ``open_ends[k]``: row ``k`` ended
    with no space before its line break (a space there is a word's end)."""
    points: list[int] = []
    lex: Lexicon | None = None
    for k in range(len(rows) - 1):
        left, right = rows[k], rows[k + 1]
        if not (open_ends[k] and left and right):
            continue
        if _PUNCTUATION.match(right) or _OPENING.match(left[-1]):
            points.append(k)
            continue
        a, b = _LEFT.search(left, left.rfind(" ") + 1), _RIGHT.match(right)  # (a token holds no space)
        if a is None or b is None:
            continue
        if lex is None:
            lex = lexicon(catalog)
        if lex.breaks_inside(a.group(0), b.group(0), left, right):
            points.append(k)
    return points


_PATH = lazy_compile(r"[\\/][^\s\\/]*$")  # a row that ends inside a path (its last segment)
# what opens the next row goes on with a directory (a name with spaces: "WESpeechS" / "Server Initializing
# api\\onnxruntime_providers_cuda.dll") or an extension
_PATH_GOES_ON = lazy_compile(r"(?:[^\s\"'<>|]+ ){0,2}[^\s\"'<>|]*[\\/.]")
# snake_case, a function's camelCase, a versioned or a mangled C++ symbol, on one side of the break ("found" /
# "Ignore" is two sentences run together, "RuntimeError" a new message, not an identifier's rest)
_IDENTIFIER = lazy_compile(r"[_@]|^[a-z]+[A-Z]")


def _word(letters: str) -> str:
    return letters.lower() if len(letters) >= 2 else ""


# Punctuation a wrap may put at a line's start ("condition" / ": cuda>=11.0"), or leave at its end before what it
# opens ("cuda>=" / "11.0"); a full stop that ends a line ends a sentence
_PUNCTUATION = lazy_compile(r"[:;,.!?)\]}>=/\\'\"`-]")
_OPENING = lazy_compile(r"[=(\[{<'\"`/\\]")


def _letters_before(text: str) -> str:
    m = re.search(r"(?<![A-Za-z])[A-Za-z]+$", text)  # (from a run's start only, as ``_LEFT``)
    return m.group(0) if m else ""


def _letters_after(text: str) -> str:
    m = re.match(r"[A-Za-z]+", text)
    return m.group(0) if m else ""


def best_reading(
    rows: Sequence[str], points: Sequence[int], evaluate: Callable[[str], tuple[tuple[int, int], T]]
) -> tuple[str, tuple[int, ...], T]:
    """The reading of ``rows`` that ``evaluate`` scores highest: its text, where each row starts in it, and what
    ``evaluate`` made of it. The unjoined reading (rows apart, as line breaks) is tried first and keeps a tie; then
    every combination of a few glue points, fewest first, or, for more, each point in turn, kept unless it makes
    the reading worse (a message read from its first line on extends row by row as its breaks are joined)."""

    def run(glued: set[int]) -> tuple[tuple[int, int], str, tuple[int, ...], T]:
        text, starts = _join(rows, glued)
        s, made = evaluate(text)
        return s, text, starts, made

    best = run(set())
    if len(points) <= EXHAUSTIVE:
        for n in range(1, len(points) + 1):
            for glued in combinations(points, n):
                tried = run(set(glued))
                if tried[0] > best[0]:
                    best = tried
    else:
        chosen: set[int] = set()
        now = best[0]
        for k in points:
            tried = run(chosen | {k})
            if tried[0] >= now:  # (a join that changes nothing yet may be one of several a sentence needs)
                chosen, now = chosen | {k}, tried[0]
            if tried[0] > best[0]:
                best = tried
    return best[1], best[2], best[3]


def _join(rows: Sequence[str], glued: set[int]) -> tuple[str, tuple[int, ...]]:
    parts: list[str] = []
    starts: list[int] = []
    at = 0
    for k, row in enumerate(rows):
        if k:
            sep = "" if k - 1 in glued else "\n"
            parts.append(sep)
            at += len(sep)
        starts.append(at)
        parts.append(row)
        at += len(row)
    return "".join(parts), tuple(starts)


def score(spans: Sequence[tuple[int, int]], values: int, text: str) -> tuple[int, int]:
    """How much a reading recognises: the versions and names it decodes, then the characters (spaces aside) its
    matches cover."""
    covered = sum(end - start - text.count(" ", start, end) - text.count("\n", start, end) for start, end in spans)
    return values, covered


_SHAPE = str.maketrans("0123456789", "0000000000")
_PROSE = lazy_compile(r"[A-Za-z]{2,} [A-Za-z]{2,}")  # two words apart: a message's text, not its logger's prefix
_PREFIX_MARK = lazy_compile(r"[\d\[\]|:<>]")  # what a logger's prefix holds: a time, a level in brackets, a file:line


def shared_prefix(line: str, first: str) -> int:
    """The length of the logger prefix ``line`` repeats from ``first`` (digits may differ: a timestamp ticks on),
    ending at a separator before the message's words; 0 when none."""
    n = _common_prefix(first.translate(_SHAPE), line.translate(_SHAPE))
    prose = _PROSE.search(first, 0, n)
    if prose:
        n = prose.start()
    cut = max(first.rfind(c, 0, n) for c in " ]|>:") + 1
    if cut < 4 or cut >= len(line) or not _PREFIX_MARK.search(first, 0, cut):
        return 0
    while cut < len(line) and line[cut] == " ":
        cut += 1
    return cut


def _common_prefix(a: str, b: str) -> int:
    """The length of the prefix ``a`` and ``b`` share, found by halving (compared a character at a time in Python,
    the lines of a log that repeats its shape cost as much as they are long, once for each line a message may be
    wrapped over)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


# What loggers put before each line of a wrapped message: pytest's "E   ", glog's "E0312 10:00:00.123 42 a.cc:7] ",
# a timestamp with a TensorFlow-style "W tensorflow/...cc:64] ". Only continuation lines lose it.
# Also a quoted reply's "> ", Python logging's "WARNING:root:", TensorRT's "[06/08/2022-15:28:47] [TRT] [E] ".
_CONTINUATION_PREFIX = (  # (compiled on first use, by re's cache: most runs wrap no message)
    r"^(?:>(?!=) ?)*(?:E(?= )|[IWEF]\d{4} [\d:.]+ +\d+ [\w./-]+:\d+\]"
    r"|\d{4}-\d\d-\d\d[ T][\d:.,]+:?(?: [IWEF] [\w./\\-]+:\d+\])?"
    r"|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]*:"
    r"|(?:\[(?:[\d/:. -]+|TRT|[IWEF]|TensorRT|INFO|WARNING|ERROR)\] ?)+)? *"
)

CONTINUATION = lazy_compile(_CONTINUATION_PREFIX)


def continuation(line: str, first: str) -> str:
    """A continuation line without the logger prefix it repeats: one of the known shapes, or the part it shares
    with the message's first line (digits aside: a timestamp ticks on)."""
    rest = re.sub(_CONTINUATION_PREFIX, "", line)
    if len(rest) == len(line):
        rest = line[shared_prefix(line, first) :]
    return rest


def unwrapped(lines: Sequence[str], catalog: Catalog) -> str:
    """``lines`` (one message a terminal or a page wrapped) read as one line: each continuation without its logger
    prefix, joined to the line before with no space where the break falls inside a known token (``glue_points``),
    with a space elsewhere."""
    first = lines[0].strip()
    rows = [first, *(continuation(line.strip(), first) for line in lines[1:])]
    points = set(glue_points(rows, [not line[-1:].isspace() for line in lines], catalog))
    return "".join(row + ("" if k in points else " ") for k, row in enumerate(rows)).strip()
