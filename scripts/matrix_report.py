#!/usr/bin/env python3
"""Coverage of the compatibility matrix: rows per framework, oldest and newest release, rows that state their
wheels' GPU code, tables' sizes.

Usage: scripts/matrix_report.py [--json] [MATRIX.toml]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from dnnresolve.matrix import load_matrix


def main(argv: list[str]) -> int:
    as_json = "--json" in argv
    paths = [a for a in argv if not a.startswith("--")]
    m = load_matrix(paths[0] if paths else None)
    packages: dict[str, dict[str, object]] = {}
    for f in m.frameworks:
        p = packages.setdefault(
            f.package,
            {"rows": 0, "releases": set(), "oldest": f.version, "newest": f.version, "os": set(), "pins": 0, "code": 0},
        )
        p["rows"] = int(p["rows"]) + 1  # type: ignore[call-overload]
        p["releases"].add(f.version)  # type: ignore[attr-defined]
        p["os"].update(f.os)  # type: ignore[attr-defined]
        p["oldest"] = min(p["oldest"], f.version)  # type: ignore[type-var]
        p["newest"] = max(p["newest"], f.version)  # type: ignore[type-var]
        if f.sm or f.ptx or any(r.sm or r.ptx for r in f.install):  # the GPU code its wheels carry is stated
            p["code"] = int(p["code"]) + 1  # type: ignore[call-overload]
    for pin in m.wheel_pins:
        if pin.package in packages:
            packages[pin.package]["pins"] = int(packages[pin.package]["pins"]) + 1  # type: ignore[call-overload]
    report = {
        "matrix": str(m.path),
        "frameworks": {
            name: {
                "rows": p["rows"],
                "releases": len(p["releases"]),  # type: ignore[arg-type]
                "oldest": str(p["oldest"]),
                "newest": str(p["newest"]),
                "os": sorted(p["os"]),  # type: ignore[call-overload]
                "wheel_pins": p["pins"],
                "gpu_code_rows": p["code"],
            }
            for name, p in sorted(packages.items())
        },
        "tables": {
            "framework": len(m.frameworks),
            "wheel_pins": len(m.wheel_pins),
            "cuda": len(m.cuda),
            "cuda_family": len(m.cuda_families),
            "cudnn": len(m.cudnn),
            "gpu": len(m.gpus),
        },
        "newest_cuda": str(max(c.version for c in m.cuda)) if m.cuda else None,
        "newest_cudnn": str(max(c.version for c in m.cudnn)) if m.cudnn else None,
    }
    if as_json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"matrix: {report['matrix']}")
    print(f"{'package':<22} {'rows':>5} {'releases':>8} {'pins':>5} {'code':>5}  {'oldest':<12} {'newest':<12} os")
    for name, p in report["frameworks"].items():  # type: ignore[attr-defined]
        print(
            f"{name:<22} {p['rows']:>5} {p['releases']:>8} {p['wheel_pins']:>5} {p['gpu_code_rows']:>5}  "
            f"{p['oldest']:<12} {p['newest']:<12} " + ",".join(p["os"])
        )
    print("tables: " + ", ".join(f"{k}={v}" for k, v in report["tables"].items()))  # type: ignore[attr-defined]
    print(f"newest CUDA: {report['newest_cuda']}, newest cuDNN: {report['newest_cudnn']}")
    print("code: rows that state the GPU code (sm, ptx) their wheels carry; scripts/verify_archs.py checks them")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
