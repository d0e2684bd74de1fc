"""A title that says a catalog sentence's words in another order (#22): "kernel image not available for sm_120
device" for "no kernel image is available for execution on the device", "with the NVIDIA driver couldn't
communicate" for "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver".
The ordered reading (``align``) keeps the sentence's order; this one reads its words as a bag.

Its bars are stricter than the ordered reading's, since order no longer tells a sentence from a line that merely
shares its words: a word of its entry's anchors, three of its words at least, their weight past the loose reading's
bar and most of a short sentence's, none of the line's distinctive words that the sentence lacks (they say it is
another message), no sentence of another kind about as close, a word of failure where the sentence has one and no
negation of a word it lacks ("no problems with the NVIDIA driver"); a sentence that says no failure in words, two
values that differ. A line that says all is well or announces a change, or names a library file, reads nothing.
Values (a version, an architecture) are read by the words beside them (``anyorder``).

The last of the loose reading's resorts (``loose.pieces``): only where no piece, no word rule and no ordered
alignment read the line.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from .alignwords import FAILURE, FINE, NEWS, denies_other, line_words, stem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .align import _Aligned
    from .catalog import CatalogEntry

__all__ = ["bag_reads"]

_LONGEST = 20  # words: a longer line is a log line or a paragraph, not a title
_WORDS = 3  # of the sentence's own, at least
_SHARE = 0.75  # or this share of a short sentence's weight
_CLOSE = 1.5  # a sentence of another kind this close reads the line as well: nothing is read
_STRAY = 0  # distinctive words of the line's that the sentence lacks, at most ("Cannot dlopen some TensorRT libraries")
# a framework's name, which a title adds to any message ("Warning Tensorflow: Invalid GPU Compute Capability")
_FRAMEWORKS = frozenset(
    map(
        stem,
        [
            "tensorflow",
            "pytorch",
            "torch",
            "jax",
            "jaxlib",
            "paddle",
            "paddlepaddle",
            "onnxruntime",
            "cupy",
            "mxnet",
            "keras",
        ],
    )
)
_FILE = re.compile(r"\w(?:[.,]so\b|\.dll\b|\.dylib\b)", re.IGNORECASE)
_NAME_PART = re.compile(r"(?<![\w.-])[A-Za-z]{2,}(?![\w.-])")  # a word on its own, not a piece of a name


def bag_reads(reading: _Aligned, line: str) -> Iterator[tuple[CatalogEntry, re.Match[str], re.Match[str]]]:
    """The catalog sentence whose words ``line`` says in any order, as ``loose.pieces`` yields it; none where two of
    different kinds read it about as well."""
    from .anyorder import complete, empty_match

    tokens = line_words(line)
    held = {s for s, _, _ in tokens if s}
    if _FILE.search(line):
        return  # a library file is read by whose it is (``wordrules``, the sentences that read it): "libfoo.so.1"
    if len(tokens) > _LONGEST or not held or (held & (FINE | NEWS) and not held & FAILURE):
        return
    # the words that tell a sentence from the others, but not a part of a name ("sm" of "sm_120", "cu" of "cu118")
    words = {t.group(0).lower() for t in _NAME_PART.finditer(line)}
    distinct = {s for s, a, b in tokens if reading.weight.get(s, 0.0) >= reading.rare and line[a:b].lower() in words}
    distinct -= _FRAMEWORKS
    scored = []
    for n, stems in enumerate(reading.stems):
        common = stems & held
        if len(common) < _WORDS or not (reading.sentences[n].text or common & reading.anchors[n]):
            continue  # (a runtime's text has its entry's anchors: every text's)
        if stems & FAILURE and not held & FAILURE:
            continue
        if len(distinct - stems) > _STRAY or denies_other(tokens, stems) or _guarded(reading, n, line, tokens):
            continue
        score = math.fsum(reading.weight[s] * reading.shares[n][s] for s in common)
        if score < max(reading.threshold(n), min(_BAR, _SHARE * reading.totals[n])):
            continue
        scored.append((score, n))
    if not scored:
        return
    scored.sort(key=lambda t: (-t[0], t[1]))
    best, n = scored[0]
    kind = reading.sentences[n].entry.kind
    if any(reading.sentences[k].entry.kind != kind for score, k in scored[1:] if score >= best - _CLOSE):
        return
    units, sentence = reading.units[n], reading.sentences[n]
    spans = [(start, end) for s, start, end in tokens if s in reading.stems[n]]
    m = empty_match(line, min(a for a, _ in spans), max(b for _, b in spans), units)
    if sentence.text:  # decoded as the whole text it says in other words (as ``align.aligned``)
        whole = sentence.entry.pattern.fullmatch(sentence.text)
        if whole is not None:
            yield sentence.entry, whole, m
        return
    more = complete(reading, n, line, m)
    # a sentence that says no failure in words says it by two values that differ ("compiled against 8.7.0 but found
    # runtime 8.5.0"): without them its words are no error ("cuDNN runtime and compiled version both 8.9.2")
    if not reading.stems[n] & FAILURE and (more is None or len({v for v in more.groupdict().values() if v}) < 2):
        return
    if more is not None:
        yield sentence.entry, more, more
    yield sentence.entry, m, m


def _guarded(reading: _Aligned, n: int, line: str, tokens: list[tuple[str, int, int]]) -> bool:
    """Whether a guard of sentence ``n`` (what may not follow one of its words: "initialization error: (?!load)")
    holds after that word where the line says it."""
    units = reading.units[n]
    for i, u in enumerate(units[1:], 1):
        word = units[i - 1].stem
        if u.guard is not None and word and any(s == word and u.guard.match(line, end) for s, _, end in tokens):
            return True
    return False


_BAR = 9.0  # the loose reading's bar: three rare words
