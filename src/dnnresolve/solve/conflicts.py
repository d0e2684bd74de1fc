"""Co-installability: the nvidia-* wheels two requested releases pin, and whether one version satisfies both."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from ..artifact import split_local
from ..matrix import Matrix
from ..model import FrameworkRelease, WheelPins
from ..pkgname import canonicalize_name
from ..specs import parse_requirement
from .results import RequirementResult


def specifiers_intersect(a: SpecifierSet, b: SpecifierSet) -> bool:
    """Whether some version satisfies both sets, as pip's resolver would need one to exist.

    The versions worth trying are the boundaries the two sets name; an exact pin in either set is one.
    """
    probes: set[Version] = set()
    for s in (*a, *b):
        try:
            v = Version(s.version.replace(".*", ""))
        except InvalidVersion:
            continue
        probes.add(v)
        if s.operator in (">", "!="):
            probes.add(Version(f"{v}.post999"))
        if s.operator in ("<", "!="):
            probes.add(Version(_just_below(v)))
    return any(a.contains(v, prereleases=True) and b.contains(v, prereleases=True) for v in probes)


def _just_below(v: Version) -> str:
    release = list(v.release)
    for i in range(len(release) - 1, -1, -1):
        if release[i] > 0:
            release[i] -= 1
            return ".".join(str(x) for x in release[: i + 1]) + ".999"
    return "0"


@functools.lru_cache(maxsize=1024)
def pinned_specifiers(requires: tuple[str, ...]) -> dict[str, SpecifierSet]:
    """The nvidia-* pins of a wheel_pins row by package name, parsed once per process (check asks often)."""
    out: dict[str, SpecifierSet] = {}
    for text in requires:
        req = parse_requirement(text.split(";", 1)[0])  # the pin; its platform marker is not needed here
        out[canonicalize_name(req.name)] = req.specifier
    return out


def find_conflicts(results: Sequence[RequirementResult], matrix: Matrix) -> list[str]:
    """Pinned nvidia-* wheels of two requested releases that no single version satisfies."""
    pinned: list[tuple[str, dict[str, SpecifierSet]]] = []
    for r in results:
        best = r.best
        if best is None:
            continue
        wanted: dict[str, SpecifierSet] = {}
        for p in pins_met(r, best.release, matrix)[:1]:
            wanted.update(pinned_specifiers(p.requires))
        pinned.append((f"{r.requirement}", wanted))
    out = []
    for i, (name_a, a) in enumerate(pinned):
        for name_b, b in pinned[i + 1 :]:
            for dep in sorted(set(a) & set(b)):
                if not specifiers_intersect(a[dep], b[dep]):
                    out.append(
                        f"{name_a} needs {dep}{a[dep]} but {name_b} needs {dep}{b[dep]}: pip cannot install both"
                    )
    return out


def pins_met(r: RequirementResult, release: FrameworkRelease, matrix: Matrix) -> list[WheelPins]:
    """The nvidia-* pins pip would meet for this requirement: those of the extras it names (all of a row's
    extras, normalized: ``onnxruntime-gpu[cuda,cudnn]``, ``tensorflow[and_cuda]``; the row naming the most of
    them), the pinned patch release if the metadata of that one is known, else the newest known release the
    row covers. A requirement without extras meets the rows without one (torch's)."""
    asked = frozenset(canonicalize_name(e) for e in r.requirement.extras)
    return pins_of_form(release, asked, r.requirement.specifier, matrix)


def pins_of_form(
    release: FrameworkRelease, asked: frozenset[str], specifier: SpecifierSet, matrix: Matrix
) -> list[WheelPins]:
    """``pins_met`` for a requirement naming the (normalized) extras ``asked`` with ``specifier``."""
    pins = [p for p in matrix.wheel_pins_covered(release.names, release.covers) if p.extras <= asked]
    most = max((len(p.extras) for p in pins), default=0)
    pins = [p for p in pins if len(p.extras) == most]
    pinned, _, _, _ = split_local(specifier)
    exact = [p for p in pins if pinned.contains(p.version, prereleases=True)]
    return sorted(exact or pins, key=lambda p: p.version, reverse=True)
