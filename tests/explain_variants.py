"""Synthetic variants of the real messages explain is tested and tuned on, as users quote them (#22): a title or a
truncated log line that lost its first words or its last, all lower case, without its punctuation, behind a
prefix ("[Bug] ", "Error: ") or followed by words of the reporter's own. Each variant is made from the message
explain reads (the first diagnosis's matched text), never from the corpus's held-back part.

Paraphrases (``paraphrases``) go further: words left out inside the message, both ends cut, its failure said in
other words. Reorderings (``reorders``) say its words in another order; titles (``titles``) dress it as a thread's
title. Negatives (tests/data/explain_negatives.toml) name CUDA's words but no error: explain must read nothing.

``python tests/explain_variants.py [--paraphrases|--reorders|--titles|--negatives]`` prints how many variants (or
paraphrases, reorderings, titles) of each sort keep their kind (and versions), or which negatives are read.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from dnnresolve.explain import diagnose

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DATA = Path(__file__).parent / "data"

Reading = tuple[str, dict[str, str], dict[str, str]] | None


def texts() -> list[tuple[str, str]]:
    """(where, text) of every tune-part corpus message and every message of explain_messages.toml."""
    corpus = [json.loads(line) for line in (DATA / "explain_corpus" / "corpus.jsonl").read_text("utf-8").splitlines()]
    out = [(str(m["id"]), str(m["text"])) for m in corpus if m["part"] == "tune"]
    messages = tomllib.loads((DATA / "explain_messages.toml").read_text(encoding="utf-8"))["message"]
    out.extend((str(m["source"]), str(m["text"])) for m in messages)
    return out


def reading(text: str) -> Reading:
    """The first diagnosis's kind and versions (values lower-cased: a variant may change a name's case)."""
    found = diagnose(text.splitlines())
    if not found:
        return None
    d = found[0]
    return d.kind, {k: v.lower() for k, v in d.found.items()}, {k: v.lower() for k, v in d.expected.items()}


def messages() -> Iterator[tuple[str, str, Reading]]:
    """(where, the message explain reads in it, its reading) for each text whose message reads alone as in its
    text."""
    for where, text in texts():
        found = diagnose(text.splitlines())
        if not found:
            continue
        message = found[0].text.strip()
        alone = reading(message)
        if alone is not None and alone[0] == found[0].kind:
            yield where, message, alone


_WORDS = re.compile(r"\S+")
PREFIXES = ("[Bug] ", "Error: ", "Help! ", "[Question] getting ", "BUG: ")
SUFFIXES = (" when running in docker", " #1234", " (Windows 11)", " after upgrading", " ???")
_PUNCTUATION = re.compile(r"""[:;,'"`()\[\]{}<>!?‘’“”]""")


def start_cuts(message: str) -> list[str]:
    """``message`` without its first one, two or three words, where four words at least remain."""
    words = [m.start() for m in _WORDS.finditer(message)]
    return [message[words[k] :] for k in (1, 2, 3) if len(words) - k >= 4]


def end_cuts(message: str) -> list[str]:
    """``message`` without its last one, two or three words, where four words at least remain."""
    ends = [m.end() for m in _WORDS.finditer(message)]
    return [message[: ends[-1 - k]] for k in (1, 2, 3) if len(ends) - k >= 4]


def unpunctuated(message: str) -> str:
    """``message`` without its quotes, brackets, colons and commas (a title typed in a hurry)."""
    return " ".join(_PUNCTUATION.sub(" ", message).split())


def variants(message: str) -> dict[str, list[str]]:
    """Each sort of variant of ``message``."""
    return {
        "start": start_cuts(message),
        "end": end_cuts(message),
        "lower": [message.lower()],
        "punctuation": [unpunctuated(message)],
        "prefix": [p + message for p in PREFIXES],
        "suffix": [message + s for s in SUFFIXES],
    }


def kind_kept(before: Reading, after: Reading) -> bool:
    return before is not None and after is not None and before[0] == after[0]


def all_kept(before: Reading, after: Reading) -> bool:
    return kind_kept(before, after) and before == after


def tally(
    skip: frozenset[str] = frozenset(), make: Callable[[str], dict[str, list[str]]] | None = None
) -> dict[str, tuple[int, int, int]]:
    """Per sort: (variants, kind kept, kind and versions kept), leaving out the messages named in ``skip``; the
    variants are ``make``'s (``variants`` unless given)."""
    out: dict[str, list[int]] = {}
    for where, message, before in messages():
        if where not in skip:
            _count(out, before, (make or variants)(message))
    return {k: (v[0], v[1], v[2]) for k, v in out.items()}


def _count(out: dict[str, list[int]], before: Reading, made_by_sort: dict[str, list[str]]) -> None:
    """Add to ``out`` (per sort: variants, kind kept, kind and versions kept) each variant's reading against
    ``before``, the reading of the message it was made from."""
    for sort, made in made_by_sort.items():
        row = out.setdefault(sort, [0, 0, 0])
        for text in made:
            after = reading(text)
            row[0] += 1
            row[1] += kind_kept(before, after)
            row[2] += all_kept(before, after)


# Paraphrases (#22): a title keeps a message's words in order but drops some in the middle, is cut at both ends, or
# says its failure in other words. Made, like the variants above, from tune-part messages only.
SWAPS = (
    ("could not", "cannot"),
    ("cannot", "can't"),
    ("unable to", "could not"),
    ("failed to", "fails to"),
    ("failed", "fails"),
    ("is not", "isn't"),
    ("not found", "missing"),
    ("no such file or directory", "not found"),
)


def middle_drops(message: str) -> list[str]:
    """``message`` without one word, or two words in a row, inside it (never its first or last), where five words
    at least remain: a title that leaves out what it takes for granted."""
    spans = [m.span() for m in _WORDS.finditer(message)]
    out = []
    for width in (1, 2):
        if len(spans) - width < 5:
            continue
        for k in range(1, len(spans) - width):
            out.append(message[: spans[k][0]] + message[spans[k + width - 1][1] :].lstrip())
    return out


def both_cuts(message: str) -> list[str]:
    """``message`` without one or two words at each end, where four words at least remain."""
    spans = [m.span() for m in _WORDS.finditer(message)]
    return [message[spans[a][0] : spans[-1 - b][1]] for a in (1, 2) for b in (1, 2) if len(spans) - a - b >= 4]


def swapped(message: str) -> list[str]:
    """``message`` with its failure said in other words ("cannot" for "could not", "fails" for "failed")."""
    out = []
    for old, new in SWAPS:
        changed = re.sub(rf"\b{re.escape(old)}\b", new, message, count=1, flags=re.I)
        if changed != message:
            out.append(changed)
    return out


def paraphrases(message: str) -> dict[str, list[str]]:
    """Each sort of paraphrase of ``message``; only the first line of a message of several (a title is one)."""
    line = message.splitlines()[0] if message.strip() else message
    return {"middle": middle_drops(line), "both": both_cuts(line), "swap": swapped(line)}


def paraphrase_tally() -> dict[str, tuple[int, int, int]]:
    """Per sort of paraphrase: (paraphrases, kind kept, kind and versions kept)."""
    return tally(make=paraphrases)


# Reordered and titled (#22): a title says a message's words in another order (its clauses swapped around a colon or
# a comma, the library or the name it is about first, "X not found" for "could not load X") or dresses it as a
# thread's title ("[Bug]", a framework's or a GPU's name, markdown, "on Windows?"). Made, like the paraphrases, from
# tune-part messages only.
_LIBRARY = re.compile(r"(?<![\w.\\/-])(?:lib)?[A-Za-z][\w+-]*?(?:\.so(?:\.\d+)*|\.dll|\.dylib)(?![\w])")
_NAMED = re.compile(
    _LIBRARY.pattern
    + r"|\b(?:sm|compute)_\d+a?\b|\b[A-Z]+_STATUS_[A-Z_]+\b|\bcuda(?:Error)?[A-Z]\w+|\b\w+ExecutionProvider\b"
)
_CLAUSE = re.compile(r"[:;,] | but | whereas | - ")
LIBRARY_PHRASES = (
    "{} not found",
    "missing {}",
    "failed to load {}",
    "{} could not be loaded",
    "cannot load {}",
    "failure loading {}",
    "{} is missing",
)
TITLES = (
    "[Bug] {}",
    "Error: {} on Windows",
    "Help: {}?",
    "[Bug] PyTorch 2.1: {} after upgrade",
    "TensorFlow GPU {} (RTX 4090)",
    "{} with RTX 3090 on Ubuntu 22.04",
    "`{}`",
    "**{}**",
    "help: `{}` after upgrade?",
)
LOWER_TITLES = ("[bug] {}", "{} on windows?", "error: {} after upgrading")


def _words(text: str) -> int:
    """How many words ``text`` says, a name (a library file, an architecture) or a path not counted."""
    return len(re.findall(r"[A-Za-z]{2,}", re.sub(r"\S*[/\\]\S*", " ", _NAMED.sub(" ", text))))


def _values(text: str) -> list[str]:
    """The names and versions ``text`` holds: a variant cut short must keep them (they say which message it is)."""
    return [*_NAMED.findall(text), *re.findall(r"\d+(?:\.\d+)+", text)]


def clause_swaps(message: str) -> list[str]:
    """``message`` with the text after a colon, a comma, "but" or a dash put first (each of its first three such
    places, where two words at least stand on each side)."""
    out = []
    places = [m for m in _CLAUSE.finditer(message) if not _inside_brackets(message, m.start())]
    for m in places[:3]:
        head, tail = message[: m.start()].strip(), message[m.end() :].strip().rstrip(".")
        if _words(head) >= 2 and _words(tail) >= 2:
            joint = m.group(0) if m.group(0).strip() not in ":;" else ": "
            out.append(f"{tail}{joint}{head}")
    return out


def _inside_brackets(text: str, at: int) -> bool:
    """Whether ``at`` is inside brackets (a version as a tuple, "(8, 5, 0)") or a quoted name."""
    before = text[:at]
    return before.count("(") > before.count(")") or before.count("[") > before.count("]") or before.count("'") % 2 == 1


def name_first(message: str) -> list[str]:
    """``message`` with the library, architecture, status or provider it names moved to its front ("libcudart.so.11.0:
    Could not load dynamic library")."""
    m = _NAMED.search(message)
    if m is None:
        return []
    before = re.sub(r"""[\s'"`‘’(\[]+$""", "", message[: m.start()])
    after = re.sub(r"""^['"`‘’)\]]+""", "", message[m.end() :])
    rest = " ".join(f"{before} {after}".split()).strip(" :,;")
    return [f"{m.group(0)}: {rest}"] if _words(rest) >= 2 else []


def library_phrases(message: str, library: str) -> list[str]:
    """The library file a loader's message says is missing (``library``, as explain reads it), said as users say it
    is absent ("missing cudart64_110.dll")."""
    m = _LIBRARY.search(message)
    if m is None or not library or m.group(0).lower() != library.lower():
        return []
    return [p.format(m.group(0)) for p in LIBRARY_PHRASES]


def rotations(message: str) -> list[str]:
    """``message``'s words from a third, a half, two thirds of the way on, then its first ones (phrases swapped
    where no punctuation marks them: "for CUDA runtime version CUDA driver version is insufficient"), where six
    words at least, and a word at least on each side, are not a name's."""
    words = _WORDS.findall(message)
    if len(words) < 6:
        return []
    out = []
    for k in dict.fromkeys((len(words) // 3, len(words) // 2, 2 * len(words) // 3)):
        if _words(" ".join(words[:k])) and _words(" ".join(words[k:])):
            out.append(" ".join(words[k:] + words[:k]))
    return out


def reorders(message: str, before: Reading) -> dict[str, list[str]]:
    """Each sort of reordering of ``message`` (read as ``before``)."""
    line = message.splitlines()[0] if message.strip() else message
    library = before[2].get("library", "") if before else ""
    return {
        "clauses": clause_swaps(line),
        "name_first": name_first(line),
        "library": library_phrases(line, library),
        "rotated": rotations(line),
    }


def titles(message: str) -> dict[str, list[str]]:
    """``message`` as a thread's title: a tag, a framework's or a GPU's name, markdown, lower case, a question."""
    line = message.splitlines()[0] if message.strip() else message
    named = _NAMED.search(line)
    ticked = [line[: named.start()] + f"`{named.group(0)}`" + line[named.end() :]] if named else []
    # a title that also says the message in another order or cuts it: each reordering, cut at its end or not, in
    # one title's dress (each in the next)
    kind = reading(line)
    moved = [*clause_swaps(line), *name_first(line)] if kind else []
    moved += [cut for text in moved for cut in end_cuts(text)[:1] if _values(cut) == _values(text)]
    return {
        "titled": [t.format(line) for t in TITLES],
        "lower_titled": [t.format(line.lower()) for t in LOWER_TITLES],
        "ticked": ticked,
        "titled_moved": [TITLES[n % len(TITLES)].format(text) for n, text in enumerate(moved)],
    }


def unique_messages() -> list[tuple[str, Reading]]:
    """Each message ``messages`` yields once, with its reading."""
    seen: dict[str, Reading] = {}
    for _, message, before in messages():
        seen.setdefault(message, before)
    return list(seen.items())


def family_tally(make: Callable[[str, Reading], dict[str, list[str]]]) -> dict[str, tuple[int, int, int]]:
    """Per sort of ``make``'s variants (``make(message, its reading)``), of each message once: (variants, kind kept,
    kind and versions kept)."""
    out: dict[str, list[int]] = {}
    for message, before in unique_messages():
        _count(out, before, make(message, before))
    return {k: (v[0], v[1], v[2]) for k, v in out.items()}


def reorder_tally() -> dict[str, tuple[int, int, int]]:
    return family_tally(reorders)


def title_tally() -> dict[str, tuple[int, int, int]]:
    return family_tally(lambda message, _: titles(message))


NEGATIVES = DATA / "explain_negatives.toml"


def negatives() -> list[str]:
    """Sentences that name CUDA's libraries, versions or checks but no error (tests/data/explain_negatives.toml)."""
    return [str(n["text"]) for n in tomllib.loads(NEGATIVES.read_text(encoding="utf-8"))["negative"]]


def false_positives() -> list[tuple[str, str]]:
    """(sentence, kind) of each negative sentence explain gives a diagnosis for."""
    out = []
    for text in negatives():
        found = diagnose([text])
        if found:
            out.append((text, found[0].kind))
    return out


def _print(counts: dict[str, tuple[int, int, int]]) -> None:
    total = [0, 0, 0]
    for sort, (n, kind, both) in counts.items():
        print(f"{sort:12} {n:5}  kind {kind:5} {100 * kind / n:5.1f}%  kind+versions {both:5} {100 * both / n:5.1f}%")
        total = [total[0] + n, total[1] + kind, total[2] + both]
    n, kind, both = total
    print(f"{'TOTAL':12} {n:5}  kind {kind:5} {100 * kind / n:5.1f}%  kind+versions {both:5} {100 * both / n:5.1f}%")


if __name__ == "__main__":
    if "--negatives" in sys.argv:
        wrong = false_positives()
        for text, kind in wrong:
            print(f"{kind:24} {text}")
        print(f"false positives {len(wrong)} of {len(negatives())}")
    elif "--reorders" in sys.argv:
        _print(reorder_tally())
    elif "--titles" in sys.argv:
        _print(title_tally())
    else:
        _print(paraphrase_tally() if "--paraphrases" in sys.argv else tally())
