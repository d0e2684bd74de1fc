"""Reading a message as users quote it, where no sentence of the catalog reads it whole or cut at its end (#22):
a title or a truncated log line that lost its first words ("...cannot open shared object file", "runtime CuDNN
library: 8.0.5 but source was compiled with: 8.6.0"), its punctuation ("Unknown CUDA arch 8.6 or GPU not
supported"), or words at both ends.

Each sentence is read with its punctuation optional (``loose_pattern``) and cut at its start, its end, or both
(``start_cut_pattern``, ``datafile.cut_pattern``). A piece of a sentence invites false positives ("NVIDIA driver
on your system" is "Found no NVIDIA driver on your system" without the words that make it an error), so a match
counts only where it keeps enough of the sentence (``enough``): distinctive words of the catalog (words few of its
sentences share), or a name or version the decoder reads with one of them. The runtime's texts (cudaGetErrorString)
are read the same way, each as a sentence of its own.

Last come NVIDIA's words in any order (``wordrules``): a library file name and words that say it is not loaded,
torchvision or torchaudio with CUDA and a word of conflict; and a title that paraphrases a sentence, its words in
order with some left out or said another way (``align``), or in any order where nothing else read it (``bag``).

This reading is the scanner's last resort: it runs only on a short text where nothing else was read (a title, a
pasted fragment), so a log's lines cost nothing more.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator

from .datafile import _split, built_once, compile_pattern, split_flags

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .catalog import Catalog, CatalogEntry

__all__ = ["Loose", "loose_pattern", "loosen", "pieces", "start_cut_pattern"]

# Punctuation a title drops or spells as a space: as a regex atom (an escape, a literal, or a class of them only)
_PUNCT_CHARS = ":,;'\"=!`-<>/()[].?*+…：’‘“”´"
_ESCAPED_PUNCT = re.compile(r"\\[()\[\].?*+/-](?:[*+?]|\{\d*,?\d*\})?")
_LITERAL_PUNCT = re.compile(r"[:,;'\"=!`<>/…：’‘“”´-](?:[*+?]|\{\d*,?\d*\})?")
_CLASS = re.compile(r"\[([^\]^]+)\](?:[*+?]|\{\d*,?\d*\})?")
_NAMED = re.compile(r"\(\?P<\w+>")
_QUOTE = "[\"'`‘’“”]"


def _punctuation(atom: str) -> bool:
    if _ESCAPED_PUNCT.fullmatch(atom) or _LITERAL_PUNCT.fullmatch(atom):
        return True
    m = _CLASS.fullmatch(atom)
    return m is not None and all(c in _PUNCT_CHARS or c == "\\" for c in m.group(1))


def loose_pattern(pattern: str) -> str:
    """``pattern`` with its punctuation optional or read as a space (a title typed without it): ``library: 5005``
    also reads ``library 5005``, ``arch \\(8.6\\)`` ``arch 8.6``. A named group's own syntax is kept (a version, a
    file name reads whole), and so is a full stop between two words or digits (``\\.so``, ``\\d+\\.\\d+``)."""
    flags, pattern = split_flags(pattern)
    return flags + _loose_alternatives(pattern)


def _loose_alternatives(pattern: str) -> str:
    return "|".join(_loose_sequence(atoms) for atoms in _split(pattern))


def _loose_sequence(atoms: list[str]) -> str:
    out = []
    for n, atom in enumerate(atoms):
        following = atoms[n + 1] if n + 1 < len(atoms) else ""
        if atom.startswith("\\.") and following and not following.startswith((" ", "[ ")):
            out.append(atom)  # a full stop inside a name or a version
        elif _punctuation(atom):
            out.append(f"(?:{atom}| )?")
        elif atom.startswith("(?P<"):
            out.append(f"{_QUOTE}?{atom}{_QUOTE}?")  # a value a title quotes ('undefined symbol: "ncclCommRegister"')
        elif atom.startswith("(?:"):
            body, quantifier = _group_body(atom)
            out.append(f"(?:{_loose_alternatives(body)}){quantifier}")
        else:
            out.append(atom)
    return "".join(out)


def _group_body(atom: str) -> tuple[str, str]:
    """A group atom ``(?:body)q`` as its body and its quantifier."""
    end = atom.rfind(")")
    return atom[3:end], atom[end + 1 :]


# Where a message cut at its start may begin: between words anywhere (a title's own words before it), inside a
# word only where the text begins, or after an ellipsis ("...ot load dynamic library")
_BETWEEN = r"(?<![\w])"
_INSIDE = r"(?:(?<![^\n])|(?<=\.\.\.)|(?<=…)|(?<=\.\.\. )|(?<=… ))"


def start_cut_pattern(pattern: str) -> str:
    """``pattern`` read as a message cut at its start: a regex that matches every suffix of what ``pattern``
    matches that starts between two of its atoms (a word's start), or inside a word where a line or an ellipsis
    begins. The mirror of ``datafile.cut_pattern``; a named group cut inside reads as no value."""
    flags, pattern = split_flags(pattern)
    return flags + _start_alternatives(pattern)


def _start_alternatives(pattern: str) -> str:
    return "(?:" + "|".join(_start_sequence(a) for a in _split(pattern)) + ")"


def _start_sequence(atoms: list[str]) -> str:
    out = ""
    for n, atom in enumerate(atoms):
        inside = _start_inside(atom)
        cut_inside = f"|{_INSIDE}{inside}" if inside else ""
        out = f"(?:{atom}{cut_inside})" if n == 0 else f"(?:(?:{out}|{_BETWEEN}){atom}{cut_inside})"
    return out


def _start_inside(atom: str) -> str:
    """A cut within one atom, keeping its end: a word's last letters, or a suffix of a group taken once or
    optionally."""
    if re.fullmatch(r"\w{3,}", atom):
        return "(?:" + "|".join(atom[k:] for k in range(1, len(atom) - 1)) + ")"
    m = re.fullmatch(r"\(\?:(.*)\)\??", atom, re.DOTALL)
    if m:
        try:
            return _start_alternatives(_NAMED.sub("(?:", m.group(1)))
        except ValueError:
            return ""
    return ""


# Where a message cut at its end may stop: between words anywhere (a title's own words after it), inside a word
# only where the line ends or an ellipsis follows
_BEFORE = r"(?![\w])"
_END = r"(?=\.\.\.|…|[ \t]*(?:\n|\Z))"


def end_cut_pattern(pattern: str) -> str:
    """``pattern`` read as a message cut at its end, at a word's end anywhere or inside a word where the line ends
    (``datafile.cut_pattern`` cuts only where the line ends, and inside every atom: too big a regex to compile for
    every sentence of a loose reading)."""
    flags, pattern = split_flags(pattern)
    return flags + _end_alternatives(pattern)


def _end_alternatives(pattern: str) -> str:
    return "(?:" + "|".join(_end_sequence(a) for a in _split(pattern)) + ")"


def _end_sequence(atoms: list[str]) -> str:
    out = ""
    for n, atom in reversed(list(enumerate(atoms))):
        inside = _end_inside(atom)
        cut_inside = f"|{inside}{_END}" if inside else ""
        out = f"(?:{atom}{cut_inside})" if n == len(atoms) - 1 else f"(?:{atom}(?:{out}|{_BEFORE}){cut_inside})"
    return out


def _end_inside(atom: str) -> str:
    """A cut within one atom, keeping its start: a word's first letters, or a prefix of a group taken once or
    optionally."""
    if re.fullmatch(r"\w{3,}", atom):
        return "(?:" + "|".join(atom[:k] for k in range(len(atom) - 1, 1, -1)) + ")"
    m = re.fullmatch(r"\(\?:(.*)\)\??", atom, re.DOTALL)
    if m:
        try:
            return _end_alternatives(_NAMED.sub("(?:", m.group(1)))
        except ValueError:
            return ""
    return ""


# ---------------------------------------------------------------- what a piece must keep

_SYNTAX = re.compile(r"\(\?P<\w+>|\(\?P=\w+\)|\(\?[aiLmsux-]+\)|\\[A-Za-z]|\[[^\]]*\]")
_WORD = re.compile(r"[A-Za-z]{2,}")
_WORD_START = re.compile(r"(?<![\w.+-])[\w.+-]|(?<=\.\.\.)\w|(?<=…)\w")
# Words that say nothing of which message it is
_STOP = frozenset(
    re.findall(
        r"\w+",
        "a an and are as at be but by for from has have in is it its of on or so than that the this to "
        "was were which with your you",
    )
)
# a title or a fragment is a line of a few hundred characters: a longer one (a minified log, a runaway number) is not
# read loosely, since each sentence's pieces are tried at every word of the line (a 5,000-digit name cost 9 s)
_LONGEST = 1000
_RUNAWAY = re.compile(r"\d{13,}")
_COMMON = 6  # a word in more sentences than this is CUDA's everyday vocabulary ("cuda", "version", "library")
_ENOUGH = 9.0  # the weight of words a piece keeps: three rare ones, or four or five of CUDA's everyday ones
_ENOUGH_WITH_VALUE = 6.0
_SHARE = 0.6  # or this share of the weight of a short sentence's words ("Torch not compiled with CUDA")
# Words that say something failed: a piece of a sentence that has one must keep one
_FAILURE = frozenset(
    re.findall(
        r"\w+",
        "no not cannot couldn couldnt unable fail failed failure error mismatch mismatches mismatched "
        "incompatible incompatibility unsupported insufficient old older outdated missing unknown "
        "invalid unsatisfied unavailable ignoring undefined unexpected",
    )
)


def sentence_words(pattern_text: str) -> tuple[str, ...]:
    """The words of a sentence's regex (its syntax and its classes dropped), lower case, stop words left out."""
    words = (w.lower() for w in _WORD.findall(_SYNTAX.sub(" ", pattern_text)))
    return tuple(dict.fromkeys(w for w in words if w not in _STOP))


# A CUDA error's prefix before a runtime text ("CUDA error: ", "cuda runtime error (2) : ")
_TEXT_PREFIX = r"(?:CUDA(?: runtime)? error(?: \(\d+\))? ?: ?)?"


class _Sentence:
    """One sentence read loosely: its entry, its words, and its regexes (each compiled on first use)."""

    __slots__ = ("_regexes", "anchor_words", "entry", "pattern_text", "text", "words")

    def __init__(self, entry: CatalogEntry, pattern_text: str, text: str = "") -> None:
        self.entry, self.pattern_text, self.text = entry, pattern_text, text
        self.words = frozenset(sentence_words(re.escape(text) if text else pattern_text))
        self.anchor_words = frozenset(w.lower() for a in entry.anchors for w in _WORD.findall(a)) - _STOP
        self._regexes: dict[int, re.Pattern[str]] = {}

    def regexes(self) -> Iterator[re.Pattern[str]]:
        """Its regexes, the one for a message whole (punctuation aside) first, then cut at its start, at its end."""
        for n, make in enumerate((lambda p: p, start_cut_pattern, end_cut_pattern)):
            if n not in self._regexes:
                try:
                    self._regexes[n] = compile_pattern(make(loose_pattern(self.pattern_text)))
                except (ValueError, re.error, RecursionError):
                    self._regexes[n] = re.compile("(?!)")
            yield self._regexes[n]


class Loose:
    """The catalog's sentences and the runtime's texts, read loosely (``reads``)."""

    def __init__(self, catalog: Catalog) -> None:
        from .vocabulary import TEXT_RULE, load_vocabulary, specific_text

        sentences = []
        for entry in catalog.entries:
            if entry.pattern_text == TEXT_RULE:
                for codes in load_vocabulary().texts.values():
                    text = codes[0].text.rstrip(".")
                    if specific_text(text):
                        pattern = _TEXT_PREFIX + re.escape(text).replace("\\ ", " ")
                        sentences.append(_Sentence(entry, pattern, text))
            elif entry.pattern_text != "(?!)" and entry.cuts:
                sentences.append(_Sentence(entry, entry.pattern_text))
        self.sentences = sentences
        shared = Counter(w for s in sentences for w in s.words)
        self.distinctive = frozenset(w for w, n in shared.items() if n <= _COMMON)
        # how much a word tells a sentence from the others (its inverse document frequency)
        self.weight = {w: math.log(len(sentences) / n) for w, n in shared.items()}

    def candidates(self, line: str) -> list[_Sentence]:
        """The sentences whose words ``line`` holds enough of to be worth trying, those it holds most of first."""
        held = {w.lower() for w in _WORD.findall(line)}
        scored = []
        for n, s in enumerate(self.sentences):
            weight = sum(self.weight[w] for w in s.words & held)
            if weight >= min(_ENOUGH_WITH_VALUE, _SHARE * self.total(s)):
                scored.append((-weight, n, s))
        return [s for _, _, s in sorted(scored, key=lambda t: (t[0], t[1]))]

    def total(self, sentence: _Sentence) -> float:
        return sum(self.weight[w] for w in sentence.words)

    def matches(self, sentence: _Sentence, line: str) -> list[re.Match[str]]:
        """``sentence``'s pieces in ``line`` that keep enough of it, longest first: whole, else cut at its start,
        else at its end. Each is tried at every word's start (not ``finditer``: a short piece found first would
        hide a longer one that starts inside it)."""
        starts = [0, *(m.start() for m in _WORD_START.finditer(line))]
        for regex in sentence.regexes():
            found = []
            for at in dict.fromkeys(starts):
                m = regex.match(line, at)
                if m is not None and m.group(0).strip() and self.enough(sentence, m):
                    found.append(m)
            if found:
                return sorted(found, key=lambda m: (m.start() - m.end(), m.start()))
        return []

    def enough(self, sentence: _Sentence, m: re.Match[str]) -> bool:
        """Whether a piece keeps enough of its sentence to say which message it is: four words at least (a value
        counts as one); a word that says something failed, where the sentence has one ("NVIDIA driver on your
        system" is no error without "Found no"); for a catalog sentence a word of its anchors (the words its
        author chose to tell it by: a sentence's tail is often boilerplate, "message was printed above"); and
        enough of its words, each weighed by how few sentences share it, a value read (a file name, a version)
        making up for some."""
        spans = [m.span(g) for g, v in m.groupdict().items() if v and v.strip()]
        said = m.group(0)
        for start, end in sorted(spans, reverse=True):  # the words of a value are not the sentence's
            said = said[: start - m.start()] + " " + said[end - m.start() :]
        if len(said.split()) + len(spans) < 4:
            return False
        held = {w.lower() for w in _WORD.findall(said)}
        if sentence.words & _FAILURE and not held & _FAILURE:
            return False
        words = held & sentence.words
        if not sentence.text and not words & sentence.anchor_words:
            return False
        weight = sum(self.weight.get(w, 0.0) for w in words)
        whole = self.total(sentence)
        return weight >= min(_ENOUGH, _SHARE * whole) or (bool(spans) and weight >= min(_ENOUGH_WITH_VALUE, whole / 2))


# ---------------------------------------------------------------- the scanner's last resort

_LOOSE: dict[int, tuple[Catalog, Loose]] = {}
# A source line a traceback quotes: the sentence in its string literal is what the program would print, not what
# it printed (the message itself follows, whole, where it was printed)
_SOURCE = re.compile(
    r"[`>\s]*(?:raise|return|print|assert|yield|warnings\.warn|[\w.]*log(?:ger|ging)?\.\w+|[\w.]+ ?\+?=)"
    r"[ (][^\n]*?[fr]?[\"']"
)


def loosen(catalog: Catalog) -> Loose:
    """The catalog read loosely, built on first use (a text something else reads never needs it)."""
    return built_once(_LOOSE, catalog, Loose)


def pieces(catalog: Catalog, line: str) -> Iterator[tuple[CatalogEntry, re.Match[str], re.Match[str]]]:
    """The pieces of sentences ``line`` holds that keep enough of them, the likeliest first, each as (its entry,
    the match to decode, the match to show): a runtime text is decoded as the whole text it is a piece of."""
    if len(line) < 8 or len(line) > _LONGEST or _SOURCE.match(line):
        return
    from .align import with_values

    line = _RUNAWAY.sub(lambda d: d.group(0)[:12], line)  # (no version has 13 digits; long runs cost backtracking)
    loose = loosen(catalog)
    found: list[tuple[CatalogEntry, re.Match[str], re.Match[str]]] = []
    for sentence in loose.candidates(line):
        for m in loose.matches(sentence, line):
            if not sentence.text:
                found.extend((sentence.entry, read, read) for read in with_values(loose, sentence, line, m))
                continue
            whole = sentence.entry.pattern.fullmatch(sentence.text)
            if whole is not None:
                found.append((sentence.entry, whole, m))
    # of the likeliest kind, a piece that reads the values goes first: a title that puts a value before its sentence
    # ("8.0.5 but source was compiled with: 8.1.0: Loaded runtime CuDNN library") holds a piece of the sentence
    # without them and one of another sentence of that kind with them
    if found:
        kind = found[0][0].kind
        found.sort(key=lambda f: -_values(f[1]) if f[0].kind == kind else 0)
    yield from found
    from .align import aligned
    from .wordrules import word_rules

    words = list(word_rules(catalog, line))
    if not words:
        aligns = list(aligned(loose, line))
        yield from aligns
        if not aligns:  # last, the sentence's words in any order (``bag``)
            from .align import in_any_order

            yield from in_any_order(loose, line)
        return
    # a paraphrase that reads the values of a kind a word rule names goes first ("cuDNN compiled (7102) and runtime
    # (7005) mismatch" is cuDNN's words of conflict and a sentence's two versions)
    aligns = list(aligned(loose, line))
    most = {e.kind: max(_values(m) for w, m, _ in words if w.kind == e.kind) for e, _, _ in words}
    richer = [a for a in aligns if a[0].kind in most and _values(a[1]) > most[a[0].kind]]
    yield from richer
    yield from words
    yield from (a for a in aligns if a not in richer)


def _values(m: re.Match[str]) -> int:
    return sum(1 for v in m.groupdict().values() if v)
