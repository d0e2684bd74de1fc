"""dnnresolve performance benchmark: each figure is a ratio against a floor measured in the same run.

Run it through ``scripts/bench``, which builds the wheel and installs it in a fresh virtual environment, as a
user's installation is (the wheel ships the compiled matrix and catalog). Prints a table, the import-time list
of the start-up case, and writes JSON (``--out``, default bench-out/bench.json). Not a test: it never fails
on a budget, it reports (the exit status is 0 either way).

Every start-up is a first question: nothing is kept between runs (the user cache directory is empty and must
stay so), the same work a fresh CI container or a new shell pays.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CLASSIC = (
    "Loaded runtime CuDNN library: 5005 (compatibility version 5000) but source was compiled with 5103 "
    "(compatibility version 5100).  If using a binary install, upgrade your CuDNN library to match."
)
FLOOR_NAME = "dnnresolve-bench-floor"


def floor_wheel(directory: Path) -> Path:
    """A do-nothing package with one console script, as a wheel built by hand (no build backend needed)."""
    name, version = "dnnresolve_bench_floor", "0"
    files = {
        f"{name}/__init__.py": "def main() -> int:\n    return 0\n",
        f"{name}-{version}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {FLOOR_NAME}\nVersion: {version}\n",
        f"{name}-{version}.dist-info/WHEEL": "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{name}-{version}.dist-info/entry_points.txt": f"[console_scripts]\n{FLOOR_NAME} = {name}:main\n",
    }
    path = directory / f"{name}-{version}-py3-none-any.whl"
    record = []
    with zipfile.ZipFile(path, "w") as z:
        for arc, text in files.items():
            data = text.encode()
            z.writestr(arc, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{arc},sha256={digest},{len(data)}")
        record.append(f"{name}-{version}.dist-info/RECORD,,")
        z.writestr(f"{name}-{version}.dist-info/RECORD", "\n".join(record) + "\n")
    return path


def install_floor(work: Path) -> Path:
    script = BIN / FLOOR_NAME
    if not script.exists():
        wheel = floor_wheel(work)
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
            check=True,
        )
    return script


def timed(cmd: Sequence[str], env: dict[str, str], stdin: Any = subprocess.DEVNULL) -> tuple[float, int, int]:
    """(wall seconds, exit status, peak RSS in kB) of one run."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    return wall, p.returncode, usage.ru_maxrss


def interleaved(
    cmds: dict[str, list[str]], env: dict[str, str], runs: int, envs: dict[str, dict[str, str]] | None = None
) -> dict[str, list[float]]:
    """Run each command ``runs`` times, round-robin, so that machine noise hits all of them alike; ``envs``
    gives some commands an environment of their own."""
    envs = envs or {}
    times: dict[str, list[float]] = {k: [] for k in cmds}
    for k, c in cmds.items():  # warm the operating system's file cache
        timed(c, envs.get(k, env))
    for _ in range(runs):
        for k, c in cmds.items():
            times[k].append(timed(c, envs.get(k, env))[0])
    return times


def row(name: str, value: float, floor: float, budget: float | None, unit: str = "ms") -> dict[str, Any]:
    ratio = value / floor if floor else float("nan")
    return {
        "case": name,
        "value": round(value, 2),
        "unit": unit,
        "floor": round(floor, 2),
        "ratio": round(ratio, 2),
        "budget": budget,
        "ok": None if budget is None else ratio <= budget,
    }


# (name, arguments, budget: times the floor, or None for the record)
STARTUP = [
    ("plan --no-detect --json", ["plan", "tensorflow-gpu==1.0", "--no-detect", "--json"], 4.0),
    ("explain --json (one message)", ["explain", "--json", CLASSIC], 3.0),
    ("plan --json (detects; no GPU)", ["plan", "tensorflow-gpu==1.0", "--json"], 6.0),
    ("detect --json (no GPU)", ["detect", "--json"], 5.0),
    ("plan (text, detects)", ["plan", "tensorflow-gpu==1.0"], None),
    ("explain (text)", ["explain", CLASSIC], None),
    ("matrix --json", ["matrix", "tensorflow-gpu==1.0.0", "--json"], None),
]


def startup(env: dict[str, str], runs: int) -> tuple[list[dict[str, Any]], list[str]]:
    """First questions, each against the floor (a do-nothing console script of the same interpreter), medians of
    ``runs`` interleaved runs."""
    dn = str(BIN / "dnnresolve")
    cmds = {"floor": [str(BIN / FLOOR_NAME)], "python -c pass": [sys.executable, "-c", "pass"]}
    cmds.update({name: [dn, *args] for name, args, _ in STARTUP})
    budgets = {name: budget for name, _, budget in STARTUP}
    times = interleaved(cmds, env, runs)
    floor = statistics.median(times["floor"]) * 1000
    rows = [row(f"first question: {k}", statistics.median(ts) * 1000, floor, budgets.get(k)) for k, ts in times.items()]
    cache = Path(env["DNNRESOLVE_CACHE_DIR"])
    written = sorted(str(p.relative_to(cache)) for p in cache.rglob("*")) if cache.exists() else []
    rows.append(
        {
            "case": "first questions: files written to the user cache",
            "value": len(written),
            "unit": "",
            "floor": None,
            "ratio": None,
            "budget": "0",
            "ok": not written,
        }
    )
    # where a first question's time goes, by module (cumulative microseconds of the top-level imports)
    r = subprocess.run(
        [*cmds["plan --no-detect --json"]], env={**env, "PYTHONPROFILEIMPORTTIME": "1"}, capture_output=True, text=True
    )
    imports = []
    for line in r.stderr.splitlines():
        if line.startswith("import time:") and "imported package" not in line:
            _, cum, mod = line.split("|")
            if not mod.startswith("  "):  # top level
                imports.append((int(cum), mod.strip()))
    top = [f"{us / 1000:7.1f} ms  {mod}" for us, mod in sorted(imports, reverse=True)[:15]]
    return rows, top


def matrix_load(env: dict[str, str], runs: int) -> list[dict[str, Any]]:
    """load_matrix() plus the first query, modules already imported, in fresh processes, from the compiled matrix
    the wheel ships; the floor is the same from the TOML it was compiled from, parsed and validated (compiled data
    turned off)."""
    code = (
        # (packaging too: the matrix imports it when a release is first compared, #26; this case times the data)
        "import sys, time\nimport dnnresolve.matrix as m, dnnresolve.schema, dnnresolve.model\n"
        "import dnnresolve.matrix.parse\n"
        "import packaging.specifiers, packaging.version\n"
        "t = time.perf_counter()\nx = m.load_matrix(sys.argv[1] if len(sys.argv) > 1 else None)\n"
        "x.find('tensorflow-gpu', '==1.0'); x.gpu('Tesla K20m')\n"
        "print((time.perf_counter() - t) * 1000)\n"
    )

    def measure(extra: dict[str, str], *args: str) -> float:
        out = []
        for _ in range(runs):
            argv = [sys.executable, "-c", code, *args]
            r = subprocess.run(argv, env={**env, **extra}, capture_output=True, text=True)
            out.append(float(r.stdout))
        return statistics.median(out)

    cached = measure({})
    parsed = measure({"DNNRESOLVE_NO_MATRIX_CACHE": "1"}, str(ROOT / "data" / "compat_matrix.toml"))
    out = row("matrix load + query, compiled (ms; floor: parsed)", cached, parsed, None)
    out["ok"] = cached <= 5.0
    out["budget"] = "5 ms"
    return [out]


def check_files(work: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    rnd = random.Random(9)
    pool = [
        "numpy==1.26.4",
        "requests>=2.25",
        "torch==2.1.0",
        "tensorflow-gpu==1.0.0",
        "pandas<3",
        "jax[cuda12]==0.4.30",
        "scipy~=1.11",
        "# a comment",
        "",
        "rich>=12",
        "pyyaml==6.0.1",
        "onnxruntime-gpu==1.17.0",
        "tqdm",
        "scikit-learn>=1.3,<2",
        "cupy-cuda12x==13.0.0",
        "torchvision==0.16.0",
        "typing-extensions; python_version<'3.10'",
    ]
    d = work / "reqs"
    d.mkdir()
    files = []
    for i in range(1000):
        p = d / f"req{i:04d}.txt"
        p.write_text("\n".join(rnd.choice(pool) for _ in range(50)) + "\n")
        files.append(str(p))
    listing = work / "files.txt"
    listing.write_text("\n".join(files))
    floor_code = (
        "import sys\nfrom packaging.requirements import Requirement\n"
        "for f in open(sys.argv[1]).read().split('\\n'):\n"
        "    for line in open(f):\n        line = line.split('#')[0].strip()\n"
        "        if line:\n            Requirement(line)\n"
    )
    floor = min(timed([sys.executable, "-c", floor_code, str(listing)], env)[0] for _ in range(3))
    cmd = [str(BIN / "dnnresolve"), "check", "--json", *files]
    value = min(timed(cmd, env)[0] for _ in range(3))
    return [row("check: 1,000 files x 50 lines (s)", value, floor, 3.0, "s")]


def big_log(path: Path, size: int, distinct: bool = False) -> None:
    """``size`` bytes of TensorFlow-style log lines with 20 real error messages buried in it; ``distinct``:
    lines of random words instead, no two alike within 4 MB (the worst case for explain's search, which
    searches each distinct line of a block once)."""
    rnd = random.Random(1)
    noise = []
    if distinct:
        letters = "abcdefghijklmnopqrstuvwxyz"
        words = ["".join(rnd.choice(letters) for _ in range(rnd.randint(3, 9))) for _ in range(5000)]
        while sum(map(len, noise)) < 4 << 20:
            noise.append(" ".join(rnd.choice(words) for _ in range(12)) + f" id={rnd.getrandbits(64):x}\n")
    else:
        for i in range(2000):
            noise.append(
                f"2024-03-12 10:{i % 60:02d}:{i % 59:02d}.{i:06d}: I tensorflow/core/common_runtime/step.cc:"
                f"{i % 900}] step {i} loss={rnd.random():.4f} lr=0.001 throughput {rnd.random() * 2000:.1f} "
                "examples/sec\n"
            )
    block = "".join(noise).encode()
    errors = [
        CLASSIC.encode() + b"\n",
        b"ImportError: libcudart.so.8.0: cannot open shared object file: No such file or directory\n",
        b"CUDA driver version is insufficient for CUDA runtime version\n",
        b"RuntimeError: CUDA error: no kernel image is available for execution on the device\n",
    ]
    blocks = size // len(block)
    at = sorted(rnd.sample(range(blocks), 20))
    with open(path, "wb") as f:
        for b in range(blocks):
            f.write(block)
            if b in at:
                f.write(errors[at.index(b) % len(errors)])


def explain_log(work: Path, env: dict[str, str], size: int, distinct: bool = False) -> list[dict[str, Any]]:
    log = work / "big.log"
    big_log(log, size, distinct)
    floor_code = "import sys\nfor line in open(sys.argv[1], encoding='utf-8', errors='replace'):\n    pass\n"
    floor = min(timed([sys.executable, "-c", floor_code, str(log)], env)[0] for _ in range(2))
    cmd = [str(BIN / "dnnresolve"), "explain", "--json", "--no-detect", "--file", str(log)]
    runs = [timed(cmd, env) for _ in range(2)]  # the same statistic as the floor: the best of two
    wall, rss = min(r[0] for r in runs), max(r[2] for r in runs)
    log.unlink()
    if distinct:  # for the record: what a log that never repeats a line costs
        return [row(f"explain --file: {size / 1e9:.1f} GB of distinct lines (s)", wall, floor, None, "s")]
    out = row(f"explain --file: {size / 1e9:.1f} GB log (s)", wall, floor, 3.0, "s")
    mem = {
        "case": "explain --file: peak memory (MB)",
        "value": round(rss / 1024, 1),
        "unit": "MB",
        "floor": None,
        "ratio": None,
        "budget": "100 MB",
        "ok": rss / 1024 < 100,
    }
    return [out, mem]


def detect_cases(work: Path, env: dict[str, str], runs: int) -> list[dict[str, Any]]:
    """How long detection waits for a slow nvidia-smi: once, whatever the number of runs of it."""
    dn = str(BIN / "dnnresolve")
    base = statistics.median([timed([dn, "detect", "--json"], env)[0] for _ in range(max(3, runs // 4))])
    fake = work / "slowbin"
    fake.mkdir()
    smi = fake / "nvidia-smi"
    smi.write_text("#!/bin/sh\nsleep 0.5\necho 'NVIDIA-SMI has failed: no driver.'\nexit 9\n")
    smi.chmod(0o755)
    slow_env = {**env, "PATH": f"{fake}{os.pathsep}{env.get('PATH', '')}"}
    slow = statistics.median([timed([dn, "detect", "--json"], slow_env)[0] for _ in range(3)])
    waits = (slow - base) / 0.5
    return [
        {
            "case": "detect, nvidia-smi sleeps 0.5 s: waits (x 0.5 s)",
            "value": round(slow * 1000, 1),
            "unit": "ms",
            "floor": round(base * 1000, 1),
            "ratio": round(waits, 2),
            "budget": 1.3,
            "ok": waits <= 1.3,
        }
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--log-size", type=float, default=1.0, help="GB of log for explain --file")
    ap.add_argument("--out", default=str(ROOT / "bench-out" / "bench.json"))
    ap.add_argument("--skip", action="append", default=[], choices=["startup", "matrix", "check", "explain", "detect"])
    opts = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    # as a user runs it: inside the activated environment dnnresolve is installed in (the target Python is then
    # this interpreter, read in process; with no environment active, detection starts `python3` from PATH)
    env["VIRTUAL_ENV"] = sys.prefix
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.pop("CONDA_PREFIX", None)
    work = Path(tempfile.mkdtemp(prefix="dnnresolve-bench-"))
    env["DNNRESOLVE_CACHE_DIR"] = str(work / "cache")
    rows: list[dict[str, Any]] = []
    top: list[str] = []
    try:
        install_floor(work)
        if "startup" not in opts.skip:
            r, top = startup(env, opts.runs)
            rows += r
        if "matrix" not in opts.skip:
            rows += matrix_load(env, opts.runs)
        if "check" not in opts.skip:
            rows += check_files(work, env)
        if "explain" not in opts.skip:
            rows += explain_log(work, env, int(opts.log_size * 1e9))
            rows += explain_log(work, env, int(opts.log_size * 1e9), distinct=True)
        if "detect" not in opts.skip:
            rows += detect_cases(work, env, opts.runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{'case':52} {'value':>10} {'floor':>10} {'ratio':>7} {'budget':>8}  ok")
    for r in rows:
        ok = "" if r["ok"] is None else ("yes" if r["ok"] else "NO")
        fl = "" if r["floor"] is None else f"{r['floor']:.1f}"
        ra = "" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        print(f"{r['case']:52} {r['value']:>8.1f}{r['unit']:>2} {fl:>10} {ra:>7} {r['budget'] or '':>8}  {ok}")
    if top:
        print("\nstart-up of 'plan ... --json', top-level imports by cumulative time (python -X importtime):")
        print("\n".join(top))
    out = Path(opts.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"python": sys.version.split()[0], "rows": rows, "imports": top}, indent=2) + "\n")
    print(f"\nJSON: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
