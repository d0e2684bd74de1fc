"""Command line: argparse and wiring only. Each command reads its inputs, calls the stage that decides,
and hands the result to ``render``; nothing here prints except through render."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NoReturn

from . import __version__
from .errors import NotBuiltYet, UserError

if TYPE_CHECKING:
    from .matrix import Matrix

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2

Handler = Callable[[argparse.Namespace], int]


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``dnnresolve plan: error: ...`` and exit status 2."""

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
    g.add_argument("--driver", metavar="VERSION", help="NVIDIA driver version, e.g. 375.26")
    g.add_argument("--cuda", metavar="VERSION", help="CUDA toolkit in use, e.g. 8.0")
    g.add_argument("--cudnn", metavar="VERSION", help="cuDNN in use, e.g. 5.0.5 or 5005")
    g.add_argument("--gpu", metavar="NAME|CC", help="GPU name as nvidia-smi prints it, or a compute capability")
    g.add_argument("--python", metavar="VERSION", help="Python version, e.g. 3.11")
    g.add_argument("--os", choices=("linux", "windows"), help="operating system")
    g.add_argument("--root", metavar="DIR", help="read the machine's files under DIR (a copy of another machine)")
    g.add_argument("--no-detect", action="store_true", help="do not look at this machine; use only flags and --target")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="dnnresolve",
        description="Which CUDA / cuDNN / driver does this framework need, and what do I do now?",
    )
    parser.add_argument("--version", action="version", version=f"dnnresolve {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("detect", help="what this machine has: driver, GPUs, CUDA, cuDNN, Python, frameworks, modules")
    _common(p)
    p.add_argument("--root", metavar="DIR", help="read the machine's files under DIR (a copy of another machine)")
    p.set_defaults(handler=_cmd_detect)

    p = sub.add_parser("explain", help="decode a CUDA / cuDNN / driver error message")
    _common(p)
    p.add_argument("text", nargs="*", help="the error text (else --file, else standard input)")
    p.add_argument("--file", metavar="LOG", help="read the error text from a log file")
    _runtime_flags(p)
    p.set_defaults(handler=_cmd_explain)

    p = sub.add_parser("plan", help="what a requirement needs, what is missing, and the steps to get there")
    _common(p)
    p.add_argument("specs", nargs="+", metavar="SPEC", help="a requirement: tensorflow-gpu==1.0, 'torch>=2.1'")
    _runtime_flags(p)
    p.add_argument("--format", choices=("text", "sh"), default="text", help="'sh' writes the first option as a script")
    p.set_defaults(handler=_cmd_plan)

    p = sub.add_parser("check", help="vet requirements files against a target machine")
    _common(p)
    p.add_argument("files", nargs="+", metavar="FILE", help="requirements.txt, pyproject.toml, environment.yml...")
    _runtime_flags(p)
    p.add_argument("--format", choices=("text", "markdown", "sarif"), default="text")
    p.add_argument("--strict", action="store_true", help="warnings fail too")
    p.set_defaults(handler=_cmd_check)

    p = sub.add_parser("doctor", help="installed frameworks checked against what this machine really loads")
    _common(p)
    p.add_argument("--root", metavar="DIR", help="read the machine's files under DIR")
    p.set_defaults(handler=_cmd_doctor)

    p = sub.add_parser("matrix", help="rows of the curated compatibility matrix, with their sources")
    _common(p)
    p.add_argument("spec", nargs="?", metavar="SPEC", help="a package or requirement: tensorflow, torch==2.1.0")
    p.add_argument("--cuda", metavar="VERSION", help="releases built for this CUDA series")
    p.add_argument("--cudnn", metavar="VERSION", help="releases built against this cuDNN series")
    p.add_argument("--os", choices=("linux", "windows"), help="only rows for this operating system")
    p.set_defaults(handler=_cmd_matrix)

    p = sub.add_parser("update", help="fetch a newer compatibility matrix into the user cache")
    _common(p)
    p.add_argument("--url", help="where to fetch the matrix from")
    p.set_defaults(handler=_cmd_update)

    p = sub.add_parser("install", help="carry out a plan (asks first)")
    _common(p)
    p.add_argument("specs", nargs="+", metavar="SPEC")
    _runtime_flags(p)
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.add_argument("--dry-run", action="store_true", help="print the steps only")
    p.set_defaults(handler=_cmd_install)
    return parser


# ------------------------------------------------------------------ handlers


def _load_matrix(args: argparse.Namespace) -> Matrix:
    from .matrix import load_matrix

    return load_matrix(getattr(args, "matrix", None))


def _cmd_matrix(args: argparse.Namespace) -> int:
    from .query import matrix_query
    from .render import matrix as render

    matrix = _load_matrix(args)
    result = matrix_query(matrix, args.spec, cuda=args.cuda, cudnn=args.cudnn, os_name=args.os)
    render.emit(result, as_json=args.json)
    return EXIT_OK if result.found else EXIT_PROBLEMS


def _not_built(name: str) -> Handler:
    def handler(args: argparse.Namespace) -> int:
        raise NotBuiltYet(f"'dnnresolve {name}' is not built yet in this version ({__version__})")

    return handler


def _cmd_explain(args: argparse.Namespace) -> int:
    """Exit 1 both when problems are found and when none is recognised (nothing is 'all good' to report)."""
    from .explain import scan
    from .explain.fixes import fixes_for
    from .explain.runtime_flags import runtime_from_flags
    from .explain.source import open_input
    from .render import explain as render

    matrix = _load_matrix(args)
    runtime = runtime_from_flags(args, matrix)
    with open_input(args.text, args.file) as (source, lines):
        result = scan(lines)
    for d in result.diagnoses:
        d.fixes = fixes_for(d, runtime, matrix)
    render.emit(result, source, as_json=args.json)
    return EXIT_PROBLEMS


_cmd_detect = _not_built("detect")
_cmd_plan = _not_built("plan")
_cmd_check = _not_built("check")
_cmd_doctor = _not_built("doctor")
_cmd_update = _not_built("update")
_cmd_install = _not_built("install")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    debug = bool(getattr(args, "debug", False)) or os.environ.get("DNNRESOLVE_DEBUG") == "1"
    try:
        status: int = args.handler(args)
        return status
    except UserError as exc:
        if debug:
            raise
        sys.stderr.write(f"dnnresolve {args.command}: error: {exc}\n")
        return exc.exit_status
    except KeyboardInterrupt:
        sys.stderr.write("dnnresolve: interrupted\n")
        return 130
    except BrokenPipeError:
        # Output piped into `head` and the like: the reader went away; not an error of ours.
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return EXIT_OK
