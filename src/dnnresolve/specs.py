"""A requirement as the user or a file writes it (``tensorflow-gpu==1.0``, ``jax[cuda12]>=0.4``), read by
``packaging`` with a bound on the numbers in it, and read once however often it repeats."""

from __future__ import annotations

from packaging.requirements import Requirement

MAX_VERSION_DIGITS = 30  # no release number is longer; Python refuses to read one of more than 4300 digits


def parse_requirement(text: str) -> Requirement:
    """A PEP 508 requirement, as ``packaging`` reads it, whose versions are numbers this program can compare.

    Raises InvalidRequirement for both: ``torch==7777...`` (thousands of digits) passes ``packaging``'s
    grammar, then crashes the first comparison. The same text read again (a monorepo's hundred copies of
    ``torch==2.1.0``) gets the same object back: requirements are never changed once read."""
    req = _parsed.get(text)
    if req is None:
        req = _parse(text)
        if len(_parsed) < _PARSED_MAX:
            _parsed[text] = req
    return req


_parsed: dict[str, Requirement] = {}
_PARSED_MAX = 100_000


def _parse(text: str) -> Requirement:
    from packaging.requirements import InvalidRequirement

    req = Requirement(text)
    for spec in req.specifier:
        if _too_long_number(spec.version):
            too_long = f"version {spec.version[:12]}... has a number longer than {MAX_VERSION_DIGITS} digits"
            raise InvalidRequirement(too_long)
    return req


def _too_long_number(version: str) -> bool:
    run = 0
    for ch in version:
        run = run + 1 if ch.isdigit() else 0
        if run > MAX_VERSION_DIGITS:
            return True
    return False
