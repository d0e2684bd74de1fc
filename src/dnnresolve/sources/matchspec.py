"""A small reader for conda's MatchSpec, the forms environment.yml files use.

``channel::name version build``, ``name=1.4`` (fuzzy: 1.4.*), ``name==1.4`` (exact), ``name>=1.4,<2``,
``name 1.4.*``, ``name=1.4=py36_0``, ``name[version='>=1.4']``. Conda versions become PEP 440
specifiers where they can; anything else keeps its text and has no specifier.
"""

from __future__ import annotations

import re

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from ..records import record

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")


class MatchSpecError(ValueError):
    pass


@record(frozen=True)
class MatchSpec:
    name: str
    version: str = ""  # conda's version expression, as written ("10.1", "=10.1", ">=1.4,<2")
    build: str = ""
    channel: str = ""
    raw: str = ""

    @property
    def specifier(self) -> SpecifierSet | None:
        """The version expression as PEP 440, or None when it has none or conda-only syntax (``|``)."""
        return conda_version_to_specifier(self.version)

    @property
    def exact_version(self) -> str:
        """The version a ``name=X`` / ``name==X`` / ``name X`` spec names, without wildcards; "" for ranges."""
        v = self.version.lstrip("=").rstrip("*").rstrip(".")
        if not v or re.search(r"[<>!|,~ ]", v):
            return ""
        return v


def parse_matchspec(text: str) -> MatchSpec:
    raw = text.strip()
    s = raw
    channel = ""
    if "::" in s:
        channel, s = s.split("::", 1)
        channel = channel.strip()
    s = s.strip()
    brackets = ""
    m = re.search(r"\[(.*)\]\s*$", s)
    if m:
        brackets, s = m.group(1), s[: m.start()].strip()
    name_m = _NAME.match(s)
    if not name_m:
        raise MatchSpecError(f"not a conda package spec: {raw!r}")
    name = name_m.group(0).lower()
    rest = s[name_m.end() :].strip()
    version, build = "", ""
    if rest:
        if rest.startswith("=") and not rest.startswith("=="):
            # name=1.4 or name=1.4=build: fuzzy version, then a build string
            parts = rest[1:].split("=", 1)
            version = "=" + parts[0].strip()
            build = parts[1].strip() if len(parts) > 1 else ""
        elif rest[0] in "<>!=~":
            parts = rest.split()
            version = re.sub(r"\s+", "", parts[0])
            build = parts[1] if len(parts) > 1 else ""
        else:
            parts = rest.split()
            version = parts[0]
            build = parts[1] if len(parts) > 1 else ""
    for key, value in re.findall(r"(\w+)\s*=\s*['\"]?([^'\",]+)['\"]?", brackets):
        if key == "version":
            version = value.strip()
        elif key == "build":
            build = value.strip()
        elif key == "channel":
            channel = value.strip()
    return MatchSpec(name, version, build, channel, raw)


def conda_version_to_specifier(version: str) -> SpecifierSet | None:
    v = version.strip()
    if not v or v == "*":
        return SpecifierSet()
    if "|" in v or re.search(r"\d{31}", v):  # "|": conda-only syntax; 31 digits: no version, and no int
        return None
    out = []
    for part in v.split(","):
        part = part.strip()
        if not part:
            continue
        if part.startswith("="):
            if part.startswith("=="):
                out.append(part)
                continue
            part = part[1:].rstrip("*").rstrip(".")
            out.append(f"=={part}.*" if part else "")
        elif part[0] in "<>!~":
            out.append(part)
        elif part.endswith("*"):
            out.append("==" + part.rstrip("*").rstrip(".") + ".*")
        else:
            # a bare conda version is a fuzzy match when it has no operator: 1.4 matches 1.4.x
            out.append(f"=={part}.*")
    try:
        return SpecifierSet(",".join(p for p in out if p))
    except InvalidSpecifier:
        return None
