"""The command line's grammar: each command's options and arguments, the help layout, and argparse's errors
as one line with exit status 2. Parsing only: ``dnnresolve.cli`` runs what was parsed."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from .. import __version__
from .common import EXIT_USAGE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn


class _Formatter(argparse.HelpFormatter):
    """argparse's help layout at the width it would pick itself (``shutil.get_terminal_size``'s rule), without
    importing shutil, which argparse does for every option it adds (3 ms of start-up: bz2, lzma)."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=_terminal_columns() - 2)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        """Paragraphs wrap to the width; an indented line keeps its place: an example command stays whole (to be
        copied), any other wraps under its own text (``  2   meaning`` continues under ``meaning``)."""
        import re
        import textwrap

        out: list[str] = []
        paragraph: list[str] = []

        def flush() -> None:
            if paragraph:
                out.extend(textwrap.wrap(" ".join(paragraph), width, initial_indent=indent, subsequent_indent=indent))
                paragraph.clear()

        for line in text.splitlines():
            if line and not line[0].isspace():
                paragraph.append(line.strip())
                continue
            flush()
            hang = re.match(r"\s+(?:\d+\s+)?", line)
            if not line.strip() or line.lstrip().startswith("dnnresolve ") or hang is None:
                out.append(indent + line if line.strip() else "")
                continue
            wrapped = textwrap.wrap(line[hang.end() :], width - hang.end(), break_on_hyphens=False) or [""]
            out.append(indent + line[: hang.end()] + wrapped[0])
            out.extend(indent + " " * hang.end() + w for w in wrapped[1:])
        flush()
        return "\n".join(out)


def _terminal_columns() -> int:
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``dnnresolve plan: error: ...`` and exit status 2."""

    def __init__(self, *args: Any, help_of: str = "", **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)
        self.help_of = help_of  # the subcommand whose description and examples --help shows

    def format_help(self) -> str:
        if self.help_of and self.epilog is None:  # read only when help is asked for: a run never pays for it
            from ..cli_help import description, epilog

            self.description, self.epilog = description(self.help_of), epilog(self.help_of)
        return super().format_help()

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON for machines instead of text")
    p.add_argument("--debug", action="store_true", help="show a traceback on errors")
    p.add_argument("--matrix", metavar="FILE", help="use this compatibility matrix instead of the packaged one")
    p.add_argument("--offline", action="store_true", help="use the packaged matrix, never a cached update")


def _runtime_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("target machine (flags override detection)")
    g.add_argument("--target", metavar="PROFILE.json", help="a 'dnnresolve detect --json' from the target machine")
    g.add_argument(
        "--driver",
        metavar="VERSION",
        help="NVIDIA driver version as nvidia-smi shows it, e.g. 535.104.05; a branch alone (535 or 535.x) means "
        "some 535.x: verdicts that depend on its patch level say so, never 'cannot run'",
    )
    g.add_argument("--cuda", metavar="VERSION", help="CUDA toolkit in use, e.g. 8.0")
    g.add_argument("--cudnn", metavar="VERSION", help="cuDNN in use, e.g. 5.0.5 or 5005")
    g.add_argument("--gpu", metavar="NAME|CC", help="GPU name as nvidia-smi prints it, or a compute capability")
    g.add_argument("--python", metavar="VERSION", help="Python version, e.g. 3.11")
    g.add_argument("--os", choices=("linux", "windows"), help="operating system")
    g.add_argument("--root", metavar="DIR", help="read the machine's files under DIR (a copy of another machine)")
    g.add_argument("--no-detect", action="store_true", help="do not look at this machine; use only flags and --target")


def _detect_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", metavar="DIR", help="read the machine's files under DIR (a copy of another machine)")
    p.add_argument("--timeout", type=float, default=5.0, metavar="SECONDS", help="how long to wait for each program")


def _explain_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("text", nargs="*", help="the error text (else --file, else standard input)")
    p.add_argument("--file", metavar="LOG", help="read the error text from a log file")
    _runtime_flags(p)


def _plan_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("specs", nargs="+", metavar="SPEC", help="a requirement: tensorflow-gpu==1.0, 'torch>=2.1'")
    _runtime_flags(p)
    p.add_argument(
        "--format",
        choices=("text", "sh", "requirements", "conda", "dockerfile"),
        default="text",
        metavar="FORMAT",
        help="text (default), or the first option as a file: 'sh' a script, 'requirements' a requirements.txt with "
        "its index lines, 'conda' an environment.yml, 'dockerfile' a Dockerfile on a published image that brings "
        "what it needs",
    )
    p.add_argument("--output", metavar="FILE", help="write the file to FILE instead of standard output")
    p.add_argument("--verify", action="store_true", help="check that each recommended wheel exists on its index")
    _fleet_arg(p)


def _fleet_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--fleet",
        metavar="DIR",
        help="answer per group of alike nodes of a fleet ('dnnresolve fleet collect --out DIR')",
    )


def _check_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="requirements.txt, pyproject.toml, environment.yml... or a directory (default: the current one)",
    )
    _runtime_flags(p)
    p.add_argument(
        "--format",
        choices=("text", "markdown", "sarif"),
        default="text",
        help="'markdown' for a pull-request comment, 'sarif' for code scanning (SARIF 2.1.0)",
    )
    p.add_argument("--strict", action="store_true", help="warnings fail too")
    p.add_argument(
        "--stage",
        metavar="NAME",
        help="the stage of a multi-stage Dockerfile to check, as `docker build --target NAME` builds it "
        "(default: the last stage, the one that runs)",
    )
    _fleet_arg(p)


def _doctor_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", metavar="DIR", help="read the machine's files under DIR")


def _matrix_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("spec", nargs="?", metavar="SPEC", help="a package or requirement: tensorflow, torch==2.1.0")
    p.add_argument("--cuda", metavar="VERSION", help="releases built for this CUDA series")
    p.add_argument("--cudnn", metavar="VERSION", help="releases built against this cuDNN series")
    p.add_argument("--os", choices=("linux", "windows"), help="only rows for this operating system")
    p.add_argument("--verbose", action="store_true", help="also show each release's sourcing notes (JSON has them)")
    p.add_argument(
        "--format",
        choices=("text", "html"),
        default="text",
        help="'html' writes the whole matrix as one self-contained page, filterable, every cell linked to its source",
    )
    p.add_argument("--output", metavar="FILE", help="write to FILE instead of standard output")


def _fleet_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=("collect",), help="'collect': read every node's profile through Slurm")
    p.add_argument("--out", metavar="DIR", required=True, help="the fleet directory to write (replaced whole)")
    p.add_argument(
        "--partition", metavar="P", action="append", default=[], help="only the nodes of this partition (repeatable)"
    )
    p.add_argument("--nodes", metavar="LIST", help="only these nodes, a Slurm host list: gpu[01-16],cpu01")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S", help="how long each node's job may take")
    p.add_argument(
        "--command",
        dest="node_command",
        metavar="CMD",
        help="the dnnresolve the nodes run, e.g. /shared/venv/bin/dnnresolve (default: this one's Python)",
    )
    p.add_argument("--parallel", type=int, default=8, metavar="N", help="how many srun jobs run at once")
    p.add_argument(
        "--no-jobs",
        action="store_true",
        help="run no job: estimate each node from sinfo's GPU GRES types and features (marked as estimates)",
    )


def _update_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--url", help="where to fetch the matrix from")


def _install_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("specs", nargs="+", metavar="SPEC", help="a requirement to install: torch==2.1.0, 'jax[cuda12]'")
    _runtime_flags(p)
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.add_argument("--dry-run", action="store_true", help="print the steps only")


# name -> (help, its arguments); ``dnnresolve.cli`` runs each command's handler
COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "detect": ("what this machine has: driver, GPUs, CUDA, cuDNN, Python, frameworks, modules", _detect_args),
    "explain": ("decode a CUDA / cuDNN / driver error message", _explain_args),
    "plan": ("what a requirement needs, what is missing, and the steps to get there", _plan_args),
    "check": ("vet requirements files against a target machine", _check_args),
    "doctor": ("installed frameworks checked against what this machine really loads", _doctor_args),
    "matrix": ("rows of the curated compatibility matrix, with their sources", _matrix_args),
    "update": ("fetch a newer compatibility matrix into the user cache", _update_args),
    "install": ("carry out a plan (asks first)", _install_args),
    "fleet": (
        "a Slurm cluster's node profiles, read through sinfo and srun, for plan and check --fleet",
        _fleet_args,
    ),
}


def command_parser(command: str) -> argparse.ArgumentParser:
    """One subcommand's parser alone (``dnnresolve plan ...``): what a start-up builds when the first word names a
    command, sparing the other seven parsers; its usage, help and errors read as the subparser's would."""
    _, add_args = COMMANDS[command]
    parser = _Parser(prog=f"dnnresolve {command}", help_of=command)
    _common(parser)
    add_args(parser)
    parser.set_defaults(command=command)
    return parser


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with ``command``, the other subcommands get their name and help only (what the
    top-level help lists), which spares a start-up building options it will not parse."""
    parser = _Parser(prog="dnnresolve", help_of="dnnresolve")
    parser.add_argument("--version", action="version", version=f"dnnresolve {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (help_text, add_args) in COMMANDS.items():
        if command is None or command == name:
            p = sub.add_parser(name, help=help_text, help_of=name)
            _common(p)
            add_args(p)
        else:
            sub.add_parser(name, help=help_text)
    return parser
