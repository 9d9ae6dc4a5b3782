"""`catalog list|show|run|search|import`: the catalog's envs, one tool call on one of them."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from cli.arguments import POSITIVE
from cli.commands.import_env import IMPORT_DESCRIPTION, add_import_arguments
from cli.common import open_catalog
from cli.errors import UserError
from cli.output import print_json, print_lines


def cmd_catalog_list(args: argparse.Namespace) -> int:
    from catalog.render import render_env_list

    summaries, problems = open_catalog(args).list()
    for problem in problems:
        print(f"warning: skipped {problem.path}: {problem.reason}", file=sys.stderr)
    if args.json:
        print_json([s.model_dump(mode="json") for s in summaries])
    else:
        print_lines(render_env_list(summaries))
    return 0


def cmd_catalog_show(args: argparse.Namespace) -> int:
    from catalog.render import env_document, render_env

    handle = open_catalog(args).get(args.env_id)
    if args.json:
        print_json(env_document(handle))
    else:
        print_lines(render_env(handle))
    return 0


def cmd_catalog_run(args: argparse.Namespace) -> int:
    from catalog.render import call_document, render_call
    from sandbox.session import SandboxRuntime, open_runtime

    handle = open_catalog(args).get(args.env_id)
    try:
        arguments = json.loads(args.args)
    except json.JSONDecodeError as exc:
        raise UserError(f"--args is not valid JSON ({exc}); example: --args '{{\"book_id\": \"B001\"}}'") from exc
    if not isinstance(arguments, dict):
        raise UserError("--args must be a JSON object of argument names to values")
    state_name = args.state or handle.default_state()
    action = {"name": args.tool, "arguments": arguments}
    runtime = open_runtime(handle, trusted=args.trusted)
    try:
        runtime.reset(handle.state(state_name))
        result = runtime.call(action, snapshot=args.show_state)
    except RuntimeError as exc:  # the sandbox could not load or reset the env
        raise UserError(f"{handle.id}: {exc}") from None
    finally:
        if isinstance(runtime, SandboxRuntime):
            runtime.close()
    if args.json:
        print_json(call_document(handle.id, state_name, action, result, show_state=args.show_state))
    else:
        print_lines(render_call(handle.id, state_name, action, result, show_state=args.show_state))
    return 0 if result.outcome.value in ("success", "failure") else 3


def cmd_catalog_search(args: argparse.Namespace) -> int:
    from catalog.render import render_search_hits
    from catalog.search.index import search_catalog

    hits = search_catalog(open_catalog(args), args.query, args.k)
    if args.json:
        print_json(hits)
    else:
        print_lines(render_search_hits(hits))
    return 0


def add_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    """`catalog` and its actions (its `import` is the `import` command's)."""
    catalog = commands.add_parser("catalog", parents=[common], help="list, show and run catalog environments")
    actions = catalog.add_subparsers(dest="catalog_command", metavar="ACTION", required=True)
    listing = actions.add_parser("list", parents=[common], help="list environments (never imports their code)")
    listing.add_argument("--json", action="store_true", help="print a JSON array (id, name, kind, tools, states, ...)")
    listing.set_defaults(handler=cmd_catalog_list)
    show = actions.add_parser("show", parents=[common], help="show one environment: rules, tools, states, tasks")
    show.add_argument("env_id", metavar="ENV_ID", help="environment id, e.g. library")
    show.add_argument("--json", action="store_true", help="print the manifest and tasks as JSON")
    show.set_defaults(handler=cmd_catalog_show)
    run = actions.add_parser("run", parents=[common], help="execute one tool call and print observation and delta",
                             description="Reset ENV_ID to an initial state, execute one call, print the observation "
                                         "and the state delta. Exit status 0 for success or a rule failure, 3 for a "
                                         "crash or an invalid call.")
    run.add_argument("env_id", metavar="ENV_ID", help="environment id, e.g. library")
    run.add_argument("tool", metavar="TOOL", help="tool name, e.g. borrow_book")
    run.add_argument("--args", default="{}", metavar="JSON",
                     help='arguments as a JSON object (default: {}), e.g. \'{"member_id": "M002", "book_id": "B010"}\'')
    run.add_argument("--state", metavar="NAME", help="initial state (default: 'default', else the first)")
    run.add_argument("--show-state", action="store_true", help="also print the full state after the call")
    run.add_argument("--json", action="store_true", help="print the result as JSON")
    run.add_argument("--trusted", action="store_true", help="run the env's code in this process, outside the sandbox "
                     "(only for code you vouch for; the shipped reference envs always run in-process)")
    run.set_defaults(handler=cmd_catalog_run)
    search = actions.add_parser("search", parents=[common],
                                help="environments that match a description (embedding + BM25)")
    search.add_argument("query", metavar="QUERY", help='what you are looking for, e.g. "hotel room bookings"')
    search.add_argument("--k", type=POSITIVE, default=5, help="how many results (default: 5)")
    search.add_argument("--json", action="store_true", help="print JSON")
    search.set_defaults(handler=cmd_catalog_search)

    importing_env = actions.add_parser("import", parents=[common], help="same as `python cli.py import`",
                                       description=IMPORT_DESCRIPTION)
    add_import_arguments(importing_env)
