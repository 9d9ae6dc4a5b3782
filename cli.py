"""envforge command line: `python cli.py --help`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from catalog.delta import DeltaOp
from catalog.jsonable import canonical_json
from catalog.runtime import EnvLoadError, StateError
from catalog.store import ENV_VAR, Catalog, CatalogError
from catalog.tasks import CheckError

PENDING = {
    "synthesize": ("make new environments with the LangGraph pipeline (offline by default)", 5),
    "audit-sim": ("measure a simulator model against execution (FM/CM per stratum)", 6),
    "verify": ("run the quality gate on catalog environments (sandbox, property tests)", 4),
    "constraints": ("print libcst constraint specs; --completeness measures them", 3),
    "bench": ("export/import verified benchmark samples (EnvSimBench format, JSONL)", 6),
    "import": ("turn an external class-based environment into a catalog env", 3),
    "models": ("list the model registry and whether each endpoint answers", 5),
}


class UserError(Exception):
    """An error caused by input; printed without a traceback, exit status 1."""


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True))


def _catalog(args: argparse.Namespace) -> Catalog:
    return Catalog(args.catalog)


def cmd_catalog_list(args: argparse.Namespace) -> int:
    summaries, problems = _catalog(args).list()
    for problem in problems:
        print(f"warning: skipped {problem.path}: {problem.reason}", file=sys.stderr)
    if args.json:
        _print_json([s.to_dict() for s in summaries])
        return 0
    if not summaries:
        print("No environments.")
        return 0
    width = max(len(s.id) for s in summaries)
    print(f"{'ID':<{width}}  KIND   TOOLS  STATES  NAME")
    for s in summaries:
        print(f"{s.id:<{width}}  {s.kind:<5}  {s.tools:>5}  {s.states:>6}  {s.name}{'  (reference)' if s.reference else ''}")
    return 0


def cmd_catalog_show(args: argparse.Namespace) -> int:
    handle = _catalog(args).get(args.env_id)
    manifest = handle.manifest
    tasks = handle.tasks()
    if args.json:
        data = manifest.model_dump(mode="json")
        data["path"] = str(handle.path)
        data["tasks"] = [t.model_dump(mode="json", exclude_none=True) for t in tasks]
        _print_json(data)
        return 0
    print(f"{manifest.name} [{manifest.id}] - {manifest.kind} env, topic {manifest.topic or '-'}")
    print(f"  {manifest.description}")
    print(f"  folder: {handle.path}")
    print(f"  provenance: {manifest.provenance.backend}" + (f" / {manifest.provenance.model}" if manifest.provenance.model else ""))
    if manifest.rules:
        print("Rules:")
        for rule in manifest.rules:
            print(f"  - {rule}")
    print(f"Tools ({len(manifest.tools)}):")
    for tool in manifest.tools:
        props = tool.parameters.get("properties", {})
        required = set(tool.parameters.get("required", []))
        params = ", ".join(f"{n}{'' if n in required else '?'}: {p.get('type', 'any')}" for n, p in props.items())
        kind = tool.kind.value if tool.kind else "?"
        print(f"  {tool.name}({params}) [{kind}] - {tool.description.splitlines()[0] if tool.description else ''}")
    print(f"States: {', '.join(manifest.states) or '-'}")
    print(f"Tasks ({len(tasks)}):")
    for task in tasks:
        print(f"  {task.id} [{task.state}]: {task.instruction}")
    return 0


def _format_op(op: DeltaOp) -> str:
    path = json.dumps(list(op.path), ensure_ascii=False)
    return f"  {op.op:<6} {path}" + ("" if op.op == "delete" else f" = {canonical_json(op.value)}")


def cmd_catalog_run(args: argparse.Namespace) -> int:
    handle = _catalog(args).get(args.env_id)
    try:
        arguments = json.loads(args.args)
    except json.JSONDecodeError as exc:
        raise UserError(f"--args is not valid JSON ({exc}); example: --args '{{\"book_id\": \"B001\"}}'") from exc
    if not isinstance(arguments, dict):
        raise UserError("--args must be a JSON object of argument names to values")
    state_name = args.state or (handle.manifest.states[0] if "default" not in handle.manifest.states else "default")
    runtime = handle.runtime()
    runtime.reset(handle.state(state_name))
    result = runtime.call({"name": args.tool, "arguments": arguments}, snapshot=args.show_state)
    if args.json:
        out: dict[str, Any] = {"env": handle.id, "state": state_name, "action": {"name": args.tool, "arguments": arguments},
                               "outcome": result.outcome.value, "observation": result.observation,
                               "delta": [op.to_dict() for op in result.delta]}
        if args.show_state:
            out["next_state"] = result.state
        _print_json(out)
    else:
        print(f"env {handle.id}, state {state_name}: {args.tool}({canonical_json(arguments)})")
        print(f"outcome: {result.outcome.value}")
        print(f"observation: {json.dumps(result.observation, ensure_ascii=False, indent=2, sort_keys=True)}")
        print(f"delta ({len(result.delta)} ops):")
        for op in result.delta:
            print(_format_op(op))
        if args.show_state:
            print("next state:")
            _print_json(result.state)
    return 0 if result.outcome.value in ("success", "failure") else 3


def cmd_pending(args: argparse.Namespace) -> int:
    what, issue = PENDING[args.command]
    print(f"envforge {args.command} ({what}) is not built yet; it is tracked in issue {issue}. "
          f"Working now: `python cli.py catalog list|show|run`.", file=sys.stderr)
    return 2


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--catalog", metavar="DIR", default=argparse.SUPPRESS,
                        help=f"catalog folder (default: ${ENV_VAR}, else ./envforge-catalog); "
                             "the reference envs are always included")
    parser = argparse.ArgumentParser(
        prog="python cli.py", parents=[common],
        description="envforge: synthesize executable tool-use environments and verify LLM simulation of them.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

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
    run.set_defaults(handler=cmd_catalog_run)

    for name, (what, issue) in PENDING.items():
        pending = commands.add_parser(name, parents=[common], help=f"{what} [not built yet: issue {issue}]")
        pending.set_defaults(handler=cmd_pending)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown and args.command not in PENDING:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    if not hasattr(args, "catalog"):
        args.catalog = None
    try:
        return int(args.handler(args))
    except (UserError, CatalogError, StateError, EnvLoadError, CheckError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
