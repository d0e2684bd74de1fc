#!/usr/bin/env python3
"""List the releases a package index serves that no matrix row covers, for each framework package and system.

Run by hand (it asks PyPI; the tests run it against a loopback index):
    scripts/verify_coverage.py [--package torch] [--index-url URL] [--matrix FILE]

For every package the matrix's [[framework]] rows name (a row's `aliases` count for those names too), it reads
the index's PEP 691 JSON page and takes each final, non-yanked release that has a wheel for the system: Linux
(manylinux, linux_x86_64) or Windows (win_amd64); a wheel for any platform (py3-none-any) counts for every
system the package has rows for. Then, per system:

- MISSING: a release between the oldest and the newest row of that system that no row covers. A difference.
- STALE:   the index's newest release is newer than every row of the package, on any system. A difference.
- older / newer: releases before the system's oldest row, or after its newest while another system goes on
  (TensorFlow's Windows GPU builds stop at 2.10; CPU-only `tensorflow` 1.x). Printed for a reader to judge.
- named: releases of a name the framework stopped publishing GPU builds under, which the rows of its own name
  cover (jaxlib after 0.4.29 is jax[cuda12]); `dnnresolve plan` answers those the same way.

Exit status: 0 when there is no difference, 1 when there is one, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.request
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import Version

from dnnresolve.matrix import load_matrix
from dnnresolve.model import FrameworkRelease

PYPI = "https://pypi.org/simple"
SYSTEMS = ("linux", "windows")


def systems_of(filename: str) -> set[str]:
    """The systems a wheel installs on ("any" for a platform-free wheel); an sdist or a bad name: none."""
    try:
        _, _, _, tags = parse_wheel_filename(filename)
    except InvalidWheelFilename:
        return set()
    found = set()
    for tag in tags:
        if tag.platform == "any":
            found.add("any")
        elif tag.platform.endswith("x86_64") and "linux" in tag.platform:
            found.add("linux")
        elif tag.platform == "win_amd64":
            found.add("windows")
    return found


def index_releases(index_url: str, package: str) -> dict[Version, set[str]]:
    """Each final, non-yanked release on the index with the systems its wheels are for."""
    request = urllib.request.Request(
        f"{index_url.rstrip('/')}/{package}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        files = json.load(response)["files"]
    releases: dict[Version, set[str]] = defaultdict(set)
    for f in files:
        if f.get("yanked"):
            continue
        found = systems_of(f["filename"])
        if not found:
            continue
        version = parse_wheel_filename(f["filename"])[1]
        if version.is_prerelease or version.is_devrelease:
            continue
        releases[version] |= found
    return releases


def short(versions: list[Version], limit: int = 12) -> str:
    text = " ".join(str(v) for v in versions[:limit])
    return text + (f" ... ({len(versions)} in all)" if len(versions) > limit else "")


def check(
    package: str, rows: list[FrameworkRelease], releases: dict[Version, set[str]], everything: list[FrameworkRelease]
) -> tuple[list[str], int]:
    """Lines to print for one package, and how many of them are differences. ``everything``: all the matrix's rows,
    for the framework's own name where ``package`` is an alias of it."""
    lines: list[str] = []
    differ = 0
    owners = sorted({r.package for r in rows if r.package != package})
    renamed = {
        v: owner
        for v in releases
        for owner in reversed(owners)
        if not any(r.matches(v) for r in rows) and any(o.package == owner and o.matches(v) for o in everything)
    }
    releases = {v: on for v, on in releases.items() if v not in renamed}
    if renamed:
        by_owner: dict[str, list[Version]] = defaultdict(list)
        for v, owner in renamed.items():
            by_owner[owner].append(v)
        for owner, versions in sorted(by_owner.items()):
            lines.append(f"named   {package}: the rows of {owner} answer for {short(sorted(versions))}")
    systems = sorted({s for r in rows for s in r.os if s in SYSTEMS})
    for system in systems:
        own = [r for r in rows if system in r.os]
        oldest = min(r.version for r in own)
        newest = max(r.version for r in own)
        uncovered = sorted(
            v for v, on in releases.items() if (system in on or "any" in on) and not any(r.matches(v) for r in own)
        )
        missing = [v for v in uncovered if oldest < v < newest]
        older = [v for v in uncovered if v < oldest]
        newer = [v for v in uncovered if v > newest]
        if missing:
            differ += 1
            lines.append(f"MISSING {package} {system}: {short(missing)}")
        if older:
            lines.append(f"older   {package} {system}, before the oldest row ({oldest}): {short(older)}")
        if newer:
            lines.append(f"newer   {package} {system}, after the newest {system} row ({newest}): {short(newer)}")
    newest_row = max(r.version for r in rows)
    newest_index = max(releases, default=None)
    if newest_index is not None and newest_index > newest_row and not any(r.matches(newest_index) for r in rows):
        differ += 1
        lines.append(f"STALE   {package}: the index has {newest_index}, the matrix ends at {newest_row}")
    if not differ and not any(line.startswith(("older", "newer")) for line in lines):
        lines.append(f"ok      {package}: every release from {min(r.version for r in rows)} on is covered")
    return lines, differ


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--package", help="only this package")
    ap.add_argument("--index-url", default=PYPI, help=f"a PEP 691 simple index (default {PYPI})")
    ap.add_argument("--matrix", help="this matrix instead of the packaged one")
    args = ap.parse_args()
    m = load_matrix(args.matrix)
    by_name: dict[str, list[FrameworkRelease]] = defaultdict(list)
    for row in m.frameworks:
        for name in row.names:
            by_name[name].append(row)
    wanted = canonicalize_name(args.package) if args.package else None
    if wanted is not None and wanted not in by_name:
        print(f"verify_coverage: the matrix has no rows for {args.package}", file=sys.stderr)
        return 2
    differ = 0
    for package in sorted(by_name):
        if wanted is not None and package != wanted:
            continue
        lines, n = check(package, by_name[package], index_releases(args.index_url, package), list(m.frameworks))
        differ += n
        print("\n".join(lines))
    print(f"{differ} difference(s)")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
