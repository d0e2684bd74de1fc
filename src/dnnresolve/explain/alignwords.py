"""The words of a catalog sentence and of a line as the alignment reading of paraphrases reads them (``align``,
#22): each word's stem ("failed", "fails" -> "fail"), a failure said another way as one word ("cannot" -> "not"),
the words of one name as one ("nvidia-container-cli"), a sentence's values (its named groups of a shaped value), the
words its regex says a message may not have (in an alternation or an optional group), and its guards (a negative
lookahead)."""

from __future__ import annotations

import contextlib
import re
from functools import lru_cache

from .datafile import _class_end, _group_end, compile_pattern, split_flags

__all__ = ["FAILURE", "FINE", "NEWS", "STOP", "Unit", "denies_other", "line_words", "sentence_units", "stem"]

_SYNTAX = re.compile(r"\(\?P=\w+\)|\(\?[aiLmsux-]+\)|\\[A-Za-z]|\[[^\]]*\]")
# a line's words, and the "n't" of "isn't", "can't" (read as "not")
_TOKEN = re.compile(r"[A-Za-z]{2,}|(?<=n)['’]t\b|\d+(?:\.\d+)*")
_NT = re.compile(r"n\\?['’]t\b")  # "couldn't" in a sentence: "couldn" and "not", as a line's words read it
_CHUNK = re.compile(r"[^\s|()]+")  # a name of a sentence ("nvidia-container-cli"): its words are one
_GROUP = re.compile(r"(?<!\\)\(\?(?:P<|!|=|<[=!])")  # a named group, or a look around
STOP = frozenset(
    re.findall(
        r"\w+",
        "a an and are as at be but by for from has have in is it its of on or so than that the this to was were "
        "which with your you isn doesn didn wasn aren don won can couldn wouldn does did do been being when while",
    )
)
# One word for the ways a title says a thing failed or is absent
_SAME = {"cannot": "not", "unable": "not", "'t": "not", "’t": "not", "failure": "fail"}
_SUFFIXES = ("ations", "ation", "ities", "ity", "ies", "ing", "ed", "es", "s", "e")


@lru_cache(maxsize=4096)
def stem(word: str) -> str:
    """``word`` lower case, without its inflection ("failed", "fails" -> "fail"; "libraries" -> "library"), a
    negation or failure said another way as one word ("cannot", "unable" -> "not")."""
    w = word.lower()
    w = _SAME.get(w, w)
    if len(w) <= 4:
        return w
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 4:
            return w[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return w


# Words that say something failed: a sentence that has one is read only where the line has one
FAILURE = frozenset(
    map(
        stem,
        re.findall(
            r"\w+",
            "no not failed error mismatch incompatible incompatibility unsupported insufficient old outdated missing "
            "unknown invalid unsatisfied unavailable ignoring undefined unexpected lose lost wrong",
        ),
    )
)


# Words that say all is well
FINE = frozenset(
    map(stem, re.findall(r"\w+", "works working worked fine success successful successfully fixed solved"))
)

# Words that announce a change (a release note, a feature request, a pull request's title)
NEWS = frozenset(
    map(
        stem,
        re.findall(r"\w+", "bump bumped add added adds feat feature support supports enable enabled release released"),
    )
)


class Unit:
    """A word of a sentence (its stem), or a value it reads (a named group's regex). The words of one name
    ("nvidia-container-cli", "libcudnn_cnn_infer") are one word (``compound``), each a ``share`` of it."""

    __slots__ = ("compound", "group", "guard", "name", "names", "optional", "share", "stem")

    def __init__(
        self, stem: str = "", name: str = "", group: re.Pattern[str] | None = None, guard: re.Pattern[str] | None = None
    ) -> None:
        self.stem, self.name, self.group, self.guard = stem, name, group, guard
        self.compound, self.share, self.optional = 0, 1.0, False
        self.names: frozenset[str] = frozenset()  # the words a value may be (a group's own: "CUDAExecutionProvider")


def _optional(body: str) -> list[bool]:
    """Which characters of a regex are inside an alternation or an optional group: words the regex itself says a
    message may not have, which a title leaves out at no cost."""
    optional = [False] * len(body)
    open_groups: list[list[int]] = []  # [start, whether it has alternatives]
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i = _class_end(body, i)
            continue
        if c == "(":
            open_groups.append([i, 0])
        elif c == "|":
            if not open_groups:
                return [True] * len(body)
            open_groups[-1][1] = 1
        elif c == ")" and open_groups:
            start, alternatives = open_groups.pop()
            if alternatives or body[i + 1 : i + 2] in ("?", "*") or body.startswith("{0", i + 1):
                optional[start : i + 1] = [True] * (i + 1 - start)
        i += 1
    return optional


_LIBRARY_NAME = r"(?=(?:lib)?[A-Za-z][\w+-]*?(?:[.,]so(?:\.\d+)*|\.dll|(?:\.\d+)*\.dylib)(?![\w-]))"


def sentence_units(pattern_text: str) -> list[Unit]:
    flags, body = split_flags(pattern_text)
    units: list[Unit] = []
    optional = _optional(body)

    def words(start: int, end: int) -> None:
        for chunk in _CHUNK.finditer(body, start, end):
            text = _SYNTAX.sub(" ", _NT.sub("n not", chunk.group(0)))
            made = [Unit(stem=s) for s in map(stem, re.findall(r"[A-Za-z]{2,}", text)) if s not in STOP]
            for u in made:
                u.compound, u.share, u.optional = len(units) + len(made), 1 / len(made), optional[chunk.start()]
            units.extend(made)

    i = 0
    while (found := _GROUP.search(body, i)) is not None:
        j = found.start()
        words(i, j)
        try:
            end = _group_end(body, j)
        except ValueError:
            return units
        group = body[j:end]
        if group.startswith("(?!"):  # what may not follow the word before: a guard ("error: (?!load\b)")
            with contextlib.suppress(re.error, RecursionError):
                units.append(Unit(guard=compile_pattern(r"[\W_]*(?:" + group[3:-1] + ")")))
            i = end
            continue
        if group.startswith(("(?=", "(?<")) and not group.startswith("(?P"):  # said again where it is read
            i = end
            continue
        name = group[4 : group.index(">")]
        try:
            regex = compile_pattern(flags + group)
        except (re.error, RecursionError):
            regex = None
        # a value of a shape only: a free group (a GPU's name, any word) would read whatever is there; a library's
        # group reads a library file name ('libnvinfer.so.6', "(cudnn64_7.dll)"), the shape the loader's words name
        if regex is not None and name == "lib":
            with contextlib.suppress(re.error, RecursionError):
                regex = compile_pattern(flags + _LIBRARY_NAME + group)
        if regex is not None and not any(regex.fullmatch(t) for t in ("", "word", "two words")):
            units.append(Unit(name=name, group=regex))
            units[-1].optional = optional[j]
            units[-1].names = frozenset(stem(w) for w in re.findall(r"[A-Za-z]{2,}", _SYNTAX.sub(" ", group[3:])))
        else:
            words(j + group.index(">") + 1, end)
        i = end
    words(i, len(body))
    return units


def line_words(line: str) -> list[tuple[str, int, int]]:
    """A line's words (stems; "" for a number) and where each is, its stop words left out."""
    return [
        (stem(t.group(0)) if not t.group(0)[0].isdigit() else "", t.start(), t.end())
        for t in _TOKEN.finditer(line)
        if t.group(0).lower() not in STOP
    ]


def denies_other(tokens: list[tuple[str, int, int]], stems: frozenset[str]) -> bool:
    """Whether a negation among a line's words (``line_words``) says no to a word that is not one of a sentence's
    ``stems`` ("Torch not slower when compiled with CUDA enabled", "no problems with the NVIDIA driver")."""
    return any(
        s in ("no", "not") and k + 1 < len(tokens) and tokens[k + 1][0] and tokens[k + 1][0] not in stems
        for k, (s, _, _) in enumerate(tokens)
    )
