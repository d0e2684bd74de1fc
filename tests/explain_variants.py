"""Synthetic variants of the real messages explain is tested and tuned on, as users quote them (#22): a title or a
truncated log line that lost its first words or its last, all lower case, without its punctuation, behind a
prefix ("[Bug] ", "Error: ") or followed by words of the reporter's own. Each variant is made from the message
explain reads (the first diagnosis's matched text), never from the corpus's held-back part.

Paraphrases (``paraphrases``) go further: words left out inside the message, both ends cut, its failure said in
other words.

``python tests/explain_variants.py [--paraphrases]`` prints how many variants (or paraphrases) of each sort keep
their kind (and versions).
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
        if where in skip:
            continue
        for sort, made in (make or variants)(message).items():
            row = out.setdefault(sort, [0, 0, 0])
            for text in made:
                after = reading(text)
                row[0] += 1
                row[1] += kind_kept(before, after)
                row[2] += all_kept(before, after)
    return {k: (v[0], v[1], v[2]) for k, v in out.items()}


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


if __name__ == "__main__":
    total = [0, 0, 0]
    counts = paraphrase_tally() if "--paraphrases" in sys.argv else tally()
    for sort, (n, kind, both) in counts.items():
        print(f"{sort:12} {n:5}  kind {kind:5} {100 * kind / n:5.1f}%  kind+versions {both:5} {100 * both / n:5.1f}%")
        total = [total[0] + n, total[1] + kind, total[2] + both]
    n, kind, both = total
    print(f"{'TOTAL':12} {n:5}  kind {kind:5} {100 * kind / n:5.1f}%  kind+versions {both:5} {100 * both / n:5.1f}%")
