"""What the catalog and the vocabulary share, below both: the kinds, the error for a malformed data file, reading
one (bounded, as UTF-8 TOML), and how their regexes compile. The catalog loads the decoders and the vocabulary;
both load this, and this loads neither, so there is no cycle among them."""

from __future__ import annotations

import os
import re

from ..errors import MatrixError
from ..lazyre import lazy_compile
from ..schema import toml_loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    Owner = TypeVar("Owner")
    Made = TypeVar("Made")

KINDS = (
    "cudnn_version_mismatch",
    "cuda_version_mismatch",
    "driver_too_old",
    "missing_library",
    "arch_unsupported",
    "init_failure",
    "no_cuda_build",
    "other",
)


class CatalogError(MatrixError):
    """The error catalog (or the vocabulary) file is malformed."""


CATALOG_MAX_BYTES = 16 << 20


def _read_bytes(p: str | os.PathLike[str]) -> bytes:
    from ..readfile import read_regular

    try:
        data = read_regular(p, CATALOG_MAX_BYTES + 1)
    except OSError as exc:
        raise CatalogError(f"cannot read the error catalog: {exc.strerror or exc}", str(p)) from exc
    if len(data) > CATALOG_MAX_BYTES:
        raise CatalogError(f"larger than {CATALOG_MAX_BYTES >> 20} MiB: not an error catalog", str(p))
    return data


def _read(p: str | os.PathLike[str]) -> str:
    try:
        return _read_bytes(p).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CatalogError(f"cannot read the error catalog: {exc}", str(p)) from exc


def _toml(text: str, path: str) -> dict[str, Any]:
    try:
        return toml_loads(text)
    except Exception as exc:  # tomllib.TOMLDecodeError
        m = re.search(r"line (\d+)", str(exc))
        raise CatalogError(f"not valid TOML: {exc}", path, int(m.group(1)) if m else None) from exc


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """Compile a catalog regex; a literal space also matches the line break of a wrapped message, and letters
    match in any case (a title, a shouted log line)."""
    out: list[str] = []
    in_class = False
    escaped = False
    for ch in pattern:
        if escaped:
            out.append(ch)
            escaped = False
        elif ch == "\\":
            out.append(ch)
            escaped = True
        elif in_class:
            out.append(ch)
            if ch == "]":
                in_class = False
        elif ch == "[":
            out.append(ch)
            in_class = True
        elif ch == " ":
            out.append("[ \\n]")
        else:
            out.append(ch)
    return re.compile("".join(out), re.IGNORECASE)


# Where a message cut short may end: the end of its line or text, after any dots or brackets a title leaves there
# ("... or one", "...was printed a…"); not before a quote, which ends a string a traceback's source line quotes
_CUT_END = r"(?=[ \t.…)\]]*(?:\n|\Z))"
_GLOBAL_FLAGS = lazy_compile(r"\(\?[aiLmsux]+\)")
_QUANTIFIER = lazy_compile(r"[*+?](?:[?+])?|\{\d*(?:,\d*)?\}[?+]?")


def cut_pattern(pattern: str) -> str:
    """``pattern`` read as a message cut short (a title, a truncated log line): a regex that matches every prefix of
    what ``pattern`` matches, ending where the text or a line ends. A cut falls between atoms, inside a word, or
    inside a group taken once or optionally; a named group cut inside reads as no value (a version is read whole
    or not at all). ValueError for a pattern it cannot split (unbalanced)."""
    flags, pattern = split_flags(pattern)
    return flags + _cut_alternatives(pattern, outer=True)


def cut_start_pattern(pattern: str, atoms: int = 3) -> str:
    """What every match of ``cut_pattern(pattern)`` starts with: each alternative's first ``atoms`` atoms, each cut
    as there, and nothing after them; so it matches wherever that regex does (and elsewhere), and is cheap to
    search for. ValueError as ``cut_pattern``."""
    flags, pattern = split_flags(pattern)
    return flags + "(?:" + "|".join(_cut_sequence(a[:atoms], outer=True, last="") for a in _split(pattern)) + ")"


def built_once(cache: dict[int, tuple[Owner, Made]], owner: Owner, build: Callable[[Owner], Made]) -> Made:
    """What ``build`` makes of ``owner`` (the catalog's lexicon, its loose reading), made on first use and kept in
    ``cache`` while that very object lives on (an id can be reused by a later one)."""
    held = cache.get(id(owner))
    if held is None or held[0] is not owner:
        held = (owner, build(owner))
        cache[id(owner)] = held
    return held[1]


def split_flags(pattern: str) -> tuple[str, str]:
    """``pattern``'s global flags (``(?i)``) and the rest: a rewritten pattern must keep them at its front."""
    m = _GLOBAL_FLAGS.match(pattern)
    return (m.group(0), pattern[m.end() :]) if m else ("", pattern)


def _cut_alternatives(pattern: str, outer: bool = False) -> str:
    alternatives = _split(pattern)
    return "(?:" + "|".join(_cut_sequence(a, outer) for a in alternatives) + ")"


def _cut_sequence(atoms: list[str], outer: bool = False, last: str = _CUT_END) -> str:
    out = last  # (after the last atom: where a message cut there ends, or nothing, for a prefix of the sequence)
    for n, atom in reversed(list(enumerate(atoms))):
        inside = _cut_inside(atom)
        # (the whole pattern cut before its first atom would be an empty match at every line's end)
        end = "" if outer and n == 0 else f"|{_CUT_END}"
        out = f"(?:{atom}{out}" + (f"|{inside}" if inside else "") + f"{end})"
    return out


def _cut_inside(atom: str) -> str:
    """A cut within one atom: inside a word, or inside a non-capturing group taken once or optionally."""
    if re.fullmatch(r"\w{2,}", atom):
        out = _CUT_END
        for ch in reversed(atom[1:-1]):
            out = f"(?:{ch}{out}|{_CUT_END})"
        return f"{atom[0]}{out}"
    m = re.fullmatch(r"\((?:\?:|\?P<\w+>)(.*)\)\??", atom, re.DOTALL)
    if m and _balanced(m.group(1)):
        # the whole group is tried first, with its names; this copy, cut inside, reads none (a name is defined once)
        return _cut_alternatives(re.sub(r"\(\?P<\w+>", "(?:", m.group(1)))
    return ""


def _balanced(body: str) -> bool:
    try:
        _split(body)
    except ValueError:
        return False
    return True


def _split(pattern: str) -> list[list[str]]:
    """The top-level alternatives of ``pattern``, each as its atoms (a word, an escape, a class or a group, with its
    quantifier)."""
    alternatives: list[list[str]] = [[]]
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "|":
            alternatives.append([])
            i += 1
            continue
        if c == "\\":
            j = i + 2
        elif c == "[":
            j = _class_end(pattern, i)
        elif c == "(":
            j = _group_end(pattern, i)
        elif re.match(r"\w", c):
            j = i + 1
            while j < n and re.match(r"\w", pattern[j]):
                j += 1
            q = _QUANTIFIER.match(pattern, j)
            if q and j - i > 1:  # the quantifier is the last letter's: it is an atom of its own
                alternatives[-1].append(pattern[i : j - 1])
                i = j - 1
        else:
            j = i + 1
        q = _QUANTIFIER.match(pattern, j)
        if q:
            j = q.end()
        alternatives[-1].append(pattern[i:j])
        i = j
    return alternatives


def _class_end(pattern: str, i: int) -> int:
    j = i + 1
    if pattern[j : j + 1] == "^":
        j += 1
    if pattern[j : j + 1] == "]":
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    if j >= len(pattern):
        raise ValueError("unbalanced [")
    return j + 1


def _group_end(pattern: str, i: int) -> int:
    depth, j = 0, i
    while j < len(pattern):
        c = pattern[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            j = _class_end(pattern, j)
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    raise ValueError("unbalanced (")
