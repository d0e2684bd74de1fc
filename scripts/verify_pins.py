#!/usr/bin/env python3
"""Ask pip's own resolver which nvidia-* wheels each pip-era release really pins, and list every
[[wheel_pins]] row of the matrix that differs. (Which releases the matrix lacks: scripts/verify_coverage.py.)

Run by hand (it needs PyPI; the tests never run it):
    scripts/verify_pins.py [--package torch]
pip runs in --dry-run --report mode: metadata only, no wheels are installed.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from dnnresolve.matrix import load_matrix

# pip matches platform tags exactly: name every manylinux glibc a Linux x86-64 machine of today may have.
PLATFORMS = ["manylinux2014_x86_64", *(f"manylinux_2_{n}_x86_64" for n in range(17, 40))]


def resolved_pins(spec: str, python: str, no_deps: bool = False) -> dict[str, str] | None:
    """The nvidia-* requirements (as their parent's metadata states them) of the resolved install set; with
    ``no_deps``, of the framework's own metadata only (jax[cuda12_pip] asks for a jaxlib that only its find-links
    page has, so pip cannot resolve it from PyPI)."""
    framework = canonicalize_name(Requirement(spec).name)
    asked = {canonicalize_name(e) for e in Requirement(spec).extras}
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--isolated",
            "--dry-run",
            "--quiet",
            "--ignore-installed",
            "--target",
            str(Path(tmp) / "t"),
            "--report",
            str(report),
        ]
        if no_deps:
            # the framework's own metadata only: pip may read it from an sdist (jax 0.4.7 has no wheel), which
            # it cannot do for another platform, and a pure-Python package's metadata is the same everywhere
            cmd.append("--no-deps")
        else:
            cmd += ["--only-binary=:all:", "--python-version", python]
            for p in PLATFORMS:
                cmd += ["--platform", p]
        proc = subprocess.run([*cmd, spec], capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            if not no_deps:
                print(f"  pip cannot resolve {spec}; reading its own metadata (--no-deps)", file=sys.stderr)
                return resolved_pins(spec, python, no_deps=True)
            print(f"  pip failed for {spec}: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            return None
        data = json.loads(report.read_text())
    pins: dict[str, str] = {}
    for item in data.get("install", []):
        # The framework and its own plugins (jax-cuda12-plugin, jax-cuda12-pjrt) state the pins; what the
        # nvidia-* wheels, cuda-toolkit and other dependencies ask of one another is not the release's.
        item_name = canonicalize_name(item["metadata"]["name"])
        if not item_name.startswith(framework):
            continue
        for text in item["metadata"].get("requires_dist", []) or []:
            req = Requirement(text)
            name = canonicalize_name(req.name)
            if not name.startswith(("nvidia-", "cuda-toolkit")):
                continue
            if req.marker is not None and not req.marker.evaluate(
                {
                    "extra": "",
                    "platform_machine": "x86_64",
                    "sys_platform": "linux",
                    "platform_system": "Linux",
                    "python_version": python,
                }
            ):
                extras = {canonicalize_name(e) for e in re.findall(r"extra == [\"']([^\"']+)[\"']", str(req.marker))}
                if not extras:
                    continue
                # the framework's own metadata states every extra's pins (jax 0.4.25: cuda11_pip, cuda12_pip,
                # cuda12); only the extras asked for count. A plugin's (with-cuda) come in through them.
                if item_name == framework and not extras & asked:
                    continue
            # Several resolved packages may state the same nvidia-* wheel (the plugin pins it, cusolver
            # asks for it bare): their specifiers all apply, so they combine.
            if str(req.specifier):
                combined = SpecifierSet(pins.get(name, "")) & req.specifier
                pins[name] = str(combined)
    return pins


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--package", help="only this package")
    args = ap.parse_args()
    m = load_matrix()
    differ = 0
    for row in m.wheel_pins:
        if args.package and row.package != canonicalize_name(args.package):
            continue
        spec = f"{row.package}[{row.extra}]=={row.version}" if row.extra else f"{row.package}=={row.version}"
        got = resolved_pins(spec, row.python or "3.11")
        if got is None:
            continue
        want = {canonicalize_name(Requirement(t).name): str(Requirement(t).specifier) for t in row.requires}
        want = {k: str(SpecifierSet(v)) for k, v in want.items() if v}
        got = {k: str(SpecifierSet(v)) for k, v in got.items()}
        if got != want:
            differ += 1
            print(f"DIFFERS {spec} (matrix line {row.line}):")
            for name in sorted(set(got) | set(want)):
                if got.get(name) != want.get(name):
                    print(f"  {name}: matrix {want.get(name)!r} pip {got.get(name)!r}")
        else:
            print(f"ok      {spec}")
    print(f"{differ} difference(s)")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
