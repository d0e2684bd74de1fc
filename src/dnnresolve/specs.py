"""A requirement as the user or a file writes it (``tensorflow-gpu==1.0``, ``jax[cuda12]>=0.4``), read as
PEP 508 reads it, with a bound on the numbers in it, and read once however often it repeats.

The common forms (a name, extras, version specifiers) are read here; anything else (markers, URLs,
parentheses, ``===``) goes to ``packaging.requirements``, whose import costs more than the rest of a
``plan`` start-up put together. Both give the same ``Requirement``; tests hold the two readers equal.
"""

from __future__ import annotations

import re

from .records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from packaging.markers import Marker
    from packaging.specifiers import SpecifierSet

__all__ = ["MAX_VERSION_DIGITS", "InvalidRequirement", "Requirement", "parse_requirement"]

MAX_VERSION_DIGITS = 30  # no release number is longer; Python refuses to read one of more than 4300 digits


class InvalidRequirement(ValueError):
    """A requirement that cannot be read; the message says why."""


@record(frozen=True)
class Requirement:
    """One requirement: the name as written, its extras, version specifiers, URL and environment marker."""

    name: str
    extras: frozenset[str] = frozenset()
    specifier: SpecifierSet = field(default_factory=lambda: _specifier_set(""))
    url: str | None = None
    marker: Marker | None = None

    def __str__(self) -> str:
        parts = [self.name]
        if self.extras:
            parts.append(f"[{','.join(sorted(self.extras))}]")
        if self.specifier:
            parts.append(str(self.specifier))
        if self.url:
            parts.append(f" @ {self.url}")
            if self.marker:
                parts.append(" ")
        if self.marker:
            parts.append(f"; {self.marker}")
        return "".join(parts)


def parse_requirement(text: str) -> Requirement:
    """A PEP 508 requirement whose versions are numbers this program can compare.

    Raises InvalidRequirement for both: ``torch==7777...`` (thousands of digits) passes the grammar,
    then crashes the first comparison. The same text read again (a monorepo's hundred copies of
    ``torch==2.1.0``) gets the same object back: requirements are never changed once read."""
    req = _parsed.get(text)
    if req is None:
        req = _parse(text)
        if len(_parsed) < _PARSED_MAX:
            _parsed[text] = req
    return req


_parsed: dict[str, Requirement] = {}
_PARSED_MAX = 100_000

# PEP 508's name and the specifier operators but ``===``; a version is checked by SpecifierSet.
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_ONE_SPEC = r"(?:~=|==|!=|<=|>=|<|>)[ \t]*[A-Za-z0-9.*+!_-]+"
_SIMPLE_TEXT = (
    rf"[ \t]*({_NAME})[ \t]*"
    rf"(?:\[[ \t]*({_NAME}(?:[ \t]*,[ \t]*{_NAME})*)?[ \t]*\])?[ \t]*"
    rf"({_ONE_SPEC}(?:[ \t]*,[ \t]*{_ONE_SPEC})*)?[ \t]*"
)
_simple: re.Pattern[str] | None = None


def _specifier_set(text: str) -> SpecifierSet:
    # packaging's specifier and version classes cost a first question 0.4x a bare interpreter start: imported
    # when a requirement is read, not by every command that imports this module (explain of a message)
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(text)


def exact_version(spec: SpecifierSet) -> str | None:
    """The one release ``==X`` names (no wildcard), as written; else None."""
    clauses = list(spec)
    if len(clauses) != 1 or clauses[0].operator not in ("==", "===") or clauses[0].version.endswith("*"):
        return None
    return clauses[0].version


def _parse(text: str) -> Requirement:
    global _simple
    if _simple is None:
        _simple = re.compile(_SIMPLE_TEXT)
    m = _simple.fullmatch(text)
    if m is None:
        req = _parse_with_packaging(text)
    else:
        name, extras, specs = m.groups()
        from packaging.specifiers import InvalidSpecifier

        try:
            specifier = _specifier_set(specs or "")
        except InvalidSpecifier as exc:
            raise InvalidRequirement(str(exc)) from None
        found = frozenset(e.strip() for e in extras.split(",")) if extras else frozenset()
        req = Requirement(name, found, specifier)
    for spec in req.specifier:
        if _too_long_number(spec.version):
            raise InvalidRequirement(
                f"version {spec.version[:12]}... has a number longer than {MAX_VERSION_DIGITS} digits"
            )
    return req


def _parse_with_packaging(text: str) -> Requirement:
    from packaging.requirements import InvalidRequirement as PackagingInvalid
    from packaging.requirements import Requirement as PackagingRequirement

    try:
        req = PackagingRequirement(text)
    except PackagingInvalid as exc:
        raise InvalidRequirement(_one_line(str(exc))) from None
    return Requirement(req.name, frozenset(req.extras), req.specifier, req.url, req.marker)


def _one_line(message: str) -> str:
    """packaging's message on one line: it draws the text and a caret under the place on lines of their own."""
    lines = message.splitlines()
    if len(lines) < 3 or "^" not in lines[-1]:
        return " ".join(line.strip() for line in lines)
    column = lines[-1].index("^") - (len(lines[-2]) - len(lines[-2].lstrip()))
    return f"{' '.join(line.strip() for line in lines[:-2])} (at character {column + 1})"


def _too_long_number(version: str) -> bool:
    run = 0
    for ch in version:
        run = run + 1 if ch.isdigit() else 0
        if run > MAX_VERSION_DIGITS:
            return True
    return False
