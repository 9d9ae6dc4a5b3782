"""`serve`: an env (or the catalog) over MCP on stdio or streamable HTTP, behind bearer tokens."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cli.arguments import number, whole_number
from cli.common import open_catalog
from cli.errors import UserError


def cmd_serve(args: argparse.Namespace) -> int:
    from serving.http_auth import TOKEN_ENV
    from serving.mcp_server import ServeConfig, serve

    if bool(args.env_id) == bool(args.all):
        raise UserError("name one env to serve, or --all (python cli.py serve ENV_ID | --all)")
    if args.all and (args.state or args.task):
        raise UserError("with --all each session picks its env, state and task: the endpoint's ?env=&state=&task= "
                        "or the reset tool's arguments, not --state/--task")
    door, generated = _serve_door(args)
    if args.transport == "openenv":
        return _serve_openenv(args, door, generated)
    config = ServeConfig(open_catalog(args), None if args.all else args.env_id, args.state, args.task,
                         True if args.trusted else None, **({"door": door} if door is not None else {}),
                         hide_reset=args.hide_reset)
    config.check()

    def ready(url: str) -> None:
        assert door is not None
        access = "no auth" if door.open else f"bearer token required, {len(door.tokens)} configured"
        idle = f"idle sessions closed after {door.idle_timeout:g} s" if door.idle_timeout else "no idle timeout"
        print(f"envforge: serving {args.env_id or 'the catalog'} over MCP at {url}"
              + ("?env=ENV_ID" if args.all else "") + f" ({access}; at most {door.max_sessions} sessions; {idle})",
              file=sys.stderr)
        if generated:
            print(f"envforge: token (generated; choose one with --token or {TOKEN_ENV}): {door.tokens[0]} "
                  f"- send it as the header 'Authorization: Bearer {door.tokens[0]}'", file=sys.stderr)

    serve(config, args.transport, host=args.host, port=args.port, ready=ready)
    return 0


def _serve_openenv(args: argparse.Namespace, door: Any, generated: bool) -> int:
    """`--transport openenv`: OpenEnv's WebSocket protocol at /ws (serving/adapters/openenv.py), the same door.

    Names are checked before OpenEnv (a ~14 s import) is loaded, so bad input is one line at once.
    """
    if args.hide_reset:
        raise UserError("--hide-reset: only with the MCP transports (OpenEnv's reset is its protocol's, not a tool)")
    from serving.mcp_server import ServeConfig

    catalog = open_catalog(args)
    ServeConfig(catalog, None if args.all else args.env_id, args.state, args.task, door=door).check()
    from serving.adapters.openenv import serve

    env_ids = [s.id for s in catalog.list()[0]] if args.all else [args.env_id]

    def ready(url: str) -> None:
        access = "no auth" if door.open else f"bearer token required, {len(door.tokens)} configured"
        print(f"envforge: serving {args.env_id or f'{len(env_ids)} envs'} over OpenEnv at {url}/ws ({access}; at "
              f"most {door.max_sessions} sessions" + ("; reset's env_id picks the env" if args.all else "") + ")",
              file=sys.stderr)
        if generated:
            print(f"envforge: token (generated): {door.tokens[0]}", file=sys.stderr)

    serve(env_ids, host=args.host, port=args.port, door=door, ready=ready, catalog=catalog, task=args.task,
          state=args.state, trusted=True if args.trusted else None)
    return 0


def _serve_door(args: argparse.Namespace) -> tuple[Any, bool]:
    """The HTTP door from --token (else ENVFORGE_SERVE_TOKEN, else one generated), --no-auth and the limits.

    Returns (door or None for stdio, whether the token was generated and must be shown).
    """
    import os

    from serving.http_auth import (
        DEFAULT_IDLE_TIMEOUT,
        TOKEN_ENV,
        HttpDoor,
        default_max_sessions,
        new_token,
        parse_tokens,
    )

    http_only = {"--token": args.token, "--no-auth": args.no_auth, "--max-sessions": args.max_sessions,
                 "--idle-timeout": args.idle_timeout}
    if args.transport == "stdio":
        given = [flag for flag, value in http_only.items() if value not in (None, False)]
        if given:
            raise UserError(f"{', '.join(given)}: only with --transport http (stdio has one client, the process "
                            f"that started the server)")
        return None, False
    if args.no_auth and args.token:
        raise UserError("--no-auth and --token exclude each other")
    tokens = () if args.no_auth else tuple(args.token or ()) or parse_tokens(os.environ.get(TOKEN_ENV, ""))
    generated = not args.no_auth and not tokens
    door = HttpDoor((new_token(),) if generated else tokens,
                    default_max_sessions() if args.max_sessions is None else args.max_sessions,
                    DEFAULT_IDLE_TIMEOUT if args.idle_timeout is None else args.idle_timeout)
    return door, generated


def add_parser(commands: Any, common: argparse.ArgumentParser) -> None:
    serving = commands.add_parser(
        "serve", parents=[common], help="serve an env (or the catalog) to agents over MCP, one instance per session",
        description="Serve ENV_ID over MCP (the official SDK) on stdio or streamable HTTP: each MCP session gets its "
                    "own env instance with the env's tools, a reset tool and the task instruction as a prompt; tool "
                    "errors come back as MCP tool errors. With --all every catalog env is served and each session "
                    "picks one (HTTP: /mcp?env=ENV_ID[&state=S&task=T]; any transport: reset's env argument). "
                    "Reference envs run in the server's process, other envs in sandbox workers. HTTP requests "
                    "need 'Authorization: Bearer TOKEN' (--token, else ENVFORGE_SERVE_TOKEN, else a generated token "
                    "printed at start); a session answers only the token that created it. On the sessionless MCP "
                    "protocol (2026-07-28) over HTTP, reset returns an episode handle that every tool takes (argument "
                    "'episode', or /mcp?episode=HANDLE), bound to the token, capped and expired like sessions.")
    serving.add_argument("env_id", metavar="ENV_ID", nargs="?", help="environment id, e.g. library")
    serving.add_argument("--all", action="store_true", help="serve every catalog env, chosen per session")
    serving.add_argument("--state", metavar="NAME", help="initial state (default: the task's, else the env's default)")
    serving.add_argument("--task", metavar="TASK_ID", help="the task each session starts on (its instruction is the "
                         "'task' prompt; the check's verdict is in each result's _meta)")
    serving.add_argument("--transport", choices=("stdio", "http", "openenv"), default="stdio",
                         help="stdio (default; one session), streamable HTTP (many sessions) at /mcp, or OpenEnv's "
                              "WebSocket protocol at /ws (reset/step/state; pip install 'envforge[openenv]'), both "
                              "behind the same tokens and limits")
    serving.add_argument("--host", default="127.0.0.1", help="HTTP: address to listen on (default: 127.0.0.1)")
    serving.add_argument("--port", type=whole_number(0), default=8000, help="HTTP: port, 0 for any free one (default: 8000)")
    serving.add_argument("--token", action="append", metavar="TOKEN", help="HTTP: a bearer token clients must send "
                         "(repeatable: one per client, each sees only its own sessions; other users see it in ps, so "
                         "prefer ENVFORGE_SERVE_TOKEN, comma-separated; default: one generated and printed)")
    serving.add_argument("--no-auth", action="store_true", help="HTTP: no token (only with a loopback --host: "
                         "anyone on this machine can then drive the sessions)")
    serving.add_argument("--max-sessions", type=whole_number(1), metavar="N", help="HTTP: sessions open at once; more are "
                         "refused with HTTP 503 (default: MemAvailable / 100 MiB, one sandboxed session each); "
                         "the same cap holds for the sessionless protocol's episodes")
    serving.add_argument("--idle-timeout", type=number(0, inclusive=True), metavar="SECONDS",
                         help="HTTP: close a session (or a sessionless episode) after this long without a request, "
                              "its env closed and its slot freed (default: 900; 0: never)")
    serving.add_argument("--hide-reset", action="store_true", help="leave the reset tool out of the tool list "
                         "the model sees (it stays callable, for the harness; so does the never-listed check tool, "
                         "the episode's reward and verdict as text)")
    serving.add_argument("--trusted", action="store_true", help="run every env's code in the server's process, "
                         "outside the sandbox (only for code you vouch for)")
    serving.set_defaults(handler=cmd_serve)
