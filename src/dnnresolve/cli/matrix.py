"""``dnnresolve matrix`` (rows of the matrix, or its HTML page) and ``dnnresolve update`` (a newer matrix)."""

from __future__ import annotations

import argparse

from ..errors import UserError
from .common import EXIT_OK, EXIT_PROBLEMS, matrix_for, write_output


def cmd_matrix(args: argparse.Namespace) -> int:
    from ..query import matrix_query
    from ..render import matrix as render

    if args.format == "html" and (args.spec or args.cuda or args.cudnn or args.os or args.json):
        raise UserError("--format html writes the whole matrix: filter it in the page (no SPEC, --cuda, --cudnn, --os)")
    matrix = matrix_for(args)
    if args.format == "html":
        from ..render.matrix_html import to_html

        write_output(to_html(matrix), args.output)
        return EXIT_OK
    result = matrix_query(matrix, args.spec, cuda=args.cuda, cudnn=args.cudnn, os_name=args.os)
    render.emit(result, as_json=args.json, verbose=args.verbose)
    return EXIT_OK if result.found else EXIT_PROBLEMS


def cmd_update(args: argparse.Namespace) -> int:
    from ..remote import update_matrix, update_url
    from ..render import update as render

    if args.offline:
        raise UserError("'update' fetches from the network; it cannot run with --offline")
    from ..render.progress import count_progress

    with count_progress("downloading the matrix", enabled=not args.json, min_items=1) as progress:
        result = update_matrix(update_url(args.url), on_progress=progress)
    render.emit(result, as_json=args.json)
    return EXIT_OK
