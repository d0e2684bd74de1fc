"""Did-you-mean: the names dnnresolve knows that are nearest to one it does not (a package, a GPU, a command-line
option), and the GPU names people type (``4090``, ``rtx4090``, ``RTX 4090 Ti``) read against the matrix's table.
Imported only when a name is not found: an error path, or a ``--gpu`` spelled otherwise than the table; ``plan``
imports it to find that its names are all known, and difflib only loads when one is not."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .pkgname import canonicalize_name
from .records import record

_WORDS = re.compile(r"[-_.]+")
_GPU_TOKENS = re.compile(r"[a-z]+|\d+")
# Vendor and product-line words nvidia-smi prints or leaves out by generation ("Tesla T4", "NVIDIA T4", "T4"):
# they never tell two GPUs apart. ("TITAN" does: "GeForce GTX TITAN X" and "TITAN X (Pascal)" differ.)
_GPU_BRANDS = frozenset({"nvidia", "geforce", "tesla", "quadro"})
_MODEL_DIGITS = 3  # "4090", "6000", "100": a model number; "4" or "80" alone names nothing


def did_you_mean(names: Sequence[str], quoted: bool = True) -> str:
    """``did you mean 'a'?``, ``did you mean 'a' or 'b'?``, ``did you mean 'a', 'b' or 'c'?``; "" for none."""
    if not names:
        return ""
    shown = [f"'{n}'" if quoted else n for n in names]
    return "did you mean " + (", ".join(shown[:-1]) + " or " if len(shown) > 1 else "") + shown[-1] + "?"


def _ratio(a: str, b: str) -> float:
    import difflib

    return difflib.SequenceMatcher(None, a, b).ratio()


# ------------------------------------------------------------------ package names


def package_suggestions(name: str, known: Iterable[str], limit: int = 3) -> list[str]:
    """The known package names ``name`` is likely a slip of the keyboard for, nearest first.

    A slip changes letters inside one word (``tensorfow-gpu``, ``pytorch``, ``torhc``) or the separators between
    words (``tensorflowgpu``). A sibling package is not a slip and is never offered: one that differs in a whole
    short word (``tensorflow-cpu``), only in its digits (``mxnet-cu118``), or by a word more or less
    (``onnxruntime`` beside ``onnxruntime-gpu``).
    """
    query = canonicalize_name(name)
    words = _WORDS.split(query)
    scores: dict[str, float] = {}
    for candidate in known:
        known_name = canonicalize_name(candidate)
        theirs = _WORDS.split(known_name)
        if known_name == query:
            continue
        if "".join(theirs) == "".join(words):
            scores[candidate] = 1.0
            continue
        if len(theirs) != len(words):
            continue
        differ = [(a, b) for a, b in zip(words, theirs) if a != b]
        if len(differ) != 1:
            continue
        score = _word_slip(*differ[0])
        if score:
            scores[candidate] = max(score, scores.get(candidate, 0.0))
    if 1.0 in scores.values():  # the same letters, other separators: surely that one
        scores = {n: v for n, v in scores.items() if v == 1.0}
    return sorted(scores, key=lambda n: (-scores[n], n))[:limit]


def unknown_packages(names: Iterable[str], known: Sequence[str]) -> str:
    """Why ``plan`` refuses the names the matrix does not know, each with the names it is a slip for; "" when it
    knows them all."""
    canonical = {canonicalize_name(k) for k in known}
    unknown = [n for n in dict.fromkeys(names) if canonicalize_name(n) not in canonical]
    if not unknown:
        return ""
    listing = "'dnnresolve matrix' lists the packages it knows"
    if len(unknown) == 1:
        near = did_you_mean(package_suggestions(unknown[0], known))
        return f"{unknown[0]} is not in the compatibility matrix; {near or listing}"
    pieces = []
    for name in unknown:
        near = did_you_mean(package_suggestions(name, known))
        pieces.append(f"{name} ({near})" if near else name)
    return f"not in the compatibility matrix: {', '.join(pieces)}; {listing}"


def _word_slip(typed: str, known: str) -> float:
    """How surely ``typed`` is ``known`` mistyped (0 when it is not): letters swapped, or a close spelling of a
    word long enough that a changed letter does not make another word."""
    if _digitless(typed) == _digitless(known):  # cu118 / cu117, cuda118 / cuda117: another build, not a slip
        return 0.0
    if sorted(typed) == sorted(known):  # jxa / jax
        return 0.95
    if min(len(typed), len(known)) < 4:  # cpu / gpu
        return 0.0
    score = _ratio(typed, known)
    return score if score >= 0.8 else 0.0


def _digitless(word: str) -> str:
    return "".join(c for c in word if not c.isdigit())


# ------------------------------------------------------------------ command-line options


def option_suggestion(word: str, options: Iterable[str]) -> str | None:
    """The option ``--drvier`` (or ``--drvier=470``) was meant to be, from the parser's own: ``--driver``."""
    if not word.startswith("--") or len(word) < 4:
        return None
    return nearest_word(word.split("=", 1)[0], [o for o in options if o.startswith("--")])


def unrecognized(words: Sequence[str], options: Sequence[str], command: str = "") -> str:
    """argparse's "unrecognized arguments", each option followed by the one meant: ``--drvier (did you mean
    --driver?)``; or, for one of ``command``'s own options given before it, where it goes."""
    shown = []
    for word in words:
        if command and word.split("=", 1)[0] in options:  # `dnnresolve --json plan ...`
            shown.append(f"{word} (give it after '{command}')")
            continue
        near = option_suggestion(word, options)
        shown.append(f"{word} (did you mean {near}?)" if near else word)
    return f"unrecognized arguments: {' '.join(shown)}"


def nearest_word(word: str, choices: Sequence[str]) -> str | None:
    """The one of ``choices`` ``word`` is a slip for (``plna`` -> ``plan``), if any is near enough."""
    import difflib

    found = difflib.get_close_matches(word, choices, n=1, cutoff=0.7)
    return found[0] if found else None


# ------------------------------------------------------------------ GPU names


def gpu_words(name: str) -> tuple[str, ...]:
    """The words that identify a GPU: lower case, letters apart from digits, no punctuation nor brand
    (``NVIDIA GeForce RTX 4090``, ``rtx4090`` and ``RTX-4090`` are all ``('rtx', '4090')``)."""
    return tuple(t for t in _GPU_TOKENS.findall(name.lower()) if t not in _GPU_BRANDS)


def typed_forms(words: tuple[str, ...]) -> list[tuple[str, ...]]:
    """What people type for a GPU whose name has ``words``: the words themselves, and the model number without
    the series letters before it (``rtx a6000`` -> ``a6000``, ``6000``), while a model number is left."""
    forms = [words]
    for i in range(1, len(words)):
        if not words[i - 1].isalpha():
            break
        rest = words[i:]
        if any(w.isdigit() and len(w) >= _MODEL_DIGITS for w in rest):
            forms.append(rest)
    return forms


@record(frozen=True)
class GpuRow:
    """One row of the GPU table as the lookup needs it: its position, its name and aliases, its capability."""

    position: int
    name: str
    names: tuple[str, ...]
    capability: str


@record(frozen=True)
class GpuGuess:
    """What a typed GPU name reads as: ``found`` (a row) when every row it can mean has one compute capability,
    else ``nearest``: the names to offer instead (the rows it can mean, or the closest spellings)."""

    found: GpuRow | None
    nearest: tuple[str, ...] = ()
    meant: tuple[str, ...] = ()  # every row name it can mean, when found through a shortening
    ambiguous: int = 0  # how many rows it can mean, of more than one compute capability, when not found


def guess_gpu(typed: str, rows: Sequence[GpuRow], limit: int = 3) -> GpuGuess:
    """``typed`` read against the table, the surest reading first:

    1. the words of a name or alias (``rtx4090``, ``GeForce RTX 4090``), then a model number alone (``4090``,
       ``a6000``);
    2. a name followed by words the table does not list (``RTX 4090 Ti``, ``A100-SXM4-40GB`` when only ``A100``
       is): the longest such name, unless a following word is one the table tells GPUs apart by (``RTX 6000 Ada``
       is not ``Quadro RTX 6000``: the table lists both);
    3. some of a name's words, in any order (``H100`` for ``H100 80GB HBM3``, ``A100 40GB SXM``).

    A reading that leaves rows of more than one compute capability is no answer: their names are offered.
    """
    words = gpu_words(typed)
    if not words:
        return GpuGuess(None)
    forms = [
        (form, row, i == 0) for row in rows for name in row.names for i, form in enumerate(typed_forms(gpu_words(name)))
    ]
    for full in (True, False):
        exact = [row for form, row, whole in forms if whole is full and form == words]
        if exact:
            return _one_capability(exact, words, limit)
    apart = _telling_words([(form, row) for form, row, whole in forms if whole])
    longer = [
        (len(form), row)
        for form, row, _ in forms
        if len(form) < len(words) and words[: len(form)] == form and not apart.intersection(words[len(form) :])
    ]
    if longer:
        most = max(n for n, _ in longer)
        return _one_capability([row for n, row in longer if n == most], words, limit)
    wanted = sorted(words)
    within = [row for form, row, whole in forms if whole and _contains(sorted(form), wanted)]
    if within:
        return _one_capability(within, words, limit)
    numbers = {w for w in words if w.isdigit() and len(w) >= _MODEL_DIGITS}
    pool = [(form, row) for form, row, _ in forms if numbers.intersection(form)] or [(f, r) for f, r, _ in forms]
    spelled = {" ".join(form): row for form, row in reversed(pool)}  # (reversed: the first row keeps a spelling)
    import difflib

    close = difflib.get_close_matches(" ".join(words), list(spelled), n=limit * 3, cutoff=0.6)
    return GpuGuess(None, _names([spelled[c] for c in close], words, limit))


def _telling_words(forms: list[tuple[tuple[str, ...], GpuRow]]) -> set[str]:
    """The words that, following a name, make another GPU in the table: ``ada`` (``Quadro RTX 6000`` 7.5,
    ``RTX 6000 Ada Generation`` 8.9), ``m`` (``GTX 950``, ``GTX 950M``), learnt from the names of rows that
    differ in compute capability."""
    capabilities: dict[tuple[str, ...], set[str]] = {}
    for form, row in forms:
        capabilities.setdefault(form, set()).add(row.capability)
    telling: set[str] = set()
    for form, row in forms:
        for k in range(1, len(form)):
            if capabilities.get(form[:k], {row.capability}) - {row.capability}:
                telling.add(form[k])
    return telling


def _contains(haystack: list[str], needles: list[str]) -> bool:
    """Whether the sorted words ``needles`` are among the sorted words ``haystack`` (repeats counted)."""
    rest = iter(haystack)
    return all(any(n == h for h in rest) for n in needles)


def _one_capability(candidates: list[GpuRow], words: tuple[str, ...], limit: int) -> GpuGuess:
    """Found when the rows ``words`` can mean agree on the compute capability (all that the answers need);
    otherwise none, with the rows to choose from."""
    rows = list({r.position: r for r in candidates}.values())
    if len({r.capability for r in rows}) == 1:
        meant = tuple(r.name for r in rows) if len(rows) > 1 else ()
        return GpuGuess(rows[0], meant=meant)
    return GpuGuess(None, _names(rows, words, limit + 2), ambiguous=len(rows))


def _names(rows: list[GpuRow], words: tuple[str, ...], limit: int) -> tuple[str, ...]:
    """Distinct row names, nearest to ``words`` first (file order breaks ties)."""
    unique = list({r.name: r for r in rows})
    typed = " ".join(words)
    unique.sort(key=lambda n: -_ratio(typed, " ".join(gpu_words(n))))
    return tuple(unique[:limit])
