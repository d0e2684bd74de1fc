"""What the benchmarked start-up commands import: the heavy modules stay out of a run that does not need
them (issue #9: rich, requests, the network stack, packaging's requirement parser, dataclasses/inspect)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

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
    "shutil",  # argparse imports it for every option, unless given a width (cli.parser._Formatter)
    "bz2",
    "lzma",
    "dnnresolve.fleet",  # only fleet collect and --fleet read a fleet
]

COMMANDS = [
    ["plan", "tensorflow-gpu==1.0", "--cuda", "8.0", "--cudnn", "5.0.5", "--json"],
    ["plan", "tensorflow-gpu==1.0", "--cuda", "8.0", "--cudnn", "5.0.5"],
    ["explain", "Loaded runtime CuDNN library: 5005 (compatibility version 5000) but source was compiled with 5103"],
    ["explain", "--json", "CUDA driver version is insufficient for CUDA runtime version"],
    ["matrix", "tensorflow-gpu==1.0.0", "--json"],
    ["matrix", "tensorflow-gpu==1.0.0"],
    ["detect", "--json"],
    ["detect"],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_a_piped_command_leaves_the_heavy_modules_unimported(argv: list[str], tmp_path: Path) -> None:
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
        "sys.stderr.write('MODULES ' + ' '.join(new) + '\\n')\n"
    )
    loaded_by(code, tmp_path)  # the first run parses the matrix and the catalog into their caches (TOML, once)
    assert loaded_by(code, tmp_path) == []


# explain of one message and detect (issue #26: start-up budgets) compare no release: packaging, which the matrix
# compares releases with, is not imported; nor is pathlib (paths are text on these paths: pathlib and the
# urllib.parse and ipaddress it imports cost a start-up 0.2x a bare interpreter's)
UNNEEDED = ["packaging", "packaging.version", "packaging.specifiers", "pathlib", "urllib.parse", "ipaddress"]
CLASSIC = (
    "Loaded runtime CuDNN library: 5005 (compatibility version 5000) but source was compiled with 5103 "
    "(compatibility version 5100).  If using a binary install, upgrade your CuDNN library to match."
)


@pytest.mark.parametrize(
    "argv",
    [["explain", "--json", CLASSIC], ["explain", CLASSIC], ["detect", "--json"]],
    ids=["explain-json", "explain-text", "detect-json"],
)
def test_a_first_question_that_compares_no_release_imports_neither_packaging_nor_pathlib(
    argv: list[str], tmp_path: Path
) -> None:
    code = _asks(argv, UNNEEDED)
    loaded_by(code, tmp_path)
    assert loaded_by(code, tmp_path) == []


def _asks(argv: list[str], modules: list[str]) -> str:
    """Code that runs the command ``argv`` in process and names which of ``modules`` it imported (``loaded_by``)."""
    return (
        "import sys\n"
        "from dnnresolve.cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"new = sorted(m for m in {modules!r} if m in sys.modules)\n"
        "sys.stderr.write('MODULES ' + ' '.join(new) + '\\n')\n"
    )


# plan --no-detect --json (a budgeted first question) writes JSON: none of the text writer's modules (textwrap, the
# styled records), no did-you-mean matcher while every name is known (difflib), no pathlib (paths are text; it
# brings urllib.parse and ipaddress): together 0.3x a bare interpreter's start-up
PLAN_UNNEEDED = ["pathlib", "urllib.parse", "ipaddress", "difflib", "textwrap", "dnnresolve.render.styled"]


def test_plan_json_of_known_names_imports_no_text_writer_matcher_or_pathlib(tmp_path: Path) -> None:
    argv = ["plan", "tensorflow-gpu==1.0", "--no-detect", "--json"]
    code = _asks(argv, PLAN_UNNEEDED)
    loaded_by(code, tmp_path)
    assert loaded_by(code, tmp_path) == []


# Module-level regexes a first question does not use stay uncompiled (``lazyre``): rejoin's (a message wrapped over
# lines), the decoders' of torch companions and spelt CUDA versions, conda's build strings, the cut and loose
# readings' syntax: 3 ms of regex compilation, 0.1x a bare interpreter's start-up, for explain of one line.
UNUSED_PATTERNS = {
    "dnnresolve.explain.rejoin": ["_LEFT", "_RIGHT", "_VERSION", "_SYNTAX", "_PATH", "_PROSE", "CONTINUATION"],
    "dnnresolve.explain.decoders": ["_SIDE", "_CUDA_SPELT"],
    "dnnresolve.versions": ["_CONDA_DOTTED", "_CONDA_PACKED", "_CONDA_CPU"],
    "dnnresolve.explain.datafile": ["_GLOBAL_FLAGS", "_QUANTIFIER"],
}


def test_explain_json_of_one_line_compiles_no_regex_it_does_not_use(tmp_path: Path) -> None:
    code = (
        "import re, sys\n"
        "from dnnresolve.cli import main\n"
        "try:\n"
        f"    main({['explain', '--json', CLASSIC]!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "def compiled(v):\n"
        "    return isinstance(v, re.Pattern) or len(getattr(v, '__dict__', {})) > 1\n"
        f"names = [f'{{m}}.{{n}}' for m, ns in {UNUSED_PATTERNS!r}.items() for n in ns\n"
        "         if m in sys.modules and compiled(getattr(sys.modules[m], n))]\n"
        "sys.stderr.write('MODULES ' + ' '.join(names) + '\\n')\n"
    )
    loaded_by(code, tmp_path)
    assert loaded_by(code, tmp_path) == []


def test_a_lazy_pattern_compiles_on_first_use_and_answers_as_the_pattern() -> None:
    from dnnresolve.lazyre import lazy_compile

    broken = lazy_compile("(unclosed")  # nothing is compiled yet: no error
    with pytest.raises(re.error):
        broken.search("x")
    lazy, real = lazy_compile(r"(\d+)\.(\d+)", re.IGNORECASE), re.compile(r"(\d+)\.(\d+)", re.IGNORECASE)
    assert lazy.search("CUDA 12.4")[0] == real.search("CUDA 12.4")[0] == "12.4"  # type: ignore[index]
    assert lazy.sub("x", "8.0 and 9.1") == real.sub("x", "8.0 and 9.1") == "x and x"
    assert lazy.findall("1.2 3.4") == [("1", "2"), ("3", "4")] and lazy.fullmatch("1.2") is not None
    assert (lazy.pattern, lazy.flags, lazy.groups) == (real.pattern, real.flags, real.groups)


# Where NVML is not to be asked (turned off here; no driver visible on most machines that explain a log), its answer
# is known at once: detection starts no thread for it (a thread's start waits for the scheduler: ~1 ms on a busy
# machine)
def test_a_detection_that_asks_no_nvml_starts_no_thread(tmp_path: Path) -> None:
    code = (
        "import sys, threading\n"
        "names = []\n"
        "start = threading.Thread.start\n"
        "def counted(self):\n"
        "    names.append(self.name)\n"
        "    start(self)\n"
        "threading.Thread.start = counted\n"
        "from dnnresolve.cli import main\n"
        "try:\n"
        f"    main({['explain', '--json', CLASSIC]!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stderr.write('MODULES ' + ' '.join(n for n in names if 'nvml' in n) + '\\n')\n"
    )
    env = {"DNNRESOLVE_NVML": "0"}
    loaded_by(code, tmp_path, env)
    assert loaded_by(code, tmp_path, env) == []


# typing costs a start-up 0.15x a bare interpreter: explain --json of one message (a budgeted first question) imports
# none of it (annotations are text; the names they use are imported for the type checker only). The text writers'
# records (render.styled: NamedTuple, Protocol) still import it.
def test_explain_json_of_one_message_does_not_import_typing(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from dnnresolve.cli import main\n"
        "try:\n"
        f"    main({['explain', '--json', CLASSIC]!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stderr.write('MODULES ' + ' '.join(m for m in ('typing',) if m in sys.modules) + '\\n')\n"
    )
    loaded_by(code, tmp_path)
    assert loaded_by(code, tmp_path) == []


# explain's answer does not depend on the indexes pip is configured with (plan's and check's do): it reads no
# pip.conf, so configparser (0.05x a bare interpreter) stays out even where one names an index
def test_explain_reads_no_pip_configuration(tmp_path: Path) -> None:
    conf = tmp_path / "pip.conf"
    conf.write_text("[global]\nindex-url = https://example.invalid/simple\nfind-links = /nowhere\n")
    code = (
        "import sys\n"
        "from dnnresolve.cli import main\n"
        "try:\n"
        f"    main({['explain', '--json', CLASSIC]!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stderr.write('MODULES ' + ' '.join(m for m in ('configparser',) if m in sys.modules) + '\\n')\n"
    )
    env = {"PIP_CONFIG_FILE": str(conf)}
    loaded_by(code, tmp_path, env)
    assert loaded_by(code, tmp_path, env) == []


def loaded_by(code: str, tmp_path: Path, extra: dict[str, str] | None = None) -> list[str]:
    """Run ``code`` (which answers on stdout and writes "MODULES name ..." on stderr) with its own caches."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DNNRESOLVE_")}
    env.update(extra or {})
    env["DNNRESOLVE_CACHE_DIR"] = str(tmp_path / "cache")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout.strip(), out.stderr  # the command answered
    return next(x for x in out.stderr.splitlines() if x.startswith("MODULES ")).split()[1:]
