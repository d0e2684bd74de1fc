"""``dnnresolve explain``: an error text read, decoded, and answered with fixes for this machine."""

from __future__ import annotations

import argparse
import os

from .common import EXIT_PROBLEMS, matrix_for

PROGRESS_MIN_BYTES = 32 << 20  # smaller logs are read before a bar would be worth drawing


def cmd_explain(args: argparse.Namespace) -> int:
    """Exit 1 both when problems are found and when none is recognised (nothing is 'all good' to report)."""
    from ..runtime_flags import start_detection

    if not (args.file and args.file != "-"):  # (a log file may be searched by forked workers: no threads before)
        start_detection(args)
    from ..advice.fixes import fixes_for
    from ..advice.planned import machine_for, merge_fixes, plan_diagnosis
    from ..explain import scan
    from ..explain.source import open_input, scan_log_file
    from ..render import explain as render
    from ..runtime_flags import runtime_for

    matrix = matrix_for(args)
    from ..render.progress import byte_progress

    size = os.path.getsize(args.file) if args.file and args.file != "-" and os.path.isfile(args.file) else 0
    bar = byte_progress(f"reading {args.file}", size, enabled=not args.json and size > PROGRESS_MIN_BYTES)
    with bar as progress:
        found = scan_log_file(args.file, progress) if args.file and args.file != "-" and not args.text else None
        if found is not None:
            source, result = args.file, found
        else:
            with open_input(args.text, args.file, on_progress=progress) as (source, lines):
                result = scan(lines)
    # (its programs ran while the text was read; the fixes name no index: pip's configuration is not read)
    runtime = runtime_for(args, matrix, pip=False)
    for d in result.diagnoses:
        machine = machine_for(d, runtime, matrix)  # with what the log says of the machine that failed
        planned = plan_diagnosis(d, machine, matrix)
        d.plan = planned.record
        d.fixes = merge_fixes(planned.fixes, fixes_for(d, runtime, matrix))
    render.emit(result, source, as_json=args.json)
    return EXIT_PROBLEMS
