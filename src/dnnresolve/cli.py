"""Command line: argparse and wiring only. Each command reads its inputs, calls the stage that decides,
and hands the result to ``render``; nothing here prints except through render."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence

from . import __version__
from .errors import UserError
from .interrupts import stop_signals_raise, stopped_by

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

    from .matrix import Matrix
    from .plan import Plan
    from .specs import Requirement

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2
EXIT_INTERNAL = 70  # EX_SOFTWARE: a bug of dnnresolve's own
PROGRESS_MIN_BYTES = 32 << 20  # smaller logs are read before a bar would be worth drawing


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
            from .cli_help import description, epilog

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


def command_parser(command: str) -> argparse.ArgumentParser:
    """One subcommand's parser alone (``dnnresolve plan ...``): what a start-up builds when the first word names a
    command, sparing the other seven parsers; its usage, help and errors read as the subparser's would."""
    _, add_args, handler = _COMMANDS[command]
    parser = _Parser(prog=f"dnnresolve {command}", help_of=command)
    _common(parser)
    add_args(parser)
    parser.set_defaults(handler=handler, command=command)
    return parser


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with ``command``, the other subcommands get their name and help only (what the
    top-level help lists), which spares a start-up building options it will not parse."""
    parser = _Parser(prog="dnnresolve", help_of="dnnresolve")
    parser.add_argument("--version", action="version", version=f"dnnresolve {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (help_text, add_args, handler) in _COMMANDS.items():
        if command is None or command == name:
            p = sub.add_parser(name, help=help_text, help_of=name)
            _common(p)
            add_args(p)
        else:
            p = sub.add_parser(name, help=help_text)
        p.set_defaults(handler=handler)
    return parser


# ------------------------------------------------------------------ handlers


def _load_matrix(args: argparse.Namespace) -> Matrix:
    """The newest valid matrix (see matrix_source): --matrix, else a cached update unless --offline, else packaged.
    ``args.matrix_source`` keeps where it came from, for renders that add ``"matrix": source.record()``."""
    from .matrix import load_matrix
    from .matrix_source import resolve_source
    from .render.update import note_matrix_source

    source = resolve_source(offline=bool(getattr(args, "offline", False)), explicit=getattr(args, "matrix", None))
    args.matrix_source = source
    note_matrix_source(source, debug=bool(getattr(args, "debug", False)))
    return load_matrix(source.path)


def _write_output(text: str, path: str | None) -> None:
    """``text`` to standard output, or to the file the user named (replaced whole, or left as it was)."""
    if path is None:
        sys.stdout.write(text)
        return
    import tempfile

    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".dnnresolve-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        umask = os.umask(0o022)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # a file as any other program would write it, not mkstemp's 0600
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError, UnboundLocalError):
            os.unlink(tmp)
        raise UserError(f"{path}: cannot write ({exc.strerror or exc})") from exc


def _cmd_matrix(args: argparse.Namespace) -> int:
    from .query import matrix_query
    from .render import matrix as render

    if args.format == "html" and (args.spec or args.cuda or args.cudnn or args.os or args.json):
        raise UserError("--format html writes the whole matrix: filter it in the page (no SPEC, --cuda, --cudnn, --os)")
    matrix = _load_matrix(args)
    if args.format == "html":
        from .render.matrix_html import to_html

        _write_output(to_html(matrix), args.output)
        return EXIT_OK
    result = matrix_query(matrix, args.spec, cuda=args.cuda, cudnn=args.cudnn, os_name=args.os)
    render.emit(result, as_json=args.json, verbose=args.verbose)
    return EXIT_OK if result.found else EXIT_PROBLEMS


def _specs_from_args(args: argparse.Namespace) -> tuple[list[Requirement], Matrix]:
    """The SPECs parsed, and the matrix (loaded once they parse); for ``plan``, each one's package must be in it
    (``plan --fleet``: each node's machine is its profile, so no line is judged against this one)."""
    from .specs import InvalidRequirement, parse_requirement

    requirements = []
    for spec in args.specs:
        try:
            requirements.append(parse_requirement(spec))
        except InvalidRequirement as exc:
            raise UserError(f"not a requirement: {spec!r} ({exc})") from exc
    matrix = _load_matrix(args)
    _refuse_unknown(args, requirements, matrix)
    return requirements, matrix


def _refuse_unknown(args: argparse.Namespace, requirements: list[Requirement], matrix: Matrix) -> None:
    if args.command == "plan":  # (install runs plain pip for what the matrix does not know)
        from .suggest import unknown_packages

        asked = [r.name for r in requirements if matrix.cuda_name(r.name) is None]  # (those answer too)
        refused = unknown_packages(asked, matrix.packages())
        if refused:
            raise UserError(refused)


def _plan_from_args(args: argparse.Namespace) -> Plan:
    from .artifact import parse_line
    from .plan import make_plan
    from .runtime_flags import runtime_for
    from .solve import artifact_of, solve
    from .sources.pipconfig import pip_context
    from .specs import InvalidRequirement

    lines: list[tuple[str, Requirement | str]] = []
    for spec in args.specs:
        try:
            lines.append((spec, parse_line(spec)))
        except InvalidRequirement as exc:
            raise UserError(f"not a requirement: {spec!r} ({exc})") from exc
    matrix = _load_matrix(args)
    runtime = runtime_for(args, matrix)
    args.runtime = runtime
    # what pip skips on this target (a marker) or builds from source (a path, VCS, a URL) is a note, not a plan
    requirements: list[Requirement] = []
    notes: list[tuple[str, str]] = []
    index_urls = pip_context().index.urls  # the indexes pip here is configured with choose the build it installs
    for spec, line in lines:
        if isinstance(line, str):
            notes.append((spec, line))
            continue
        art = artifact_of(line, runtime, matrix, index_urls)
        if not art.checkable:
            notes.append((spec, art.skipped or art.unchecked))
        else:
            requirements.append(line)
    _refuse_unknown(args, requirements, matrix)
    plan = make_plan(solve(requirements, runtime, matrix, index_urls), runtime, matrix)
    plan.notes = notes
    return plan


def _cmd_plan(args: argparse.Namespace) -> int:
    from .render import plan as render
    from .runtime_flags import start_detection

    start_detection(args)

    if args.fleet:
        return _fleet_answer(args, " ".join(args.specs), *_specs_from_args(args))
    plan = _plan_from_args(args)
    if args.verify:
        from .verify import verify_plan

        verify_plan(plan, args.runtime)
    if args.format == "dockerfile" and not args.json:
        from .render.plan_dockerfile import to_dockerfile

        text, runs = to_dockerfile(plan, args.runtime, _load_matrix(args))
        _write_output(text, args.output)
        return EXIT_OK if runs else EXIT_PROBLEMS
    if args.format in ("requirements", "conda", "sh") and not args.json:
        from .render import plan_files

        writers = {"requirements": plan_files.to_requirements, "conda": plan_files.to_environment_yml}
        _write_output(writers.get(args.format, render.to_sh)(plan), args.output)
        return EXIT_OK if plan.satisfied else EXIT_PROBLEMS
    render.emit(plan, args.runtime, as_json=args.json, fmt=args.format)
    return EXIT_OK if plan.satisfied else EXIT_PROBLEMS


def _cmd_detect(args: argparse.Namespace) -> int:
    from .runtime_flags import start_detection, started

    start_detection(args)
    from .detect.machine import detect_runtime
    from .render import detect as render

    try:
        matrix: Matrix | None = _load_matrix(args)
    except UserError as exc:
        if args.matrix:
            raise
        sys.stderr.write(f"dnnresolve detect: warning: matrix not loaded ({exc})\n")
        matrix = None
    runtime = detect_runtime(root=args.root, timeout=args.timeout, matrix=matrix, started=started())
    render.emit(runtime, as_json=args.json)
    return EXIT_OK


def _cmd_doctor(args: argparse.Namespace) -> int:
    from .runtime_flags import start_detection, started

    start_detection(args)
    from .cuda_builds import NO_RUNTIME, build_gaps
    from .detect.machine import detect_runtime, installed_gpu_code
    from .doctor import code_findings, code_packages, installed_requirements
    from .plan import make_plan
    from .render import plan as render
    from .solve import Status, solve

    matrix = _load_matrix(args)
    runtime = detect_runtime(root=args.root, matrix=matrix, started=started())
    requirements = installed_requirements(runtime, matrix)
    plan = make_plan(solve(requirements, runtime, matrix), runtime, matrix)
    codes, notes = installed_gpu_code(runtime, code_packages(matrix), root=args.root)
    findings = code_findings(codes, runtime)
    # a CPU build matters where there is a GPU to leave unused; a framework that cannot run matters anywhere
    gaps = [g for g in build_gaps(runtime, matrix) if g.kind == NO_RUNTIME or runtime.gpus]
    render.emit_doctor(plan, runtime, as_json=args.json, code=findings, notes=notes, builds=gaps)
    healthy = all(not (r.result.best and r.result.best.failures) for r in plan.requirements) and not plan.conflicts
    healthy = healthy and not any(f.status is Status.FAIL for f in findings) and not gaps
    return EXIT_OK if healthy else EXIT_PROBLEMS


def _cmd_check(args: argparse.Namespace) -> int:
    from .check import check_sources
    from .check_target import check_target
    from .render import check as render
    from .render.progress import count_progress
    from .sources import pipconfig as pip_index
    from .sources import read_paths

    with count_progress("reading requirement files", enabled=not args.json and args.format == "text") as progress:
        sources = read_paths(args.files or ["."], on_progress=progress, stage=args.stage or "")
    pip_index.apply(sources, pip_index.pip_context())  # what `pip install -r` here reads besides the file
    matrix = _load_matrix(args)
    if args.fleet:
        from .fleet.requirements import framework_requirements

        requirements = framework_requirements(sources, matrix)
        return _fleet_answer(args, ", ".join(str(r) for r in requirements), requirements, matrix)
    report = check_sources(sources, check_target(args, sources, matrix), matrix)
    render.emit(report, as_json=args.json, fmt=args.format)
    return report.exit_status(args.strict)


def _fleet_answer(args: argparse.Namespace, label: str, requirements: list[Requirement], matrix: Matrix) -> int:
    """``plan`` / ``check`` with ``--fleet DIR``: the requirements planned once per group of alike nodes."""
    from .fleet.groups import answer
    from .fleet.store import load_fleet
    from .plan import make_plan
    from .render import fleet as render
    from .solve import solve

    machine = [f"--{k.replace('_', '-')}" for k in _MACHINE_FLAGS if getattr(args, k, None)]
    if machine or getattr(args, "verify", False) or args.format != "text":
        given = (machine or ["--verify" if getattr(args, "verify", False) else f"--format {args.format}"])[0]
        raise UserError(f"--fleet answers for the fleet's own nodes: {given} cannot be given with it")
    fleet = load_fleet(args.fleet)
    result = answer(label, fleet.nodes, lambda rt: make_plan(solve(requirements, rt, matrix), rt, matrix))
    render.emit_answer(result, fleet, as_json=args.json)
    return EXIT_OK if result.all_ready else EXIT_PROBLEMS


_MACHINE_FLAGS = ("target", "driver", "cuda", "cudnn", "gpu", "python", "os", "root", "no_detect")


def _cmd_fleet(args: argparse.Namespace) -> int:
    import shlex

    from .fleet.collect import collect
    from .render import fleet as render
    from .render.progress import count_progress

    try:
        command = shlex.split(args.node_command) if args.node_command is not None else None
    except ValueError as exc:
        raise UserError(f"--command {args.node_command!r}: {exc}") from None
    if command == []:
        raise UserError("--command: empty")
    if args.timeout <= 0 or args.parallel < 1:
        raise UserError("--timeout must be above 0 and --parallel at least 1")
    matrix = _load_matrix(args) if args.no_jobs else None
    with count_progress("collecting node profiles", enabled=not args.json, min_items=1) as progress:
        collected = collect(
            args.out,
            partitions=args.partition,
            nodes=args.nodes,
            timeout=args.timeout,
            command=command,
            no_jobs=args.no_jobs,
            parallel=args.parallel,
            matrix=matrix,
            on_progress=progress,
        )
    render.emit_collected(collected, as_json=args.json)
    return EXIT_OK if collected.complete else EXIT_PROBLEMS


def _cmd_explain(args: argparse.Namespace) -> int:
    """Exit 1 both when problems are found and when none is recognised (nothing is 'all good' to report)."""
    from .runtime_flags import start_detection

    if not (args.file and args.file != "-"):  # (a log file may be searched by forked workers: no threads before)
        start_detection(args)
    from .advice.fixes import fixes_for
    from .advice.planned import machine_for, merge_fixes, plan_diagnosis
    from .explain import scan
    from .explain.source import open_input, scan_log_file
    from .render import explain as render
    from .runtime_flags import runtime_for

    matrix = _load_matrix(args)
    from .render.progress import byte_progress

    size = os.path.getsize(args.file) if args.file and args.file != "-" and os.path.isfile(args.file) else 0
    bar = byte_progress(f"reading {args.file}", size, enabled=not args.json and size > PROGRESS_MIN_BYTES)
    with bar as progress:
        found = scan_log_file(args.file, progress) if args.file and args.file != "-" and not args.text else None
        if found is not None:
            source, result = args.file, found
        else:
            with open_input(args.text, args.file, on_progress=progress) as (source, lines):
                result = scan(lines)
    runtime = runtime_for(args, matrix)  # (its programs ran while the text was read)
    for d in result.diagnoses:
        machine = machine_for(d, runtime, matrix)  # with what the log says of the machine that failed
        planned = plan_diagnosis(d, machine, matrix)
        d.plan = planned.record
        d.fixes = merge_fixes(planned.fixes, fixes_for(d, runtime, matrix))
    render.emit(result, source, as_json=args.json)
    return EXIT_PROBLEMS


def _cmd_update(args: argparse.Namespace) -> int:
    from .remote import update_matrix, update_url
    from .render import update as render

    if args.offline:
        raise UserError("'update' fetches from the network; it cannot run with --offline")
    from .render.progress import count_progress

    with count_progress("downloading the matrix", enabled=not args.json, min_items=1) as progress:
        result = update_matrix(update_url(args.url), on_progress=progress)
    render.emit(result, as_json=args.json)
    return EXIT_OK


def _cmd_install(args: argparse.Namespace) -> int:
    from .install import run_steps, steps_from_specs, unchecked_steps
    from .render import install as render

    plan = _plan_from_args(args)
    steps = [s for rp in plan.requirements if rp.options for s in rp.options[0].steps]
    unplanned = [str(rp.result.requirement) for rp in plan.requirements if not rp.result.known]
    steps += steps_from_specs(unplanned)  # packages the matrix does not know: plain pip, unchecked
    steps += unchecked_steps([(line, note) for line, note in plan.notes if not note.startswith("skipped")])
    render.show_steps(steps, dry_run=args.dry_run, as_json=args.json)
    if args.dry_run:
        return EXIT_OK
    runnable = sum(1 for s in steps if s.kind == "pip")
    if runnable and not args.yes:
        if not sys.stdin.isatty():
            raise UserError("refusing to install without confirmation: no terminal to ask on (pass --yes)")
        if not render.ask(f"Run {runnable} pip step(s) with {sys.executable}?"):
            raise UserError("cancelled; nothing was installed")
    outcome = run_steps(
        steps,
        child_stdout=sys.stderr if args.json else None,
        on_start=lambda i, step: render.starting(i, len(steps), step),
    )
    render.finished(outcome, as_json=args.json)
    return EXIT_OK if outcome.ok else EXIT_PROBLEMS


# name -> (help, its arguments, its handler); the handler is looked up when it runs, so that a test may replace it
_Handler = Callable[[argparse.Namespace], int]
_COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], _Handler]] = {
    "detect": (
        "what this machine has: driver, GPUs, CUDA, cuDNN, Python, frameworks, modules",
        _detect_args,
        lambda a: _cmd_detect(a),
    ),
    "explain": ("decode a CUDA / cuDNN / driver error message", _explain_args, lambda a: _cmd_explain(a)),
    "plan": (
        "what a requirement needs, what is missing, and the steps to get there",
        _plan_args,
        lambda a: _cmd_plan(a),
    ),
    "check": ("vet requirements files against a target machine", _check_args, lambda a: _cmd_check(a)),
    "doctor": (
        "installed frameworks checked against what this machine really loads",
        _doctor_args,
        lambda a: _cmd_doctor(a),
    ),
    "matrix": ("rows of the curated compatibility matrix, with their sources", _matrix_args, lambda a: _cmd_matrix(a)),
    "update": ("fetch a newer compatibility matrix into the user cache", _update_args, lambda a: _cmd_update(a)),
    "install": ("carry out a plan (asks first)", _install_args, lambda a: _cmd_install(a)),
    "fleet": (
        "a Slurm cluster's node profiles, read through sinfo and srun, for plan and check --fleet",
        _fleet_args,
        lambda a: _cmd_fleet(a),
    ),
}


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
    if words and words[0] in _COMMANDS:
        args = _parse(command_parser(words[0]), words[1:])
    else:  # no command, or options before it: the whole command line
        parser = build_parser()
        if words and not words[0].startswith("-"):
            from .suggest import nearest_word

            near = nearest_word(words[0], list(_COMMANDS))
            if near:
                parser.error(f"unknown command {words[0]!r} (did you mean {near!r}?)")
        args = _parse(parser, words, whole=True)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    debug = bool(getattr(args, "debug", False)) or os.environ.get("DNNRESOLVE_DEBUG") == "1"
    from .cachedir import set_debug

    set_debug(debug)
    from .render.redacting import redacted_output

    with redacted_output(), stop_signals_raise():
        try:
            return _run(args, debug)
        finally:
            flags = sys.modules.get(f"{__package__}.runtime_flags")
            if flags is not None:  # probes started early that no detection used
                flags.stop_detection()


def _parse(parser: argparse.ArgumentParser, words: list[str], whole: bool = False) -> argparse.Namespace:
    """``parser.parse_args(words)``, an option it does not know answered by the nearest it does (``--drvier (did
    you mean --driver?)``) as the command's own parser would say it, also when ``whole`` (the top-level parser)."""
    args, unknown = parser.parse_known_args(words)
    if unknown:
        from .suggest import unrecognized

        command = str(getattr(args, "command", None) or "")
        owner = command_parser(command) if whole and command in _COMMANDS else parser
        # (argparse keeps the option strings it knows in this attribute, the same from 3.9 to 3.14)
        owner.error(unrecognized(unknown, list(owner._option_string_actions), command if owner is not parser else ""))
    return args


def _run(args: argparse.Namespace, debug: bool) -> int:
    try:
        status: int = args.handler(args)
        return status
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
