"""Text output fits the terminal (#25): piped output is as wide as ``COLUMNS`` says, else 80 columns; a terminal
gets its own width. No line is wider, except one that holds a word as wide as a line (a long URL or path) or a
command printed whole on its line so that it can be pasted. Findings and matrix rows become blocks where a
table would not fit; sources become numbered notes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dnnresolve.render.matrix import install_command
from dnnresolve.render.plain_table import cell_width

from .conftest import REPO
from .detect.machines import make_machine
from .plan.test_doctor import _install_torch
from .test_text_output import ANSI, PROJECTS, on_terminal

REQUIREMENTS = """\
tensorflow==2.15.0
torch==2.8.0
jax[cuda12]==0.4.30
tensorflow-gpu==1.15.0
torch==1.7.1
onnxruntime-gpu==1.17.0
paddlepaddle-gpu==2.6.1
"""
T4 = ["--no-detect", "--os", "linux", "--python", "3.11", "--driver", "470.82.01", "--gpu", "T4"]
K20M = ["--no-detect", "--os", "linux", "--gpu", "Tesla K20m", "--driver", "384.81", "--cuda", "9.0", "--cudnn", "7.1"]
CUDNN_MISMATCH = "Loaded runtime CuDNN library: 5005 (compatibility version 5000) but source was compiled with 5103"
NO_LIBRARY = (
    "Could not load library libcudnn_cnn_infer.so.8. Error: libcudnn_cnn_infer.so.8: cannot open shared object file"
)
# what the output prints to be pasted, whole on a line of its own however wide
COMMAND = re.compile(r"^\s*(python -m pip|pip|conda|export|module|dnnresolve|mkdir|tar|sh) ")


@pytest.fixture(scope="module")
def where(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A requirements file with five findings, the K20m node with TensorFlow 1.0 and a torch whose code does not
    run on it, and a matrix cache shared by the module's runs."""
    tmp = tmp_path_factory.mktemp("width")
    (tmp / "requirements.txt").write_text(REQUIREMENTS)
    root = make_machine(tmp, "k20m")
    _install_torch(
        root, "/usr/lib64/python3.6/site-packages", (REPO / "tests/fixtures/fatbin/kernels.fatbin").read_bytes()
    )
    return {"requirements": tmp / "requirements.txt", "k20m": root, "cache": tmp / "cache"}


def commands(where: dict[str, Path]) -> dict[str, list[str]]:
    return {
        "check": ["check", str(where["requirements"]), *T4],
        "check projects": ["check", "research-tf1", "pipenv-tf", "--no-detect", "--driver", "535.104.05"],
        "matrix --cuda 11.8": ["matrix", "--cuda", "11.8"],
        "matrix torch==2.8.0": ["matrix", "torch==2.8.0"],
        "matrix": ["matrix"],
        "plan": ["plan", "torch==2.8.0", *T4],
        "plan tf1": ["plan", "tensorflow-gpu==1.12.0", *K20M],
        "explain": ["explain", "--no-detect", CUDNN_MISMATCH],
        "explain library": ["explain", "--no-detect", NO_LIBRARY],
        "detect": ["detect", "--root", str(where["k20m"])],
        "doctor": ["doctor", "--root", str(where["k20m"])],
        "plan --fleet": ["plan", "torch==2.8.0", "--fleet", str(REPO / "tests/fixtures/docs/fleet")],
    }


NAMES = list(commands({"requirements": Path(), "k20m": Path(), "cache": Path()}))


def _env(where: dict[str, Path], **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DNNRESOLVE_") and k not in ("COLUMNS", "LINES")}
    env.update(PYTHONPATH=str(REPO / "src"), DNNRESOLVE_CACHE_DIR=str(where["cache"]), DNNRESOLVE_NVML="0")
    env.update(TERM="xterm-256color", NO_PROXY="*", **extra)
    env.pop("NO_COLOR", None)
    return env


def piped(argv: list[str], env: dict[str, str]) -> str:
    r = subprocess.run(
        [sys.executable, "-m", "dnnresolve", *argv], capture_output=True, text=True, env=env, cwd=PROJECTS, timeout=120
    )
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr
    return r.stdout


_JSON: dict[tuple[str, ...], Any] = {}


def as_json(argv: list[str], where: dict[str, Path]) -> Any:
    """The command's --json answer, the facts the text must keep (one run per command line)."""
    key = (*argv, str(where["cache"]))
    if key not in _JSON:
        _JSON[key] = json.loads(piped([*argv, "--json"], _env(where)))
    return _JSON[key]


def too_wide(text: str, width: int) -> list[str]:
    """The lines of ``text`` wider than ``width`` that need not be: neither a command to paste nor a line with a
    word about as wide as a line (a URL, a path, a `command` quoted in prose: over ``width`` less a hanging
    indent)."""
    out = []
    for line in text.splitlines():
        if cell_width(line.rstrip()) <= width or COMMAND.match(line):
            continue
        if any(cell_width(word) > width - 10 for word in re.findall(r"`[^`]*`|\S+", line)):  # `a command` is one
            continue
        out.append(line)
    return out


def words_kept(text: str) -> set[str]:
    return set(text.split())


Check = Callable[[str, dict[str, Path], int], None]


def _check(text: str, where: dict[str, Path], width: int) -> None:
    for n, package in enumerate(("tensorflow", "torch", "jax", "tensorflow-gpu", "torch", "onnxruntime-gpu",
                                 "paddlepaddle-gpu"), 1):  # fmt: skip
        assert f"{where['requirements']}:{n}" in words_kept(text)  # never `requirements.tx` / `t:2`
        assert package in words_kept(text)
    assert re.search(r"\d error\(s\), \d warning\(s\), \d note\(s\) in 1 file\(s\)", " ".join(text.split()))
    assert "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html" in words_kept(text)
    assert "[1]" in words_kept(text)  # the source, once, as a note
    assert text.count("https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html") == 1


def _check_projects(text: str, where: dict[str, Path], width: int) -> None:
    assert "error(s)" in text and "file(s)" in text


def _matrix_cuda(text: str, where: dict[str, Path], width: int) -> None:
    releases = as_json(["matrix", "--cuda", "11.8"], where)["releases"]
    starts = {" ".join(line.split()[:2]) for line in text.splitlines()} | {
        " ".join(line.strip("│┃ ").split()[:2]) for line in text.splitlines()
    }
    for r in releases:
        assert f"{r['package']} {r['version']}" in starts
    for source in {r["source"] for r in releases}:
        assert source in words_kept(text)
    if width == 80:  # compact: each release a heading and at most three lines of facts, beside its sources
        # (per release, not a total: a row that gains a fact, GPU code say, must not tip the whole listing over)
        titles = {f"{r['package']} {r['version']}" for r in releases}
        blocks: list[int] = []
        for line in text.splitlines():
            if not line.startswith(" ") and " ".join(line.split()[:2]) in titles:
                blocks.append(1)
            elif blocks and line.startswith("  "):
                blocks[-1] += 1
        assert len(blocks) == len(releases) and max(blocks) <= 4, blocks


def _matrix_release(text: str, where: dict[str, Path], width: int) -> None:
    (record,) = as_json(["matrix", "torch==2.8.0"], where)["releases"]
    lines = [line.strip("│ ") for line in text.splitlines()]
    for inst in record["install"]:  # each command whole on one line, to be pasted
        assert install_command(inst) in lines
    assert "560.28.03" in words_kept(text)


def _matrix(text: str, where: dict[str, Path], width: int) -> None:
    assert "torch" in words_kept(text) and "tensorflow" in words_kept(text)


def _plan(text: str, where: dict[str, Path], width: int) -> None:
    plan = as_json(["plan", "torch==2.8.0", *T4], where)
    lines = [line.strip() for line in text.splitlines()]
    for option in plan["requirements"][0]["options"]:
        for step in option["steps"]:
            if step["kind"] != "manual":
                assert step["command"] in lines
    assert "torch==2.8.0 -> torch 2.8.0 for CUDA 12.8" in " ".join(lines)
    assert re.search(r"MISSING driver:? needs [^;]*?;? has 470\.82\.01", " ".join(text.split()))


def _plan_tf1(text: str, where: dict[str, Path], width: int) -> None:
    joined = " ".join(text.split())
    assert "compute_61, compute_70" in joined and "has 3.5" in joined and "has 7.1" in joined


def _explain(text: str, where: dict[str, Path], width: int) -> None:
    assert "`module load cudnn/5.1`" in text  # a command in prose is never broken across lines
    assert "https://github.com/tensorflow/tensorflow/issues/3225" in words_kept(text)
    assert "same major.minor series at run time: 5.1.x" in " ".join(text.split())
    why = text.splitlines()[next(i for i, line in enumerate(text.splitlines()) if line.lstrip().startswith("why"))]
    rest = text.splitlines()[text.splitlines().index(why) + 1]
    assert rest.startswith("      ") and not rest.lstrip().startswith("Fix")  # wrapped, with a hanging indent


def _explain_library(text: str, where: dict[str, Path], width: int) -> None:
    assert "libcudnn_cnn_infer.so.8" in words_kept(text) and "LD_LIBRARY_PATH" in words_kept(text)


def _detect(text: str, where: dict[str, Path], width: int) -> None:
    assert {"375.26", "/proc/driver/nvidia/version", "/opt/apps/cudnn/5.1"} <= words_kept(text)
    assert {"Tesla", "K20m,", "compute", "capability", "3.5"} <= words_kept(text.replace("│", " "))


def _doctor(text: str, where: dict[str, Path], width: int) -> None:
    lines = [line.strip() for line in text.splitlines()]
    assert 'export LD_LIBRARY_PATH="/opt/apps/cudnn/5.1/lib64:$LD_LIBRARY_PATH"' in lines
    assert "torch 2.7.0 on Tesla K20m (3.5): sm_75 sm_80 sm_90a sm_100 + PTX compute_90" in " ".join(lines)


def _plan_fleet(text: str, where: dict[str, Path], width: int) -> None:
    assert {"k20m-[1-2]", "cannot", "installable", "gone-1:"} <= words_kept(text.replace("│", " "))


FACTS: dict[str, Check] = {
    "check": _check,
    "check projects": _check_projects,
    "matrix --cuda 11.8": _matrix_cuda,
    "matrix torch==2.8.0": _matrix_release,
    "matrix": _matrix,
    "plan": _plan,
    "plan tf1": _plan_tf1,
    "explain": _explain,
    "explain library": _explain_library,
    "detect": _detect,
    "doctor": _doctor,
    "plan --fleet": _plan_fleet,
}


@pytest.mark.parametrize("name", NAMES)
def test_piped_output_fits_80_columns_with_columns_set_or_not(name: str, where: dict[str, Path]) -> None:
    argv = commands(where)[name]
    for env in (_env(where, COLUMNS="80"), _env(where)):  # piped with no COLUMNS: 80, never 200
        text = piped(argv, env)
        assert not too_wide(text, 80), "\n".join(too_wide(text, 80))
        FACTS[name](text, where, 80)


@pytest.mark.parametrize("name", NAMES)
def test_a_terminal_of_80_columns_shows_no_line_wider(name: str, where: dict[str, Path]) -> None:
    shown, err = on_terminal(commands(where)[name], _env(where), columns=80)
    text = ANSI.sub("", shown)
    assert "\x1b[" in shown and "Traceback" not in err, err  # rich drew it, in colour
    assert not too_wide(text, 80), "\n".join(too_wide(text, 80))
    FACTS[name](text, where, 80)


# (80 columns piped: test_piped_output_fits_80_columns_with_columns_set_or_not runs each command so, same checks)
@pytest.mark.parametrize("width", [40, 60, 100, 120])
def test_every_width_fits(width: int, where: dict[str, Path]) -> None:
    for name, argv in commands(where).items():
        text = piped(argv, _env(where, COLUMNS=str(width)))
        assert not too_wide(text, width), f"{name} at {width}:\n" + "\n".join(too_wide(text, width))
        FACTS[name](text, where, width)


def test_check_at_80_columns_writes_blocks_and_a_wide_terminal_keeps_the_table(where: dict[str, Path]) -> None:
    argv = commands(where)["check"]
    narrow = piped(argv, _env(where, COLUMNS="80"))
    assert "file:line" not in narrow and "│" not in narrow  # no five-column box
    block = narrow.splitlines()
    # the finding's head line: the file and line, its severity, the package (a long temporary path may wrap it)
    at = next(i for i, line in enumerate(block) if line.startswith(f"{where['requirements']}:2 "))
    end = next(i for i in range(at + 1, len(block)) if block[i].startswith("  torch 2.8.0 (CUDA 12.8) cannot run"))
    assert " ".join(block[at:end]).split() == [f"{where['requirements']}:2", "error", "torch"] and end - at <= 2
    at = end - 1
    assert any(line.startswith("  fix: use torch ") for line in block[at + 1 : at + 5])
    at = block.index("Sources:")
    assert block[at + 1] == "[1] https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html"
    wide = piped(argv, _env(where, COLUMNS="240"))
    assert wide.splitlines()[2].split() == ["file:line", "package", "severity", "finding", "fix"]
    assert not too_wide(wide, 240)
    shown, _ = on_terminal(argv, _env(where), columns=240)
    assert "│ file:line" in ANSI.sub("", shown)  # rich's table


def test_matrix_at_80_columns_is_a_block_a_release(where: dict[str, Path]) -> None:
    lines = piped(["matrix", "--cuda", "11.8"], _env(where)).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("torch 2.1.0  linux  ["))
    mark = lines[at].rsplit(" ", 1)[1]  # the footnote's number follows the rows' order
    assert lines[at + 1 : at + 3] == [
        "  python: 3.8-3.11  cuda: 11.8, 12.1  cudnn: 8.9, 8.7",  # (its CUDA 11.8 build's cuDNN is 8.7, #21)
        "  min driver (linux): 520.61.05  gpu code: sm_50-sm_90",
    ]
    assert f"{mark} https://pytorch.org/get-started/previous-versions/" in lines
