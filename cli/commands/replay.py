"""`replay`: a file of tool calls run in order on one env."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from cli.common import open_catalog
from cli.errors import UserError
from cli.output import print_json, print_lines


def cmd_replay(args: argparse.Namespace) -> int:
    from catalog.calls import CallFileError, read_calls
    from verifier.replay import ReplayError, render_replay, replay

    handle = open_catalog(args).get(args.env_id)
    try:
        calls = read_calls(Path(args.calls))
    except CallFileError as exc:
        raise UserError(str(exc)) from None
    try:
        result = replay(handle, args.state, calls, trusted=args.trusted, final_state=args.final_state)
    except ReplayError as exc:
        if exc.partial is not None and exc.partial.steps and args.json:
            print_json(exc.partial.model_dump(mode="json"))
        elif exc.partial is not None and exc.partial.steps:
            print_lines(render_replay(exc.partial, final_state=False))
        raise UserError(str(exc)) from None
    if args.json:
        print_json(result.model_dump(mode="json"))
    else:
        print_lines(render_replay(result, final_state=args.final_state))
    return 0 if result.clean else 3


def add_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    """`replay ENV_ID --calls FILE`."""
    replaying = commands.add_parser(
        "replay", parents=[common], help="run a file of tool calls (JSONL or an OpenAI-messages trajectory) in order",
        description="Reset ENV_ID to one initial state and run the calls in FILE in order on it, in the sandbox; print "
                    "per call its outcome, observation and state delta. FILE is JSONL of {\"name\", \"arguments\"} "
                    "or an OpenAI-messages trajectory (a JSON list of messages, JSONL of messages, or "
                    "{\"messages\": [...]}: the assistant messages' tool_calls). Exit status 0 when every call "
                    "succeeded or failed by a rule, 3 when one crashed or was invalid, 1 for bad input.")
    replaying.add_argument("env_id", metavar="ENV_ID", help="environment id, e.g. library")
    replaying.add_argument("--calls", required=True, metavar="FILE", help="the calls to run (format detected)")
    replaying.add_argument("--state", metavar="NAME|FILE", help="initial state: one of the env's states or a state JSON "
                           "file (default: 'default', else the first)")
    replaying.add_argument("--final-state", action="store_true", help="also print the state after the last call")
    replaying.add_argument("--json", action="store_true", help="print the replay as JSON")
    replaying.add_argument("--trusted", action="store_true", help="run the env's code in this process, outside the "
                           "sandbox (reference envs, or code you vouch for)")
    replaying.set_defaults(handler=cmd_replay)
