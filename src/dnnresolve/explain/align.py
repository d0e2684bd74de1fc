"""A title that paraphrases a catalog sentence (#22): its words in the sentence's order, with some dropped, some of
the author's own between them, both ends cut, a word said another way ("fails" for "failed", "cannot" for "could
not", "libraries" for "library"): "CuDNN initialization fails due to version mismatch", "no kernel image
available".

Each sentence's words and values (its named groups that read a shaped value: a version, a code) are aligned with
the line's words in order, as a local alignment does: a dropped sentence word or an inserted word inside the
stretch aligned costs a little, the words before and after it nothing. A sentence reads the line where the words
aligned say which message it is (``_Aligned._enough``): the catalog's distinctive words (weighted by how few of its
sentences share them, like the loose reading's), a word of the entry's anchors, and a word of failure where the
sentence has one.

The loose reading's very last resort (``loose.pieces``): it runs only on a short text where nothing else read, so a
log's lines, or a message the scanner read, cost nothing more.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator

from .alignwords import FAILURE, FINE, NEWS, STOP, Unit, denies_other, line_words, sentence_units, stem
from .datafile import built_once

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .catalog import CatalogEntry
    from .loose import Loose, _Sentence

__all__ = ["aligned", "with_values"]

_NEGATION = ("no", "not")
# what a sentence word left out inside the stretch aligned costs, and a word of the author's own: a part of each
# and a share of its weight
_DROPPED, _DROPPED_SHARE = 0.3, 0.25
_INSERTED, _INSERTED_SHARE = 0.6, 0.5
_CLOSE = 1.0  # a sentence of another kind that reads a line this close to the best makes it ambiguous
_VALUE = 2.0  # the weight of a value read (a version, a code)
_COMMON = 6  # a word in more sentences than this is CUDA's everyday vocabulary (as the loose reading's)
_ENOUGH = 9.0  # the weight the words aligned must have (as the loose reading's pieces): three rare words
_SHARE = 0.6  # or this share of a short sentence's weight
_LONGEST_TITLE = 40  # words: a longer line is a log line, not a title
_LONGEST_LINE = 1000  # characters (as the loose reading's)


class _Aligned:
    """The loose reading's sentences as words and values in order, and how much each word tells them apart."""

    def __init__(self, loose: Loose) -> None:
        self.sentences = loose.sentences
        self.index = {id(s): n for n, s in enumerate(self.sentences)}
        self.units = [sentence_units(re.escape(s.text) if s.text else s.pattern_text) for s in self.sentences]
        self.stems = [frozenset(u.stem for u in units if u.stem) for units in self.units]
        self.shares = [
            {u.stem: u.share for u in sorted(units, key=lambda u: u.share) if u.stem} for units in self.units
        ]
        by_entry: dict[str, frozenset[str]] = {}  # (the runtime's texts share one entry, and its many anchors)
        for s in self.sentences:
            if s.entry.id not in by_entry:
                words = {w for a in s.entry.anchors for w in re.findall(r"[A-Za-z]{2,}", a)}
                by_entry[s.entry.id] = frozenset(map(stem, words)) - STOP
        self.anchors = [by_entry[s.entry.id] for s in self.sentences]
        shared = Counter(w for stems in self.stems for w in stems)
        self.weight = {w: math.log(len(self.sentences) / n) for w, n in shared.items()}
        self.rare = math.log(len(self.sentences) / _COMMON)
        self.totals = [math.fsum(self.weight[w] * share for w, share in shares.items()) for shares in self.shares]

    def threshold(self, n: int) -> float:
        return min(_ENOUGH, _SHARE * self.totals[n])

    def reads(self, line: str) -> list[tuple[float, int, re.Match[str]]]:
        """(score, sentence, match) of the sentence the line paraphrases best, or none where a sentence of another
        kind reads it about as well (a fragment two messages share: "Version JAX was built against")."""
        tokens = line_words(line)
        if len(tokens) > _LONGEST_TITLE:
            return []
        held = {s for s, _, _ in tokens}
        fails = bool(held & FAILURE)
        if held & (FINE | NEWS) and not fails:
            # a line that says all is well ("jaxlib 0.4.12 works with jax 0.4.12"), or announces a change ("Bump CUDA 13
            # to cuDNN 9.13.0", "support Compute Capability 9.0"), is no error's title
            return []
        out = []
        for n, stems in enumerate(self.stems):
            values = sum(self._value(u, held) for u in self.units[n] if u.group is not None)
            if math.fsum(self.weight[w] * self.shares[n][w] for w in stems & held) + values < self.threshold(n):
                continue
            if not self.sentences[n].text and not stems & held & self.anchors[n]:
                continue
            if stems & FAILURE and not fails:
                continue
            if stems & FAILURE and not stems & FAILURE & held and denies_other(tokens, stems):
                continue  # its only failure a negation of the author's own word ("no problems with the NVIDIA driver")
            read = self.align(n, line, tokens)
            if read is not None:
                out.append((read[0], n, read[1]))
        out.sort(key=lambda r: (-r[0], r[1]))
        kinds = {self.sentences[n].entry.kind for score, n, _ in out if score >= out[0][0] - _CLOSE} if out else set()
        return out[:1] if len(kinds) == 1 else []

    def align(self, n: int, line: str, tokens: list[tuple[str, int, int]]) -> tuple[float, re.Match[str]] | None:
        units, m = self.units[n], len(tokens)
        starts = [t[1] for t in tokens]
        # what unit i reads at token j: (the token after it, the span read, its weight)
        hits: dict[tuple[int, int], tuple[int, tuple[int, int], float]] = {}
        for i, u in enumerate(units):
            for j, (s, start, end) in enumerate(tokens):
                if u.group is not None:
                    v = u.group.match(line, start)
                    if v is not None and v.group(0).strip():
                        k = j + 1
                        while k < m and starts[k] < v.end():
                            k += 1
                        hits[i, j] = (
                            k,
                            v.span(),
                            self._value(u, {stem(w) for w in re.findall(r"[A-Za-z]{2,}", v.group(0))}),
                        )
                elif u.stem and s == u.stem:
                    hits[i, j] = (j + 1, (start, end), self.weight[s] * u.share)
        if not hits:
            return None
        # a word left out costs more the more it tells (a title keeps the words that say which message it is), and
        # so does a word of the author's own that tells another sentence ("requirement" for "initialization")
        dropped = [
            0.0 if u.guard or u.optional else _DROPPED + _DROPPED_SHARE * self.weight.get(u.stem, _VALUE) * u.share
            for u in units
        ]
        inserted = [_INSERTED + _INSERTED_SHARE * self.weight.get(s, 0.0) for s, _, _ in tokens]
        # best[i][j]: the best score of units[i:] aligned with tokens[j:], once the alignment has begun (it may end
        # anywhere: a title cut at its end)
        best = [[0.0] * (m + 1) for _ in range(len(units) + 1)]
        for i in range(len(units) - 1, -1, -1):
            for j in range(m - 1, -1, -1):
                score = max(0.0, best[i + 1][j] - dropped[i], best[i][j + 1] - inserted[j])
                hit = hits.get((i, j))
                if hit is not None:
                    score = max(score, hit[2] + best[i + 1][hit[0]])
                best[i][j] = score
        # the start: a unit read at a token (a title cut at its start begins anywhere)
        total, i, j = max((hit[2] + best[i + 1][hit[0]], -i, -j) for (i, j), hit in hits.items())
        first_unit, first_token = -i, -j
        read = [(first_unit, hits[first_unit, first_token][1])]
        last_unit, next_token = first_unit, hits[first_unit, first_token][0]
        i, j = last_unit + 1, next_token
        while i < len(units) and j < m and best[i][j] > 0.0:
            hit = hits.get((i, j))
            if hit is not None and math.isclose(best[i][j], hit[2] + best[i + 1][hit[0]]):
                read.append((i, hit[1]))
                last_unit, next_token = i, hit[0]
                i, j = i + 1, hit[0]
            elif math.isclose(best[i][j], best[i + 1][j] - dropped[i]):
                i += 1
            else:
                j += 1
        # where the stretch aligned stops but the sentence goes on, the line's next word is the author's own or the
        # sentence's cut; a word that tells another sentence there says the line is that other message ("Cannot
        # dlopen some TensorRT libraries" is not "Cannot dlopen some GPU libraries"), and so does a word cut where
        # the line ends that does not begin the sentence's next ("... some T")
        if any(u.stem for u in units[last_unit + 1 :]) and self._other(
            n, last_unit, tokens, next_token, line, read[-1][1][1]
        ):
            return None
        if (
            any(u.stem for u in units[:first_unit])
            and first_token > 0
            and self._distinct(n, tokens[first_token - 1][0])
        ):
            return None
        for k, (i, (_, end)) in enumerate(read):  # a guard of the sentence right after a unit read holds
            upto = read[k + 1][0] if k + 1 < len(read) else len(units)
            if any(u.guard is not None and u.guard.match(line, end) for u in units[i + 1 : upto]):
                return None
        # a negation says no to the word after it: one of the author's own there is what it denies ("no problem
        # with the kernel image" is not "no kernel image")
        for (i, (_, end)), (_, (start, _)) in zip(read, read[1:]):
            if units[i].stem in _NEGATION and any(end <= t[1] < start for t in tokens):
                return None
        return self._enough(n, line, total, read)

    def _distinct(self, n: int, word: str) -> bool:
        """Whether ``word`` tells sentences apart (few share it) and is not sentence ``n``'s."""
        return self.weight.get(word, 0.0) >= self.rare and word not in self.stems[n]

    def _other(self, n: int, i: int, tokens: list[tuple[str, int, int]], j: int, line: str, end: int) -> bool:
        """Whether the line goes on after unit ``i`` of sentence ``n`` (read up to ``end``, its next token ``j``)
        with something else than the sentence's next word: a word that tells another sentence, or the first
        letters of another word where the line ends."""
        if j < len(tokens) and self._distinct(n, tokens[j][0]):
            return True
        cut = re.fullmatch(r"\W*([A-Za-z]{1,2})[ \t]*", line[end:])
        if cut is None or cut.group(1).lower() in STOP:
            return False
        following = next((u.stem for u in self.units[n][i + 1 :] if u.stem), "")
        return not following.startswith(cut.group(1).lower())

    def _value(self, unit: Unit, words: set[str]) -> float:
        """What a value read tells (its ``words``): as much as the word of the sentence's own it is (a provider's
        name), or ``_VALUE``."""
        return max([_VALUE, *(self.weight.get(w, 0.0) for w in unit.names & words)])

    def _enough(
        self, n: int, line: str, score: float, read: list[tuple[int, tuple[int, int]]]
    ) -> tuple[float, re.Match[str]] | None:
        """Whether what the alignment read says which message it is: three words or values, two words at least,
        a word of the entry's anchors (for a catalog sentence), and a score past the loose reading's bar."""
        units = self.units[n]
        stems = {units[i].stem for i, _ in read if units[i].stem}
        words = len({units[i].compound for i, _ in read if units[i].stem})
        values = [(units[i].name, span) for i, span in read if units[i].group is not None]
        if words < 2 or words + len(values) < 3:
            return None
        if not self.sentences[n].text and not stems & self.anchors[n]:
            return None
        if score < self.threshold(n):
            return None
        return score, _match(line, read[0][1][0], read[-1][1][1], values, units)


def _match(
    line: str, start: int, end: int, values: list[tuple[str, tuple[int, int]]], units: list[Unit]
) -> re.Match[str]:
    """A match of ``line[start:end]`` whose named groups are the values read at their spans (the decoder's input),
    the sentence's other groups unread."""
    parts, at = [], start
    for name, (a, b) in values:
        parts.append(f".{{{a - at}}}(?P<{name}>.{{{b - a}}})")
        at = b
    parts.append(f".{{{end - at}}}")
    read = {name for name, _ in values}
    parts.extend(f"(?:(?!)(?P<{u.name}>))?" for u in units if u.name and u.name not in read)
    m = re.compile("".join(parts), re.DOTALL).match(line, start)
    assert m is not None  # (the spans are the line's own)
    return m


_ALIGNED: dict[int, tuple[Loose, _Aligned]] = {}


def aligned(loose: Loose, line: str) -> Iterator[tuple[CatalogEntry, re.Match[str], re.Match[str]]]:
    """The catalog sentences (``loose``'s) ``line`` paraphrases, the likeliest first, as ``loose.pieces`` yields
    them."""
    from .anyorder import complete

    reading = built_once(_ALIGNED, loose, _Aligned)
    for _, n, m in reading.reads(line):
        sentence = reading.sentences[n]
        values = [v for v in m.groupdict().values() if v]
        if len(values) > 1 and len(set(values)) == 1:
            continue  # one version named twice ("installed jaxlib 0.4.12 and jax 0.4.12"): no two releases differ
        if not sentence.text:
            more = complete(reading, n, line, m)  # its values said in another order (the ordered reading first)
            if more is not None and _differ(more):
                yield sentence.entry, more, m
            yield sentence.entry, m, m
            continue
        whole = sentence.entry.pattern.fullmatch(sentence.text)
        if whole is not None:
            yield sentence.entry, whole, m


def in_any_order(loose: Loose, line: str) -> Iterator[tuple[CatalogEntry, re.Match[str], re.Match[str]]]:
    """The catalog sentence whose words ``line`` says in any order (``bag``), as ``loose.pieces`` yields it."""
    from .bag import bag_reads

    yield from bag_reads(built_once(_ALIGNED, loose, _Aligned), line)


def with_values(loose: Loose, sentence: _Sentence, line: str, m: re.Match[str]) -> list[re.Match[str]]:
    """A piece ``m`` of a catalog sentence the loose reading found in ``line``, after the sentence aligned with the
    line where that reads more of its values (a version, a code): "Ignoring visible gpu device with Cuda compute
    capability 3.0" is a piece cut after "device" (the GPU's name in brackets left out), its capability unread.
    (The piece stays second: the values aligned may be no version its decoder reads.)"""
    if "(?P<" not in sentence.pattern_text or len(line) > _LONGEST_LINE:
        return [m]
    reading = built_once(_ALIGNED, loose, _Aligned)
    n = reading.index.get(id(sentence))
    if n is None:
        return [m]
    from .anyorder import complete

    names = [u.name for u in reading.units[n] if u.group is not None]
    read = reading.align(n, line, line_words(line))
    if read is None or sum(bool(read[1].groupdict().get(k)) for k in names) <= sum(
        bool(m.groupdict().get(k)) for k in names
    ):
        found = [m]
    else:
        found = [read[1], m]
    more = complete(reading, n, line, found[0])  # its values said in another order (the ordered reading first)
    return [more, *found] if more is not None and _differ(more) else found


def _differ(m: re.Match[str]) -> bool:
    """Whether the values ``m`` reads are not one version named twice."""
    values = [v for v in m.groupdict().values() if v]
    return len(values) < 2 or len(set(values)) > 1
