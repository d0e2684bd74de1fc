"""Command line: argparse and wiring only. Each command reads its inputs, calls the stage that decides,
and hands the result to ``render``; nothing here prints except through render.

This module runs a command line: ``parser`` parses it, the command's own module (``plan``, ``check``,
``explain``...) handles it, and its outcome becomes the exit status (a user's error one line, a bug one line)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Sequence

from ..errors import UserError
from ..interrupts import stop_signals_raise, stopped_by
from .common import EXIT_INTERNAL, EXIT_OK, EXIT_USAGE
from .parser import COMMANDS, build_parser, command_parser

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

Handler = Callable[["argparse.Namespace"], int]


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    finally:
        if argv is None:  # this process's own command line: it ends next
            import gc

            # Interpreter shutdown runs the cycle collector over every object left, 13-16 ms of a first question
            # (0.5x the do-nothing floor) spent freeing memory the exit frees anyway. Frozen objects are skipped;
            # atexit handlers (workers, temporary files) still run, and every file we write is closed by then.
            gc.freeze()


def _main(argv: Sequence[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if words and words[0] in COMMANDS:
        args = _parse(command_parser(words[0]), words[1:])
    else:  # no command, or options before it: the whole command line
        parser = build_parser()
        if words and not words[0].startswith("-"):
            from ..suggest import nearest_word

            near = nearest_word(words[0], list(COMMANDS))
            if near:
                parser.error(f"unknown command {words[0]!r} (did you mean {near!r}?)")
        args = _parse(parser, words, whole=True)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    debug = bool(getattr(args, "debug", False)) or os.environ.get("DNNRESOLVE_DEBUG") == "1"
    from ..cachedir import set_debug

    set_debug(debug)
    from ..render.redacting import redacted_output

    with redacted_output(), stop_signals_raise():
        try:
            return _run(args, debug)
        finally:
            flags = sys.modules.get("dnnresolve.runtime_flags")
            if flags is not None:  # probes started early that no detection used
                flags.stop_detection()


def _parse(parser: argparse.ArgumentParser, words: list[str], whole: bool = False) -> argparse.Namespace:
    """``parser.parse_args(words)``, an option it does not know answered by the nearest it does (``--drvier (did
    you mean --driver?)``) as the command's own parser would say it, also when ``whole`` (the top-level parser)."""
    args, unknown = parser.parse_known_args(words)
    if unknown:
        from ..suggest import unrecognized

        command = str(getattr(args, "command", None) or "")
        owner = command_parser(command) if whole and command in COMMANDS else parser
        # (argparse keeps the option strings it knows in this attribute, the same from 3.9 to 3.14)
        owner.error(unrecognized(unknown, list(owner._option_string_actions), command if owner is not parser else ""))
    return args


def _run(args: argparse.Namespace, debug: bool) -> int:
    try:
        return _handler(args.command)(args)
    except UserError as exc:
        if debug:
            raise
        sys.stderr.write(f"dnnresolve {args.command}: error: {exc}\n")
        return exc.exit_status
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM / SIGHUP as Terminated: cleanup has run on the way
        status, line = stopped_by(exc)
        with contextlib.suppress(OSError):  # after SIGHUP the terminal may be gone
            sys.stderr.write(line + "\n")
        return status
    except BrokenPipeError:
        # Output piped into `head` and the like: the reader went away; not an error of ours.
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return EXIT_OK
    except Exception as exc:
        # A bug of ours, not the user's input: one line that says so, the traceback only with --debug.
        if debug:
            raise
        sys.stderr.write(
            f"dnnresolve {args.command}: internal error: {type(exc).__name__}: {exc} "
            "(run again with --debug for the traceback, and please report it)\n"
        )
        return EXIT_INTERNAL


def _handler(command: str) -> Handler:
    """``command``'s handler, imported when it runs: a start-up imports its own command's module only (and a test
    may replace a handler in its module)."""
    if command == "detect":
        from .machine import cmd_detect as handler
    elif command == "doctor":
        from .machine import cmd_doctor as handler
    elif command == "explain":
        from .explain import cmd_explain as handler
    elif command == "plan":
        from .plan import cmd_plan as handler
    elif command == "install":
        from .plan import cmd_install as handler
    elif command == "check":
        from .check import cmd_check as handler
    elif command == "matrix":
        from .matrix import cmd_matrix as handler
    elif command == "update":
        from .matrix import cmd_update as handler
    elif command == "fleet":
        from .fleet import cmd_fleet as handler
    else:
        raise AssertionError(command)
    return handler
