"""What the benchmarked start-up commands import: the heavy modules stay out of a run that does not need
them (issue #9: rich, requests, the network stack, packaging's requirement parser, dataclasses/inspect)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = [
    "rich",
    "requests",
    "urllib3",
    "http.client",
    "packaging.requirements",
    "packaging.markers",
    "dataclasses",
    "inspect",
    "logging",
    "concurrent.futures",
    "platformdirs",
    "tomllib",
    "tomli",
]

COMMANDS = [
    ["plan", "tensorflow-gpu==1.0", "--cuda", "8.0", "--cudnn", "5.0.5", "--json"],
    ["plan", "tensorflow-gpu==1.0", "--cuda", "8.0", "--cudnn", "5.0.5"],
    ["explain", "Loaded runtime CuDNN library: 5005 (compatibility version 5000) but source was compiled with 5103"],
    ["explain", "--json", "CUDA driver version is insufficient for CUDA runtime version"],
    ["matrix", "tensorflow-gpu==1.0.0", "--json"],
    ["detect", "--json"],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_a_piped_command_leaves_the_heavy_modules_unimported(argv: list[str], tmp_path: object) -> None:
    # packaging.specifiers (which the matrix compares with) brings packaging.tags and logging in some releases of
    # packaging (26.3 does, 26.4 does not): what it imports by itself is not ours to avoid.
    code = (
        "import json, sys\n"
        "import packaging.specifiers\n"
        f"before = {{m for m in {HEAVY!r} if m in sys.modules}}\n"
        "from dnnresolve.cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"new = sorted(m for m in {HEAVY!r} if m in sys.modules and m not in before)\n"
        "sys.stderr.write('MODULES ' + json.dumps(new) + '\\n')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip(), out.stderr  # the command answered
    line = next(x for x in out.stderr.splitlines() if x.startswith("MODULES "))
    assert json.loads(line[len("MODULES ") :]) == []
